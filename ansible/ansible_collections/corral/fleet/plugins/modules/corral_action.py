#!/usr/bin/python

DOCUMENTATION = r"""
module: corral_action
short_description: Run an action on a Corral node and wait for its operation to end
version_added: 1.0.0
description:
  - Starts an action on a node (C(POST /api/v1/nodes/{id}/actions/{action}/)), the node page's
    buttons and C(corral nodes action), and follows the operation Corral answers with
    (C(GET /api/v1/operations/{id}/)) until it ends, as C(corral nodes action --wait) does.
  - The task succeeds when the operation succeeded, and fails when it failed, was cancelled or
    skipped (with its error), or is still going after O(timeout) seconds (the operation goes on
    in Corral).
  - An action is always a change (C(changed=true)) when Corral starts it. An action illegal in the
    node's state is refused by Corral (409) and the task fails with Corral's reason and the
    actions allowed now; use a C(when:) on the inventory's C(corral_state) to run an action only
    where it applies.
  - In check mode nothing is started; the task says whether Corral would take the action now (from
    C(GET /api/v1/nodes/{id}/actions/)) and fails, as the real run would, when it would not.
  - Needs the C(technician) role (or C(integration), C(admin)) where the node is.
author:
  - Corral maintainers (!UNKNOWN)
extends_documentation_fragment:
  - corral.fleet.corral
  - corral.fleet.corral.action_group
attributes:
  check_mode:
    description: Says what would run, and whether Corral would take it now, without starting it.
    support: full
  diff_mode:
    description: Not supported; the operation is returned instead.
    support: none
options:
  node:
    description:
      - The node's hostname (or, failing that, its serial).
    type: str
    required: true
    aliases: [hostname]
  action:
    description:
      - The action, as Corral names it. Those of this Corral's version are listed by
        C(corral nodes show HOSTNAME) and by the API's C(GET /api/v1/nodes/{id}/actions/),
        among them
        V(inspect), V(deploy), V(validate), V(drain), V(undrain), V(recycle), V(rma), V(repaired),
        V(decommission), V(power_on), V(power_off), V(power_cycle), V(boot_pxe), V(apply_firmware),
        V(apply_bios) and V(converge). An unknown name is Corral's 404, listing them.
    type: str
    required: true
  reason:
    description:
      - Why; V(rma) and V(decommission) need one.
    type: str
    default: ""
  params:
    description:
      - The action's parameters; V(deploy) and V(recycle) take C(image) (V(NAME:VERSION) or an
        image id), V(recycle) also C(then) (V(rma)).
    type: dict
    default: {}
  wait:
    description:
      - Whether to follow the operation until it ends. Without it the task ends once Corral has
        accepted the action (the operation is returned as it was then).
    type: bool
    default: true
  timeout:
    description:
      - Seconds to wait for the operation to end; past them the task fails and the operation
        goes on.
    type: float
    default: 1800
  interval:
    description:
      - Seconds between two questions about the operation.
    type: float
    default: 2
seealso:
  - module: corral.fleet.corral_node
  - module: corral.fleet.corral_rma
"""

EXAMPLES = r"""
- name: Inspect every enrolled node of rack r01, 4 at a time
  corral.fleet.corral_action:
    node: "{{ inventory_hostname }}"
    action: inspect
    timeout: 900
  delegate_to: localhost
  throttle: 4
  when: corral_state == 'enrolled'

- name: Deploy an image
  corral.fleet.corral_action:
    node: gx-001
    action: deploy
    params:
      image: ubuntu-24.04-gpu:2026.11
    timeout: 3600
  delegate_to: localhost

- name: Send a node to RMA (opens a case)
  corral.fleet.corral_action:
    node: gx-001
    action: rma
    reason: GPU 3 fell off the bus
  delegate_to: localhost

- name: Power-cycle without waiting
  corral.fleet.corral_action:
    node: gx-001
    action: power_cycle
    wait: false
  delegate_to: localhost
"""

RETURN = r"""
operation:
  description:
    - The operation as Corral last showed it (C(GET /api/v1/operations/{id}/)); its C(steps) list a
      recycle's child operations. Absent in check mode.
  returned: when Corral started the action
  type: dict
  sample:
    id: 4711
    kind: rma
    status: succeeded
    progress: 100
    message: GPU 3 fell off the bus
    error: ""
    node: 42
node:
  description: The node the action ran on (its C(id), C(hostname) and C(state) before the action).
  returned: always
  type: dict
  sample: {id: 42, hostname: gx-001, state: failed}
allowed:
  description: The actions legal in the node's state when the task looked (check mode, or a
    refusal).
  returned: in check mode, and when Corral refused the action
  type: list
  elements: str
  sample: [inspect, rma, decommission, power_on]
msg:
  description: What ran and how it ended, or what would run.
  returned: always
  type: str
  sample: "rma on gx-001: operation 4711 succeeded"
"""

from ansible.module_utils.basic import AnsibleModule  # noqa: E402
from ansible_collections.corral.fleet.plugins.module_utils.corral import (  # noqa: E402
    ApiError,
    CorralError,
    client_of,
    corral_argument_spec,
    fail,
    outcome,
)


def argument_spec():
    spec = corral_argument_spec()
    spec.update(
        node={"type": "str", "required": True, "aliases": ["hostname"]},
        action={"type": "str", "required": True},
        reason={"type": "str", "default": ""},
        params={"type": "dict", "default": {}},
        wait={"type": "bool", "default": True},
        timeout={"type": "float", "default": 1800},
        interval={"type": "float", "default": 2},
    )
    return spec


def legal(client, node):
    """[{name, label, needs_reason}] of the actions the node's state allows now."""
    found = client.get(f"nodes/{node['id']}/actions/")
    return found if isinstance(found, list) else []


def check(module, client, node, shown):
    """Check mode: would Corral take it now? Nothing is started."""
    p = module.params
    actions = legal(client, node)
    names = [a.get("name") for a in actions]
    if p["action"] not in names:
        module.fail_json(
            msg=f"{p['action']} is not allowed on {node['hostname']} in state {node.get('state')} "
            f"(allowed now: {', '.join(names) or 'none'})",
            node=shown,
            allowed=names,
        )
    needs = next(a for a in actions if a.get("name") == p["action"]).get("needs_reason")
    if needs and not p["reason"].strip():
        module.fail_json(msg=f"{p['action']} needs a reason", node=shown, allowed=names)
    module.exit_json(
        changed=True,
        msg=f"would run {p['action']} on {node['hostname']} (state {node.get('state')})",
        node=shown,
        allowed=names,
    )


def run(module, client):
    p = module.params
    node = client.find_node(p["node"])
    if node is None:
        raise CorralError(f"No node with hostname {p['node']!r} (none that this token can read).")
    shown = {k: node.get(k) for k in ("id", "hostname", "state")}
    if module.check_mode:
        check(module, client, node, shown)
    body = {"reason": p["reason"], "params": p["params"] or {}}
    try:
        op = client.post(f"nodes/{node['id']}/actions/{p['action']}/", body)
    except ApiError as exc:
        allowed = exc.body.get("allowed") if isinstance(exc.body, dict) else None
        extra = {"allowed": allowed} if allowed is not None else {}
        fail(module, exc, node=shown, **extra)
    started = f"{p['action']} on {node['hostname']}: operation {op.get('id')}"
    if not p["wait"]:
        msg = f"{started} {op.get('status')}"
        module.exit_json(changed=True, operation=op, node=shown, msg=msg)
    try:
        op, ended = client.wait(op, p["timeout"], p["interval"])
    except CorralError as exc:
        fail(module, exc, changed=True, operation=op, node=shown)
    if not ended:
        module.fail_json(
            msg=f"{started} is still {op.get('status')} after {p['timeout']:g} s; it goes on in "
            f"Corral (`corral ops watch {op.get('id')}`)",
            changed=True,
            operation=op,
            node=shown,
        )
    why = outcome(op)
    if why:
        module.fail_json(msg=why, changed=True, operation=op, node=shown)
    module.exit_json(changed=True, operation=op, node=shown, msg=f"{started} succeeded")


def main():
    module = AnsibleModule(argument_spec=argument_spec(), supports_check_mode=True)
    if module.params["timeout"] <= 0 or module.params["interval"] <= 0:
        module.fail_json(msg="timeout and interval are numbers of seconds above 0")
    client = client_of(module)
    try:
        run(module, client)
    except CorralError as exc:
        fail(module, exc)


if __name__ == "__main__":
    main()
