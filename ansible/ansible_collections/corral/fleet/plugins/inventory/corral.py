DOCUMENTATION = r"""
name: corral
short_description: Corral's nodes as an Ansible inventory
version_added: 1.0.0
description:
  - One host per node of a Corral (named by its hostname), read from Corral's REST API
    (C(GET /api/v1/nodes/) and C(/api/v1/racks/)) with an API token; any role reads it.
  - Groups by site (C(site_dc1)), rack (C(rack_dc1_r01)), state (C(state_in_service)), GPU model
    (C(gpu_h100_sxm)) and label (C(label_pool_a), C(label_env_prod) for V(env=prod)), in lower
    case, with every run of characters that are not letters or digits made one C(_).
  - Host variables C(corral_*) (below); C(ansible_host) is the node's boot interface's IP, when
    it has one.
  - Never a BMC password (Corral's API does not return one, and the plugin copies only the BMC's
    protocol, address, port and user).
  - Decommissioned nodes are left out unless O(states) names them.
  - The inventory file's name must end in C(corral.yml) or C(corral.yaml).
author:
  - Corral maintainers (!UNKNOWN)
extends_documentation_fragment:
  - constructed
  - inventory_cache
options:
  plugin:
    description: The name of this plugin; makes the file Corral's.
    required: true
    choices: [corral.fleet.corral]
    type: str
  url:
    description:
      - Corral's address, C(https://corral.example.net); C(.../api/v1/) is accepted too.
      - Redirects are not followed (the token must not go to another address).
    type: str
    required: true
    env:
      - name: CORRAL_URL
  token:
    description:
      - An API token (C(manage.py corral_token NAME --group manager) on the Corral host; reading
        needs no more). May be a template, such as a vault variable or a lookup.
    type: str
    required: true
    env:
      - name: CORRAL_TOKEN
  validate_certs:
    description: Whether Corral's HTTPS certificate is checked.
    type: bool
    default: true
  ca_path:
    description: A PEM file of the authorities that signed Corral's certificate.
    type: path
  request_timeout:
    description: Seconds to wait for one answer.
    type: float
    default: 60
  sites:
    description:
      - Only the nodes of these sites (slugs). Empty, every site the token reads (a site role
        reads its own).
    type: list
    elements: str
    default: []
    aliases: [site]
  states:
    description:
      - Only the nodes in these states (V(in_service), V(failed), ...). Empty, every state but
        V(decommissioned).
    type: list
    elements: str
    default: []
"""

EXAMPLES = r"""
# fleet.corral.yml: every node Corral has (CORRAL_URL and CORRAL_TOKEN from the environment)
plugin: corral.fleet.corral

# dc1.corral.yml: one site's nodes in service, with a group per rack row and per model
plugin: corral.fleet.corral
url: https://corral.example.net
token: "{{ lookup('ansible.builtin.env', 'CORRAL_READ_TOKEN') }}"
sites: [dc1]
states: [in_service, drained]
keyed_groups:
  - key: corral_model
    prefix: model
compose:
  ansible_user: "'admin'"
groups:
  big: corral_gpu_count >= 8
cache: true
cache_plugin: ansible.builtin.jsonfile
cache_connection: ~/.cache/corral-inventory
cache_timeout: 300
"""

import re  # noqa: E402

from ansible.errors import AnsibleParserError  # noqa: E402
from ansible.plugins.inventory import BaseInventoryPlugin, Cacheable, Constructable  # noqa: E402
from ansible_collections.corral.fleet.plugins.module_utils.corral import (  # noqa: E402
    Client,
    CorralError,
)

BMC_SHOWN = ("protocol", "address", "port", "username")  # never the password
NOT_WORD = re.compile(r"[^a-z0-9]+")


def group_name(*parts):
    """`site_dc1`, `rack_dc1_r01`, `gpu_h100_sxm`: lower case, runs of other characters `_`."""
    return "_".join(NOT_WORD.sub("_", str(p).lower()).strip("_") for p in parts if p != "")


class InventoryModule(BaseInventoryPlugin, Constructable, Cacheable):
    NAME = "corral.fleet.corral"

    def verify_file(self, path):
        return super().verify_file(path) and path.endswith(("corral.yml", "corral.yaml"))

    def parse(self, inventory, loader, path, cache=True):
        super().parse(inventory, loader, path, cache)
        self._read_config_data(path)
        key = self.get_cache_key(path)
        use_cache = self.get_option("cache") and cache
        update_cache = self.get_option("cache") and not cache
        found = None
        if use_cache:
            try:
                found = self._cache[key]
            except KeyError:
                update_cache = True
        if found is None:
            try:
                found = self.fetch()
            except CorralError as exc:
                raise AnsibleParserError(f"corral inventory {path}: {exc}") from None
        if update_cache:
            self._cache[key] = found
        self.populate(found)

    def option(self, name):
        value = self.get_option(name)
        if isinstance(value, str) and self.templar.is_template(value):
            value = self.templar.template(value)
        return value

    def fetch(self):
        """{"nodes": [...], "racks": {id: {name, site}}}: what the inventory is made of (and
        what the cache holds: no token, no password)."""
        client = Client(
            self.option("url"),
            self.option("token"),
            validate_certs=self.get_option("validate_certs"),
            timeout=self.get_option("request_timeout"),
            ca_path=self.get_option("ca_path"),
        )
        params = {"state": self.get_option("states")} if self.get_option("states") else {}
        nodes = []
        for site in self.get_option("sites") or [None]:
            where = dict(params, site=site) if site else params
            nodes += list(client.pages("nodes/", where))
        if not self.get_option("states"):
            nodes = [n for n in nodes if n.get("state") != "decommissioned"]
        racks = {}
        if any(n.get("rack") for n in nodes):
            for rack in client.pages("racks/"):
                racks[str(rack["id"])] = {"name": rack.get("name"), "site": rack.get("site_slug")}
        return {"nodes": nodes, "racks": racks}

    def populate(self, found):
        strict = self.get_option("strict")
        racks = found.get("racks") or {}
        for node in found.get("nodes") or []:
            host = node.get("hostname")
            if not host:
                continue
            rack = racks.get(str(node.get("rack"))) or {}
            hostvars = host_vars(node, rack)
            self.inventory.add_host(host)
            for name, value in hostvars.items():
                self.inventory.set_variable(host, name, value)
            for group in groups_of(node, rack):
                self.inventory.add_group(group)
                self.inventory.add_child(group, host)
            self._set_composite_vars(self.get_option("compose"), hostvars, host, strict=strict)
            self._add_host_to_composed_groups(
                self.get_option("groups"), hostvars, host, strict=strict
            )
            self._add_host_to_keyed_groups(
                self.get_option("keyed_groups"), hostvars, host, strict=strict
            )


def boot_ip(node):
    """The boot interface's IP (the address the node is reached at), else any interface's."""
    nics = node.get("interfaces") or []
    for nic in sorted(nics, key=lambda n: not n.get("boot")):
        if nic.get("ip"):
            return nic["ip"]
    return None


def host_vars(node, rack):
    bmc = node.get("bmc") or {}
    found = {
        "corral_id": node.get("id"),
        "corral_hostname": node.get("hostname"),
        "corral_serial": node.get("serial"),
        "corral_state": node.get("state"),
        "corral_site": node.get("site"),
        "corral_rack": rack.get("name"),
        "corral_rack_unit": node.get("rack_unit"),
        "corral_u_height": node.get("u_height"),
        "corral_model": node.get("model"),
        "corral_gpu_model": node.get("gpu_model"),
        "corral_gpu_count": node.get("gpu_count"),
        "corral_role": node.get("role"),
        "corral_fabric": node.get("fabric"),
        "corral_labels": list(node.get("labels") or []),
        "corral_power_state": node.get("power_state"),
        "corral_scheduler_state": node.get("scheduler_state"),
        "corral_failure_reason": node.get("failure_reason"),
        "corral_bmc_address": bmc.get("address"),
        "corral_bmc": {k: bmc.get(k) for k in BMC_SHOWN} if bmc else None,
        "corral_interfaces": [
            {k: nic.get(k) for k in ("name", "mac", "ip", "boot", "fabric_rail")}
            for nic in node.get("interfaces") or []
        ],
    }
    address = boot_ip(node)
    if address:
        found["ansible_host"] = address
    return found


def groups_of(node, rack):
    site = node.get("site")
    groups = []
    if site:
        groups.append(group_name("site", site))
        if rack.get("name"):
            groups.append(group_name("rack", site, rack["name"]))
    if node.get("state"):
        groups.append(group_name("state", node["state"]))
    if node.get("gpu_model"):
        groups.append(group_name("gpu", node["gpu_model"]))
    groups += [group_name("label", label) for label in node.get("labels") or []]
    return [g for g in groups if g]
