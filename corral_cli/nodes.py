"""`corral nodes list|show|action`: the node list with the API's filters, one node's
detail, and an action started on a node (optionally waited for)."""

from __future__ import annotations

import argparse
import contextlib
from typing import Any

from . import ops
from .context import Context
from .errors import ApiError, CorralError
from .output import FORMATS, Column, dump, pairs, table

OK = 0
PAGE_SIZE = 1000  # the most the API serves in one page


def add_parsers(commands: Any) -> None:
    nodes = commands.add_parser("nodes", help="list nodes, show one, run an action on one")
    verbs = nodes.add_subparsers(dest="verb", metavar="VERB", required=True)
    lister = verbs.add_parser("list", help="nodes, filtered as the node list page filters")
    lister.add_argument("--site", metavar="SLUG", help="a site's slug, name or id")
    lister.add_argument(
        "--state",
        action="append",
        metavar="STATE",
        help="enrolled, inspecting, ready, deploying, validating, in_service, draining, "
        "drained, failed, rma, decommissioned; repeatable (any of them)",
    )
    lister.add_argument(
        "--search", metavar="TEXT", help="hostname, serial, model, MAC or rack location"
    )
    lister.add_argument("--rack", metavar="RACK", help="a rack: id, name, `r01 U12`, or none")
    lister.add_argument("--label", metavar="LABEL", help="nodes carrying this label")
    lister.add_argument("--gpu-model", metavar="MODEL", help="GPU model, by its beginning")
    add_format(lister)
    lister.set_defaults(run=list_nodes)
    shower = verbs.add_parser("show", help="one node's detail, found by hostname (or serial)")
    shower.add_argument("hostname", metavar="HOSTNAME")
    add_format(shower)
    shower.set_defaults(run=show)
    actor = verbs.add_parser(
        "action",
        help="start an action on a node (inspect, deploy, drain, power_on, rma, ...)",
        description="Start an action on a node; `corral nodes show HOSTNAME` lists the "
        "actions legal in its state. With --wait, follow its operation until it ends: exit "
        "0 if it succeeded, 1 otherwise.",
    )
    actor.add_argument("hostname", metavar="HOSTNAME")
    actor.add_argument("action", metavar="ACTION")
    actor.add_argument("--reason", default="", help="why (needed by rma and decommission)")
    actor.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an action parameter (deploy: image=NAME:VERSION or an id); repeatable",
    )
    actor.add_argument("--wait", action="store_true", help="follow the operation to its end")
    ops.add_watch_options(actor)
    actor.set_defaults(run=action)


def add_format(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-o", "--output", choices=FORMATS, default="table", help="table (default), json or yaml"
    )


def rack_names(ctx: Context, nodes: list[dict]) -> dict[int, str]:
    """Rack id -> name, for the racks the nodes are in (one list of racks, not one
    request per node)."""
    if not any(node.get("rack") for node in nodes):
        return {}
    return {r["id"]: r["name"] for r in ctx.client().pages("racks/", {"page_size": PAGE_SIZE})}


def place(node: dict, racks: dict[int, str]) -> str:
    """`dc1/r01 U5`; `dc1/rack 7` for a rack not readable; `-` for a node in no rack."""
    rack = node.get("rack")
    if rack is None:
        return "-"
    name = racks.get(rack, f"rack {rack}")
    unit = f" U{node['rack_unit']}" if node.get("rack_unit") else ""
    return f"{node.get('site') or '?'}/{name}{unit}"


def gpus(node: dict) -> str:
    model, count = node.get("gpu_model") or "", node.get("gpu_count")
    if not model:
        return "-"
    return f"{count}x {model}" if count else model


def list_nodes(ctx: Context, args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"page_size": PAGE_SIZE}
    for key, value in (
        ("site", args.site),
        ("state", args.state),
        ("q", args.search),
        ("rack", args.rack),
        ("label", args.label),
        ("gpu_model", args.gpu_model),
    ):
        if value:
            params[key] = value
    found = list(ctx.client().pages("nodes/", params))
    if args.output != "table":
        ctx.out(dump(found, args.output))
        return OK
    if not found:
        ctx.note("No nodes match.")
        return OK
    racks = rack_names(ctx, found)
    columns: list[Column] = [
        ("hostname", lambda n: n.get("hostname")),
        ("serial", lambda n: n.get("serial")),
        ("state", lambda n: n.get("state")),
        ("site/rack", lambda n: place(n, racks)),
        ("gpu", gpus),
    ]
    ctx.out(table(found, columns))
    return OK


def find(ctx: Context, hostname: str) -> dict:
    """The node whose hostname is `hostname` (or, failing that, whose serial is)."""
    wanted = hostname.strip()
    if not wanted:
        raise CorralError("Give a hostname.")
    for key in ("hostname", "serial"):  # whole values, any case (the API's filters)
        exact = list(ctx.client().pages("nodes/", {key: wanted}))
        if len(exact) == 1:
            return exact[0]
    raise CorralError(f"No node with hostname {wanted!r} (none that this token can read).")


def show(ctx: Context, args: argparse.Namespace) -> int:
    node = find(ctx, args.hostname)
    if args.output != "table":
        ctx.out(dump(node, args.output))
        return OK
    racks: dict[int, str] = {}
    if node.get("rack"):
        with contextlib.suppress(ApiError):  # else shown by its id
            racks = {node["rack"]: ctx.client().get(f"racks/{node['rack']}/")["name"]}
    try:
        legal = ctx.client().get(f"nodes/{node['id']}/actions/")
        actions = [a["name"] for a in legal] if isinstance(legal, list) else None
    except ApiError:
        actions = None
    ctx.out(pairs(detail(node, racks, actions)))
    return OK


def detail(node: dict, racks: dict[int, str], actions: list[str] | None) -> list:
    bmc = node.get("bmc") or {}
    items: list[tuple[str, Any]] = [
        ("hostname", node.get("hostname")),
        ("id", node.get("id")),
        ("serial", node.get("serial")),
        ("state", node.get("state")),
        ("site/rack", place(node, racks)),
        ("u_height", node.get("u_height")),
        ("model", node.get("model")),
        ("gpu", gpus(node)),
        ("role", node.get("role")),
        ("fabric", node.get("fabric")),
        ("labels", node.get("labels")),
        ("power", node.get("power_state")),
        ("scheduler", node.get("scheduler_state")),
        ("bmc", f"{bmc.get('protocol')} {bmc.get('address')} user {bmc.get('username')}"
         f"{'' if bmc.get('has_password') else ' (no password stored)'}" if bmc else None),
    ]  # fmt: skip
    for nic in node.get("interfaces") or []:
        words = [nic.get("mac"), nic.get("ip"), "boot" if nic.get("boot") else ""]
        name = nic.get("name") or "nic"
        items.append((f"interface {name}", " ".join(str(w) for w in words if w)))
    if node.get("failure_reason"):
        items.append(("failed", f"{node.get('failed_step') or ''}: {node['failure_reason']}"))
    if actions is not None:
        items.append(("actions now", actions))
    items.append(("updated", node.get("updated")))
    return items


def param_values(raw: list[str]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for item in raw:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise CorralError(f"--param {item!r}: give KEY=VALUE")
        params[key.strip()] = int(value) if value.isascii() and value.isdigit() else value
    return params


def action(ctx: Context, args: argparse.Namespace) -> int:
    node = find(ctx, args.hostname)
    body = {"reason": args.reason, "params": param_values(args.param)}
    op = ctx.client().post(f"nodes/{node['id']}/actions/{args.action}/", body)
    ctx.out(
        f"Started {op.get('kind')} on {node.get('hostname')}: operation {op.get('id')} "
        f"({op.get('status')})."
    )
    if not args.wait:
        return OK
    return ops.watch(ctx, op["id"], args.interval, args.timeout, first=op)
