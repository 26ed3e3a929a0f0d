#!/usr/bin/python

DOCUMENTATION = r"""
module: corral_rma
short_description: Bring a Corral RMA case to a status and set its fields
version_added: 1.0.0
description:
  - Moves an RMA case through Corral's workflow
    (C(POST /api/v1/rma-cases/{id}/transitions/{status}/)) and sets its fields
    (C(PATCH /api/v1/rma-cases/{id}/)), namely priority, assignee, vendor, the vendor's case
    number, the ticket and its URL, the suspected component.
  - A case is opened by Corral when a node enters RMA (the gates convict it, or
    M(corral.fleet.corral_action) runs V(rma)); this module does not open one.
  - The case is O(case), or the open case of O(node) (a node has at most one); with none open, the
    node's latest case (so a second run after closing changes nothing).
  - Idempotent. A case already in O(status) is not moved; fields already as given are not sent.
    Fields are set first, then the case is moved.
  - The workflow (docs/rma.md) moves a case one step at a time, C(open) -> C(triaged) ->
    C(with_vendor) -> C(awaiting_parts) -> C(parts_replaced), C(parts_replaced) also from
    C(triaged) and C(with_vendor), and C(closed) from any; a status not reachable in one step from
    where the case is fails the task with the statuses allowed now (run one task per step).
  - Closing needs O(resolution). V(repaired) and V(no_fault_found) send the node back through the
    loop (a recycle starts), V(replaced_node) decommissions it, V(cancelled) leaves it as it is.
  - Needs the C(technician) role (or C(integration), C(admin)) where the node is.
author:
  - Corral maintainers (!UNKNOWN)
extends_documentation_fragment:
  - corral.fleet.corral
  - corral.fleet.corral.action_group
attributes:
  check_mode:
    description: Says what would change, and fails as the real run would on a status not
      allowed now.
    support: full
  diff_mode:
    description: Shows the case's status and fields before and after.
    support: full
options:
  case:
    description:
      - The case's id. One of O(case) and O(node) is required.
    type: int
  node:
    description:
      - The hostname of the node whose case it is.
    type: str
  status:
    description:
      - The status to bring the case to. Left out, the case stays where it is.
    type: str
    choices: [triaged, with_vendor, awaiting_parts, parts_replaced, closed]
  resolution:
    description:
      - How the case ends; required with O(status=closed), taken by nothing else.
    type: str
    choices: [repaired, no_fault_found, replaced_node, cancelled]
  note:
    description:
      - A note recorded with the transition, in the case's history.
    type: str
    default: ""
  priority:
    description:
      - The case's priority; a new one moves its SLA.
    type: str
    choices: [p1, p2, p3, p4]
  assignee:
    description:
      - The username of the person working the case (one who may, with a technician, integration or
        admin role). An empty string unassigns.
    type: str
  vendor:
    description:
      - The vendor the part goes to.
    type: str
  vendor_case:
    description:
      - The vendor's case number.
    type: str
  ticket:
    description:
      - The id of the ticket in your ticketing system (unique).
    type: str
  ticket_url:
    description:
      - The ticket's address.
    type: str
  suspected_component:
    description:
      - The part suspected, with keys among C(name), C(serial), C(pci_address), C(uuid),
        C(model), C(slot).
    type: dict
seealso:
  - module: corral.fleet.corral_action
"""

EXAMPLES = r"""
- name: Triage gx-001's case and hand it to the vendor's queue
  corral.fleet.corral_rma:
    node: gx-001
    status: triaged
    note: ECC confirmed on GPU 3
    priority: p2
    assignee: tina
    vendor: dell
    ticket: INC-9
  delegate_to: localhost

- name: The vendor took it
  corral.fleet.corral_rma:
    node: gx-001
    status: with_vendor
    vendor_case: SR-1234
  delegate_to: localhost

- name: Close it; the node goes back through inspection, deploy and the gates
  corral.fleet.corral_rma:
    case: 17
    status: closed
    resolution: repaired
    note: GPU 3 swapped
  delegate_to: localhost
"""

RETURN = r"""
case:
  description: The case as Corral's API shows it after the task (as it was, in check mode).
  returned: success
  type: dict
  sample:
    id: 17
    node: 42
    node_hostname: gx-001
    status: triaged
    resolution: ""
    allowed: [with_vendor, parts_replaced, closed]
    priority: p2
    assignee: tina
    vendor: dell
    ticket: INC-9
changed_fields:
  description: The fields set (or in check mode to be set), and V(status) when the case was moved.
  returned: always
  type: list
  elements: str
  sample: [priority, status]
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.corral.fleet.plugins.module_utils.corral import (  # noqa: E402
    CorralError,
    client_of,
    corral_argument_spec,
    fail,
)

FIELDS = ("priority", "assignee", "vendor", "vendor_case", "ticket", "ticket_url")
FIELDS += ("suspected_component",)


def argument_spec():
    spec = corral_argument_spec()
    spec.update(
        case={"type": "int"},
        node={"type": "str"},
        status={
            "type": "str",
            "choices": ["triaged", "with_vendor", "awaiting_parts", "parts_replaced", "closed"],
        },
        resolution={
            "type": "str",
            "choices": ["repaired", "no_fault_found", "replaced_node", "cancelled"],
        },
        note={"type": "str", "default": ""},
        priority={"type": "str", "choices": ["p1", "p2", "p3", "p4"]},
        assignee={"type": "str"},
        vendor={"type": "str"},
        vendor_case={"type": "str"},
        ticket={"type": "str"},
        ticket_url={"type": "str"},
        suspected_component={"type": "dict"},
    )
    return spec


def find(client, params):
    """(case, etag): the case named, or the node's open one, or its latest."""
    if params["case"] is not None:
        case_id = params["case"]
    else:
        cases = list(client.pages("rma-cases/", {"node": params["node"], "ordering": "-opened"}))
        if not cases:
            raise CorralError(
                f"No RMA case for node {params['node']!r} (none that this token can read); "
                "a case is opened by the node's rma action."
            )
        still_open = [c for c in cases if c.get("status") != "closed"]
        case_id = (still_open or cases)[0]["id"]
    data, headers = client.call("GET", f"rma-cases/{case_id}/")
    return data, next((v for k, v in headers.items() if k.lower() == "etag"), None)


def field_changes(case, params):
    changes = {}
    for key in FIELDS:
        wanted = params.get(key)
        if wanted is None:
            continue
        have = case.get(key)
        if key == "assignee":
            wanted = wanted or None
        if (have or None) != (wanted or None):
            changes[key] = wanted
    return changes


def transition(case, params):
    """The status to move to, or None; a CorralError when the workflow does not allow it."""
    wanted, status = params["status"], case.get("status")
    if wanted is None or wanted == status:
        return None
    allowed = case.get("allowed") or []
    if wanted not in allowed:
        raise CorralError(
            f"RMA case {case['id']} is {status}: {wanted!r} is not allowed from there "
            f"(allowed: {', '.join(allowed) or 'none'})"
        )
    return wanted


def shown(case):
    return {k: case.get(k) for k in ("status", "resolution", *FIELDS)}


def run(module, client):
    p = module.params
    case, etag = find(client, p)
    if p["status"] == "closed" and not p["resolution"]:
        raise CorralError("Closing a case needs a resolution.")
    if p["resolution"] and p["status"] != "closed":
        raise CorralError("Only closing (status: closed) takes a resolution.")
    changes = field_changes(case, p)
    if case.get("status") == "closed" and changes:
        raise CorralError(f"RMA case {case['id']} is closed: its fields are no longer changed.")
    target = transition(case, p)
    if p["status"] == "closed" and target is None and case.get("resolution") != p["resolution"]:
        module.warn(
            f"RMA case {case['id']} was closed as {case.get('resolution')}, not "
            f"{p['resolution']}; a closed case is not reopened."
        )
    names = sorted(changes) + (["status"] if target else [])
    if not names:
        module.exit_json(changed=False, changed_fields=[], case=case)
    after = dict(shown(case), **changes)
    if target:
        after.update(status=target, resolution=p["resolution"] or "")
    diff = {"before": shown(case), "after": after}
    if module.check_mode:
        module.exit_json(changed=True, changed_fields=names, case=case, diff=diff)
    path = f"rma-cases/{case['id']}/"
    if changes:
        case = client.patch(path, changes, etag=etag)
    if target:
        body = {"note": p["note"], "resolution": p["resolution"] or ""}
        case = client.post(f"{path}transitions/{target}/", body)
    module.exit_json(changed=True, changed_fields=names, case=case, diff=diff)


def main():
    module = AnsibleModule(
        argument_spec=argument_spec(),
        supports_check_mode=True,
        required_one_of=[("case", "node")],
        mutually_exclusive=[("case", "node")],
    )
    client = client_of(module)
    try:
        run(module, client)
    except CorralError as exc:
        fail(module, exc)


if __name__ == "__main__":
    main()
