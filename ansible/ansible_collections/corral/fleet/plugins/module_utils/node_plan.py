"""What corral_node must change to bring a node to the facts it was given: the fields to
PATCH, the BMC (with its password only when it must be sent), the labels and the
interfaces (written through /api/v1/interfaces/, as the API asks); and the module's
options. Pure functions of the node as the API shows it and the module's parameters; no
request is made here."""

from __future__ import annotations

from ansible_collections.corral.fleet.plugins.module_utils.corral import normalise_mac

# option -> the API's field of a node
NODE_FIELDS = {
    "hostname": "hostname",
    "serial": "serial",
    "model": "model",
    "gpu_model": "gpu_model",
    "gpu_count": "gpu_count",
    "role": "role",
    "fabric": "fabric",
    "unit": "rack_unit",
    "u_height": "u_height",
}
BMC_FIELDS = ("protocol", "address", "port", "username", "verify_tls", "system_id")
BMC_FIELDS += ("gpu_system_id",)
NIC_FIELDS = ("name", "ip", "boot", "fabric_rail")
HIDDEN = "(hidden)"
# corral_node's own options (the connection's are module_utils/corral.py's)
NODE_OPTIONS = {
    "serial": {"type": "str"},
    "hostname": {"type": "str"},
    "state": {"type": "str", "choices": ["present", "absent"], "default": "present"},
    "site": {"type": "str"},
    "rack": {"type": "str"},
    "unit": {"type": "int"},
    "u_height": {"type": "int"},
    "model": {"type": "str"},
    "gpu_model": {"type": "str"},
    "gpu_count": {"type": "int"},
    "role": {"type": "str", "choices": ["compute", "storage", "head"]},
    "fabric": {"type": "str"},
    "labels": {"type": "list", "elements": "str"},
    "bmc": {
        "type": "dict",
        "options": {
            "protocol": {"type": "str", "choices": ["redfish", "ipmi"]},
            "address": {"type": "str"},
            "port": {"type": "int"},
            "username": {"type": "str"},
            "password": {"type": "str", "no_log": True},
            "verify_tls": {"type": "bool"},
            "system_id": {"type": "str"},
            "gpu_system_id": {"type": "str"},
        },
    },
    "update_password": {
        "type": "str",
        "choices": ["always", "on_create"],
        "default": "on_create",
        "no_log": False,
    },
    "interfaces": {
        "type": "list",
        "elements": "dict",
        "options": {
            "mac": {"type": "str", "required": True},
            "name": {"type": "str"},
            "ip": {"type": "str"},
            "boot": {"type": "bool"},
            "fabric_rail": {"type": "int"},
        },
    },
}


def blank(value):
    """The API's empty values (None, "") are one."""
    return None if value in ("", None) else value


def node_fields(params, rack_id):
    """The API fields the parameters give (an option left out is left as it is)."""
    wanted = {api: params[opt] for opt, api in NODE_FIELDS.items() if params.get(opt) is not None}
    if rack_id is not None:
        wanted["rack"] = rack_id
    if params.get("labels") is not None:
        wanted["labels"] = sorted(set(params["labels"]))
    return wanted


def changed_fields(node, wanted):
    """{field: value} of the wanted fields the node does not have."""
    changes = {}
    for key, value in wanted.items():
        have = node.get(key)
        if key == "labels":
            if sorted(have or []) != value:
                changes[key] = value
        elif blank(have) != blank(value):
            changes[key] = value
    return changes


def bmc_change(current, wanted, update_password, rack_moved):
    """(body, names): the `bmc` object to send and the names of what it changes, or
    (None, []). The stored password is never read back, so a given one is sent when the
    node has none, when `update_password` is `always`, and with any change of where the
    BMC is (address, port, protocol, user, system, TLS check) or of the node's rack: Corral
    then needs the password again, and refuses the change without it."""
    if not wanted:
        return None, []
    given = {k: wanted[k] for k in BMC_FIELDS if wanted.get(k) is not None}
    password = wanted.get("password") or ""
    if current is None:
        body = dict(given, **({"password": password} if password else {}))
        return body, sorted(body)
    names = [k for k, v in given.items() if blank(current.get(k)) != blank(v)]
    if password and (
        not current.get("has_password") or update_password == "always" or names or rack_moved
    ):
        names.append("password")
    if not names:
        return None, []
    body = dict(given, **({"password": password} if password else {}))
    return body, sorted(names)


def nic_body(wanted, node_id=None):
    body = {"mac": normalise_mac(wanted["mac"])}
    body.update({k: wanted[k] for k in NIC_FIELDS if wanted.get(k) is not None})
    if node_id is not None:
        body["node"] = node_id
    return body


def interface_plan(current, wanted):
    """(deletes, updates, creates) that make the node's interfaces the `wanted` list (the
    whole set, by MAC, as in the fleet files): ids to delete, (id, changes) to PATCH with
    the ones that clear a boot flag first (a node has one boot interface), bodies to POST.
    `wanted` None leaves the interfaces alone."""
    if wanted is None:
        return [], [], []
    have = {normalise_mac(nic["mac"]): nic for nic in current or []}
    want = {normalise_mac(nic["mac"]): nic for nic in wanted}
    deletes = [nic["id"] for mac, nic in sorted(have.items()) if mac not in want]
    updates, creates = [], []
    for mac, nic in want.items():
        if mac not in have:
            creates.append(nic_body(nic))
            continue
        old = have[mac]
        diff = {
            k: nic[k]
            for k in NIC_FIELDS
            if nic.get(k) is not None and blank(old.get(k)) != blank(nic[k])
        }
        if diff:
            updates.append((old["id"], diff))
    updates.sort(key=lambda item: item[1].get("boot", False) is not False)
    return deletes, updates, creates


def create_body(params, rack_id):
    """The POST /api/v1/nodes/ body of a new node: every fact given, at once."""
    body = node_fields(params, rack_id)
    bmc = bmc_change(None, params.get("bmc"), "always", False)[0]
    if bmc:
        body["bmc"] = bmc
    if params.get("interfaces") is not None:
        body["interfaces"] = [nic_body(nic) for nic in params["interfaces"]]
    return body


def view(node, rack_name=None):
    """A node as the diff shows it: the facts this module manages, never a password."""
    if not node:
        return {}
    bmc = node.get("bmc") or None
    shown = {api: node.get(api) for api in NODE_FIELDS.values()}
    shown.update(
        site=node.get("site"),
        rack=rack_name if rack_name is not None else node.get("rack"),
        labels=sorted(node.get("labels") or []),
        interfaces=nic_view(node.get("interfaces")),
    )
    if bmc is not None:
        shown["bmc"] = {k: bmc.get(k) for k in BMC_FIELDS}
        shown["bmc"]["password"] = HIDDEN if bmc.get("has_password") else ""
    return shown


def nic_view(nics):
    return sorted(
        ({k: nic.get(k) for k in ("mac", *NIC_FIELDS)} for nic in nics or []),
        key=lambda nic: nic["mac"],
    )


def view_after(node, before, plan, rack_name=None, site=None):
    """The diff's `after`: `before` (view(node)) with the planned changes; a password
    shown as "(changed)" when it is sent."""
    after = dict(before, **{k: v for k, v in plan["fields"].items() if k in before})
    if "rack" in plan["fields"]:
        after.update(rack=rack_name, site=site)
    if plan["bmc"]:
        bmc = plan["bmc"]
        shown = dict(before.get("bmc") or {}, **{k: v for k, v in bmc.items() if k != "password"})
        shown["password"] = (
            "(changed)" if "password" in plan["bmc_names"] else shown.get("password", "")
        )
        after["bmc"] = shown
    deletes, updates, creates = plan["interfaces"]
    if deletes or updates or creates:
        by_id = {nic.get("id"): dict(nic) for nic in node.get("interfaces") or []}
        changes = dict(updates)
        nics = [dict(nic, **changes.get(i, {})) for i, nic in by_id.items() if i not in deletes]
        after["interfaces"] = nic_view(nics + creates)
    return after


def plan_update(node, params, rack_id):
    """Everything the node lacks: {"fields", "bmc", "bmc_names", "interfaces", "names"}."""
    fields = changed_fields(node, node_fields(params, rack_id))
    bmc, bmc_names = bmc_change(
        node.get("bmc"), params.get("bmc"), params.get("update_password"), "rack" in fields
    )
    fields_sent = dict(fields, bmc=bmc) if bmc else dict(fields)
    nics = interface_plan(node.get("interfaces"), params.get("interfaces"))
    names = sorted(fields) + [f"bmc.{n}" for n in bmc_names]
    if any(nics):
        names.append("interfaces")
    return {
        "fields": fields,
        "patch": fields_sent,
        "bmc": bmc,
        "bmc_names": bmc_names,
        "interfaces": nics,
        "names": names,
    }
