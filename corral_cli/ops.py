"""`corral ops watch ID` (and `nodes action --wait`): follow an operation until it ends,
printing each change of its status, progress, message or steps. Exit 0 if it succeeded,
1 if it failed, was cancelled or skipped, or is still going when --timeout runs out."""

from __future__ import annotations

import argparse
import time
from typing import Any

from .context import Context
from .errors import ApiError, CorralError

OK, FAILED = 0, 1
ENDED = ("succeeded", "failed", "cancelled", "skipped")
# A restart or a failover of Corral while a long deploy is watched is waited out (503
# with Retry-After, a refused connection) this many times in a row, not the watch's end.
TRANSIENT_STATUSES = (502, 503, 504)
TRANSIENT_TRIES = 5


def add_parsers(commands: Any) -> None:
    ops = commands.add_parser("ops", help="follow operations")
    verbs = ops.add_subparsers(dest="verb", metavar="VERB", required=True)
    watcher = verbs.add_parser(
        "watch",
        help="follow an operation until it ends (exit 0: succeeded, 1: otherwise)",
        description=__doc__,
    )
    watcher.add_argument("id", type=int, metavar="ID", help="the operation's id")
    add_watch_options(watcher)
    watcher.set_defaults(run=watch_command)


def add_watch_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--interval",
        type=positive,
        default=2.0,
        metavar="SECONDS",
        help="how often to ask (default 2)",
    )
    parser.add_argument(
        "--timeout",
        type=positive,
        default=None,
        metavar="SECONDS",
        help="stop watching after this long (exit 1; the operation goes on)",
    )


def positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not value > 0:
        raise argparse.ArgumentTypeError("give a number of seconds above 0")
    return value


def watch_command(ctx: Context, args: argparse.Namespace) -> int:
    return watch(ctx, args.id, args.interval, args.timeout)


def status_line(op: dict) -> str:
    progress = op.get("progress")
    shown = f" {progress}%" if isinstance(progress, int) and progress else ""
    message = f": {op['message']}" if op.get("message") else ""
    return f"operation {op.get('id')} {op.get('kind')}: {op.get('status')}{shown}{message}"


def step_lines(op: dict) -> list[str]:
    lines = []
    for step in op.get("steps") or []:
        message = f": {step['message']}" if step.get("message") else ""
        lines.append(f"  step {step.get('name')}: {step.get('status')}{message}")
    return lines


def fetch(ctx: Context, op_id: int, interval: float) -> dict:
    """The operation now; a passing outage of Corral is retried a few times."""
    for attempt in range(1, TRANSIENT_TRIES + 1):
        try:
            return ctx.client().get(f"operations/{op_id}/")
        except ApiError as exc:
            if exc.status not in TRANSIENT_STATUSES or attempt == TRANSIENT_TRIES:
                raise
            ctx.note(f"Corral answered {exc.status}; asking again.")
        except CorralError as exc:
            if attempt == TRANSIENT_TRIES or "Cannot reach" not in str(exc):
                raise
            ctx.note(f"{exc} Asking again.")
        time.sleep(interval)
    raise AssertionError("unreachable")


def watch(
    ctx: Context,
    op_id: int,
    interval: float,
    timeout: float | None,
    first: dict | None = None,
) -> int:
    """Poll the operation every `interval` seconds until it ends; print what changed."""
    started = time.monotonic()
    printed: list[str] = []
    op = first or fetch(ctx, op_id, interval)
    while True:
        lines = [status_line(op), *step_lines(op)]
        new = [line for line in lines if line not in printed]
        if new:
            ctx.out("\n".join(new))
        printed = lines
        if op.get("status") in ENDED:
            break
        if timeout is not None and time.monotonic() - started >= timeout:
            ctx.note(
                f"Operation {op_id} is still {op.get('status')} after {timeout:g} s; stopped "
                f"watching (it goes on: `corral ops watch {op_id}`)."
            )
            return FAILED
        time.sleep(interval)
        op = fetch(ctx, op_id, interval)
    return outcome(ctx, op)


def outcome(ctx: Context, op: dict) -> int:
    status = op.get("status")
    if status == "succeeded":
        ctx.out(f"Operation {op.get('id')} succeeded.")
        return OK
    why = op.get("error") or op.get("message") or "no reason given"
    ctx.note(f"Operation {op.get('id')} {status}: {why}")
    return FAILED
