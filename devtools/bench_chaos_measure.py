"""The figures of `make bench-chaos`, read from PostgreSQL, the broker and the BMCs' own
request journals once every accepted operation has ended (or the wait gave up).

Each non-zero figure comes with the operations or nodes behind it, so a regression points
at its cause instead of a number.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from pathlib import Path

from devtools.bench_chaos_faults import Fault, say

SLACK = 0.5  # seconds either side of an operation's window: clocks, request in flight
ACTIVE = ("pending", "running")
UNSENT = ("", "unsent", "queued")  # republish sends these: not stranded


@dataclass
class Figures:
    operations: int = 0
    lost: int = 0
    duplicated: int = 0
    stuck: int = 0
    worst_recovery_s: float = 0.0
    failed: int = 0
    details: list[str] = field(default_factory=list)

    def why(self, line: str) -> None:
        self.details.append(line)
        say(line)


def emulator_writes(journal: Path, system_to_node: dict[str, int]) -> dict[int, list]:
    """node id -> [(time, "reset"|"boot")] from sushy-emulator's request journal."""
    out: dict[int, list] = {}
    if not journal.exists():
        return out
    for line in journal.read_text().splitlines():
        entry = json.loads(line)
        parts = entry["path"].rstrip("/").split("/")
        # /redfish/v1/Systems/<id>[/Actions/ComputerSystem.Reset]
        if len(parts) < 5 or parts[3] != "Systems" or parts[4] not in system_to_node:
            continue
        node = system_to_node[parts[4]]
        if entry["method"] == "POST" and parts[-1] == "ComputerSystem.Reset":
            out.setdefault(node, []).append((entry["time"], "reset"))
        elif entry["method"] == "PATCH" and len(parts) == 5:
            out.setdefault(node, []).append((entry["time"], "boot"))
    return out


def queued_operation_ids(redis_url: str) -> set[int]:
    """Operation ids named by a task message still in Redis (queued or held unacked): a
    pending operation with one is going to run; one without is stranded unless republished."""
    import redis

    ids: set[int] = set()
    client = redis.Redis.from_url(redis_url)
    try:
        raws = list(client.hvals("unacked")) if client.exists("unacked") else []
        for key in client.keys("site.*") + client.keys("corral"):
            if client.type(key) == b"list":
                raws += client.lrange(key, 0, -1)
        for raw in raws:
            message = json.loads(raw)
            if isinstance(message, list):  # unacked: [message, exchange, routing key]
                message = message[0]
            body = json.loads(base64.b64decode(message["body"]))
            if body and body[0]:
                ids.add(int(body[0][0]))
    except Exception as exc:  # noqa: BLE001  (a figure, not the bench, is at stake)
        say(f"could not read the broker's queues: {exc!r}")
    finally:
        client.close()
    return ids


def measure(
    accepted: list[int],
    conflicts: list[list[int]],
    faults: list[Fault],
    writes: dict[int, list],
    redis_url: str,
    waited_until: float,
) -> Figures:
    from inventory.choices import TRANSITIONAL_STATES
    from inventory.models import Node, Operation

    fig = Figures(operations=len(accepted))
    ops = {op.pk: op for op in Operation.objects.filter(pk__in=accepted)}
    queued = queued_operation_ids(redis_url)

    # lost: missing, failed without a word, or active with nothing going to run it
    for pk in accepted:
        op = ops.get(pk)
        if op is None:
            fig.lost += 1
            fig.why(f"lost: operation {pk} is not in the database")
        elif op.status == "failed":
            fig.failed += 1
            if not op.error.strip():
                fig.lost += 1
                fig.why(f"lost: {op} on node {op.node_id} failed with an empty error")
        elif (
            op.status == "pending"
            and pk not in queued
            and op.task_id not in ("", "unsent", "queued")
        ):
            fig.lost += 1
            fig.why(f"lost: {op} on node {op.node_id} pending, no message in the broker")

    # duplicated: a hardware write outside every operation's window on that node
    windows: dict[int, list[tuple[float, float]]] = {}
    for op in Operation.objects.filter(node__isnull=False, started__isnull=False):
        end = op.finished.timestamp() if op.finished else waited_until
        windows.setdefault(op.node_id, []).append((op.started.timestamp(), end))
    for node, entries in writes.items():
        for when, what in entries:
            inside = any(a - SLACK <= when <= b + SLACK for a, b in windows.get(node, []))
            if not inside:
                fig.duplicated += 1
                spans = windows.get(node, [(0.0, 0.0)])
                near = min(spans, key=lambda w, t=when: min(abs(t - w[0]), abs(t - w[1])))
                fig.why(
                    f"duplicated: {what} on node {node} at {when:.1f} outside every operation"
                    f" (nearest window {near[0]:.1f}-{near[1]:.1f})"
                )
    say(f"checked {sum(map(len, writes.values()))} resets and boot PATCHes against the windows")
    for ids in conflicts:
        if len(ids) > 1:
            fig.duplicated += len(ids) - 1
            fig.why(f"duplicated: one conflict accepted {len(ids)} operations {ids}")

    # stuck: still active, transitional without a deadline, lock held by no active operation
    for op in ops.values():
        if op.status in ACTIVE:
            fig.stuck += 1
            fig.why(f"stuck: {op} on node {op.node_id} still {op.status}: {op.message!r}")
    for node in Node.objects.select_related("lock_operation"):
        if node.state in TRANSITIONAL_STATES and node.deadline is None:
            fig.stuck += 1
            fig.why(f"stuck: node {node.pk} {node.state} without a deadline")
        held = node.reservation is not None or node.lock_operation_id is not None
        holder = node.lock_operation
        if held and (holder is None or holder.status not in ACTIVE):
            fig.stuck += 1
            fig.why(
                f"stuck: node {node.pk} locked ({node.reservation!r}) by {holder or 'no operation'}"
            )

    # worst_recovery_s: from a fault being over to the end of each operation it touched
    for fault in faults:
        worst, who = 0.0, None
        for op in ops.values():
            accepted_at = op.created.timestamp()
            end = op.finished.timestamp() if op.finished else waited_until
            touched = accepted_at <= fault.over and end >= fault.began
            if touched and end - fault.over > worst:
                worst, who = end - fault.over, op
        say(
            f"recovery after {fault.name}: {worst:.1f} s"
            + (f" ({who}, {who.error or who.message!r})" if who else "")
        )
        fig.worst_recovery_s = max(fig.worst_recovery_s, worst)
    return fig
