#!/usr/bin/python

DOCUMENTATION = r"""
module: corral_node
short_description: Enrol a node in Corral with the facts given, or remove one enrolled by mistake
version_added: 1.0.0
description:
  - Makes sure a node is enrolled in Corral with the facts given (hostname, place, hardware,
    BMC, interfaces, labels), through Corral's REST API (C(/api/v1/nodes/)).
  - The node is found by its O(serial). A node that does not exist is enrolled with every fact
    at once; one that does is compared field by field and only what differs is sent (a
    C(PATCH) naming the node as it was read, so a change made meanwhile by someone else is
    refused rather than overwritten). A second run with the same facts changes nothing.
  - An option left out is left as it is. O(labels) and O(interfaces), when given, are the
    whole set (as in Corral's fleet files); labels and interfaces not listed go.
  - The BMC password is write-only in Corral (never read back), so it cannot be compared; see
    O(update_password).
  - O(state=absent) deletes a node enrolled by mistake (one with no history); Corral refuses to
    delete any other (decommission it with M(corral.fleet.corral_action) instead).
  - Creating needs the C(integration) role where the node goes; deleting needs C(admin), and so
    does removing an interface.
author:
  - Corral maintainers (!UNKNOWN)
extends_documentation_fragment:
  - corral.fleet.corral
  - corral.fleet.corral.action_group
attributes:
  check_mode:
    description: Reports what would change without changing it.
    support: full
  diff_mode:
    description: Shows the node's facts before and after (a BMC password only as V((hidden))
      or V((changed))).
    support: full
options:
  serial:
    description:
      - The node's serial number, its key. Required with O(state=present).
    type: str
  hostname:
    description:
      - The node's hostname (lower-case letters, digits and hyphens). Required to enrol a new node.
      - With O(state=absent) and no O(serial), the node to delete is found by its hostname.
    type: str
  state:
    description:
      - V(present) enrols the node or brings it to the facts given; V(absent) deletes it.
    type: str
    choices: [present, absent]
    default: present
  site:
    description:
      - The slug of the site of O(rack). Given with O(rack).
    type: str
  rack:
    description:
      - The rack's name in O(site). Moving a node with a BMC password to another site needs the
        password again (O(bmc.password)).
    type: str
  unit:
    description:
      - The node's lowest rack unit (U). Corral refuses a unit outside the rack or taken by
        another node.
    type: int
  u_height:
    description:
      - How many units the node takes.
    type: int
  model:
    description:
      - The server model, for example V(HGX H100 8-GPU).
    type: str
  gpu_model:
    description:
      - The GPU model, for example V(H100-SXM); inspection checks the GPUs found against it.
    type: str
  gpu_count:
    description:
      - How many GPUs the node has.
    type: int
  role:
    description:
      - The node's role.
    type: str
    choices: [compute, storage, head]
  fabric:
    description:
      - The node's fabric, overriding its rack's. An empty string clears it.
    type: str
  labels:
    description:
      - The node's labels, the whole set (an empty list removes them all).
    type: list
    elements: str
  bmc:
    description:
      - The node's BMC. Suboptions left out are left as they are.
    type: dict
    suboptions:
      protocol:
        description:
          - How Corral talks to the BMC.
        type: str
        choices: [redfish, ipmi]
      address:
        description:
          - The BMC's host, IP or URL (V(https://10.20.0.11), V(10.20.0.11:8443)).
        type: str
      port:
        description:
          - The BMC's port, when not the protocol's own.
        type: int
      username:
        description:
          - The BMC user.
        type: str
      password:
        description:
          - The BMC password. Never shown, logged or returned.
          - Corral asks for it again when the BMC's address, port, protocol, user, system or TLS
            check changes, or when the node moves to another site; it is then sent with that change.
        type: str
      verify_tls:
        description:
          - Whether Corral checks the BMC's HTTPS certificate.
        type: bool
      system_id:
        description:
          - The Redfish system id; empty for the BMC's only system.
        type: str
      gpu_system_id:
        description:
          - The Redfish system that holds the node's GPUs (a GB200 tray's V(HGX_Baseboard_0)).
        type: str
  update_password:
    description:
      - V(on_create) sends O(bmc.password) when the node or its BMC is created, when Corral holds no
        password for it, and with a change that needs it again (above), so a run with the same facts
        changes nothing.
      - V(always) sends it on every run, and the task then always reports a change.
    type: str
    choices: [always, on_create]
    default: on_create
  interfaces:
    description:
      - The node's network interfaces, the whole set, matched by MAC (any notation). Interfaces not
        listed are removed. Suboptions left out are left as they are.
    type: list
    elements: dict
    suboptions:
      mac:
        description:
          - The interface's MAC address.
        type: str
        required: true
      name:
        description:
          - The interface's name (V(eno1)).
        type: str
      ip:
        description:
          - Its IPv4 address; the boot interface's is the address Ansible reaches the node at.
        type: str
      boot:
        description:
          - Whether the node network-boots from it (one interface per node).
        type: bool
      fabric_rail:
        description:
          - The rail of the GPU fabric it is cabled to.
        type: int
seealso:
  - module: corral.fleet.corral_action
  - plugin: corral.fleet.corral
    plugin_type: inventory
"""

EXAMPLES = r"""
- name: Enrol gx-001 as the fleet files would
  corral.fleet.corral_node:
    url: https://corral.example.net
    token: "{{ corral_token }}"
    serial: SN-0001
    hostname: gx-001
    site: dc1
    rack: r01
    unit: 1
    u_height: 4
    model: HGX H100 8-GPU
    gpu_model: H100-SXM
    gpu_count: 8
    labels: [pool-a]
    bmc:
      protocol: redfish
      address: https://10.20.0.11
      username: admin
      password: "{{ vault_bmc_password }}"
    interfaces:
      - {mac: "0c:42:a1:00:00:01", name: eno1, boot: true, ip: 10.30.0.11}
  delegate_to: localhost

- name: Move it to U9 (CORRAL_URL and CORRAL_TOKEN from the environment)
  corral.fleet.corral_node:
    serial: SN-0001
    unit: 9
  delegate_to: localhost

- name: Remove a node enrolled by mistake
  corral.fleet.corral_node:
    serial: SN-0099
    state: absent
  delegate_to: localhost
"""

RETURN = r"""
node:
  description:
    - The node as Corral's API shows it after the task (C(GET /api/v1/nodes/{id}/)); never a
      BMC password.
    - Absent in check mode for a node not yet enrolled, and after a delete.
  returned: success
  type: dict
  sample:
    id: 42
    hostname: gx-001
    serial: SN-0001
    site: dc1
    rack: 3
    rack_unit: 1
    state: enrolled
    labels: [pool-a]
    bmc: {protocol: redfish, address: "https://10.20.0.11", username: admin, has_password: true}
changed_fields:
  description: The facts that were (or in check mode would be) written; a password as
    V(bmc.password).
  returned: always
  type: list
  elements: str
  sample: [rack_unit, bmc.address, bmc.password]
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.corral.fleet.plugins.module_utils.corral import (  # noqa: E402
    ApiError,
    CorralError,
    client_of,
    corral_argument_spec,
    fail,
)
from ansible_collections.corral.fleet.plugins.module_utils.node_plan import (  # noqa: E402
    NODE_OPTIONS,
    create_body,
    plan_update,
    view,
    view_after,
)


def argument_spec():
    spec = corral_argument_spec()
    spec.update(NODE_OPTIONS)
    return spec


def find(client, params):
    """The node with this serial (else, for a delete, this hostname), or None."""
    for key in ("serial", "hostname"):
        wanted = params.get(key)
        if not wanted:
            continue
        for node in client.pages("nodes/", {"q": wanted}):
            if node.get(key) == wanted:
                return node
        return None
    return None


def rack_of(client, site, name):
    """(id, "site/name") of rack `name` in site `site`."""
    racks = [r for r in client.pages("racks/", {"site": site, "name": name}) if r["name"] == name]
    if len(racks) != 1:
        raise CorralError(f"No rack {name!r} in site {site!r} (none that this token can read).")
    return racks[0]["id"], f"{site}/{name}"


def rack_label(client, node):
    """ "site/name" of the node's rack as it is now (for the diff); None for no rack."""
    if not node.get("rack"):
        return None
    rack = client.get(f"racks/{node['rack']}/")
    return f"{rack.get('site_slug')}/{rack.get('name')}"


def absent(module, client, node):
    if node is None:
        module.exit_json(changed=False, changed_fields=[])
    if not module.check_mode:
        client.delete(f"nodes/{node['id']}/")
    diff = {"before": view(node), "after": {}}
    module.exit_json(changed=True, changed_fields=["state"], diff=diff)


def present(module, client, found):
    p = module.params
    rack_id, rack_name = rack_of(client, p["site"], p["rack"]) if p["rack"] else (None, None)
    if found is None:
        body = create_body(p, rack_id)
        names = sorted(k for k in body if k != "bmc") + [f"bmc.{k}" for k in body.get("bmc", {})]
        node = None if module.check_mode else client.post("nodes/", body)
        after = view(dict(body, site=p["site"], bmc=None), rack_name)
        if body.get("bmc"):
            after["bmc"] = {k: v for k, v in body["bmc"].items() if k != "password"}
            after["bmc"]["password"] = "(changed)" if "password" in body["bmc"] else ""
        result = {"changed": True, "changed_fields": names, "diff": {"before": {}, "after": after}}
        if node is not None:
            result["node"] = node
        module.exit_json(**result)
    for attempt in (1, 2):
        node, etag = client.node(found["id"])
        plan = plan_update(node, p, rack_id)
        if not plan["names"]:
            module.exit_json(changed=False, changed_fields=[], node=node)
        before = view(node, rack_label(client, node) if module._diff else None)
        diff = {"before": before, "after": view_after(node, before, plan, rack_name, p["site"])}
        if module.check_mode:
            module.exit_json(changed=True, changed_fields=plan["names"], node=node, diff=diff)
        try:
            write(client, node, etag, plan)
        except ApiError as exc:
            if exc.status == 412 and attempt == 1:  # changed since read (a BMC poll): again
                continue
            raise
        node = client.node(node["id"])[0]
        module.exit_json(changed=True, changed_fields=plan["names"], node=node, diff=diff)


def write(client, node, etag, plan):
    """The node's fields and BMC in one PATCH (refused if the node changed since it was
    read), then its interfaces: deletes, updates (boot flags cleared first), creates."""
    if plan["patch"]:
        client.patch(f"nodes/{node['id']}/", plan["patch"], etag=etag)
    deletes, updates, creates = plan["interfaces"]
    for nic_id in deletes:
        client.delete(f"interfaces/{nic_id}/")
    for nic_id, changes in updates:
        client.patch(f"interfaces/{nic_id}/", changes)
    for body in creates:
        client.post("interfaces/", dict(body, node=node["id"]))


def main():
    module = AnsibleModule(
        argument_spec=argument_spec(),
        supports_check_mode=True,
        required_together=[("site", "rack")],
        required_one_of=[("serial", "hostname")],
        required_if=[("state", "present", ("serial",))],
    )
    client = client_of(module)
    try:
        found = find(client, module.params)
        if module.params["state"] == "absent":
            absent(module, client, found)
        present(module, client, found)
    except CorralError as exc:
        fail(module, exc)


if __name__ == "__main__":
    main()
