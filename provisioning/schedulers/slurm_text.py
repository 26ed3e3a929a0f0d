"""Reading what scontrol and squeue print, and Slurm's hostlists: pure functions.

Kept apart from the adapter so the rules (what counts as drained, which error is whose
fault) are tested on captured output without a cluster, and so the exporter can compress
host names the way slurm.conf writes them. No Django here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

# `scontrol show node -o` prints one line per node; "OS=Linux 6.1 #1 SMP" and
# "Reason=corral: x [root@...]" hold spaces, so fields are found, not split.
_NODE_NAME = re.compile(r"^NodeName=(\S+)")
_STATE = re.compile(r"\sState=(\S+)")
_REASON = re.compile(r"\sReason=(.*?)(?:\s\[[^\]]*\])?\s*$")
_NOT_FOUND = re.compile(r"^Node (\S+) not found")

# Base states a node with the DRAIN flag is fully drained in: nothing allocated on it.
_DRAINED_BASES = {"IDLE", "DOWN"}
# Flags under which Slurm starts no new work on a node.
_UNSCHEDULABLE_FLAGS = {
    "DRAIN",
    "FAIL",
    "MAINT",
    "NOT_RESPONDING",
    "REBOOT_REQUESTED",
    "REBOOT_ISSUED",
    "POWERED_DOWN",
    "POWERING_DOWN",
    "INVALID_REG",
}
_SCHEDULABLE_BASES = {"IDLE", "MIXED", "ALLOCATED", "COMPLETING"}

# Job states in which a job still holds its nodes (squeue -t takes this list).
HOLDING_STATES = "RUNNING,COMPLETING,SUSPENDED,CONFIGURING,STAGE_OUT,SIGNALING,RESIZING"


@dataclass(frozen=True)
class NodeRecord:
    name: str
    state: str  # Slurm's long form, e.g. "MIXED+DRAIN"
    reason: str = ""


def parse_show_node(stdout: str) -> tuple[dict[str, NodeRecord], list[str]]:
    """`scontrol show node -o a,b,c` → (records by name, names Slurm does not know).

    An unknown name is a line "Node gpu009 not found" on stdout (exit status 1) while the
    known ones are still printed, so one answer serves a mixed batch.
    """
    records: dict[str, NodeRecord] = {}
    missing: list[str] = []
    for line in stdout.splitlines():
        line = line.strip()
        if not line:
            continue
        if gone := _NOT_FOUND.match(line):
            missing.append(gone.group(1))
            continue
        name = _NODE_NAME.match(line)
        state = _STATE.search(line)
        if name and state:
            reason = _REASON.search(line)
            records[name.group(1)] = NodeRecord(
                name.group(1), state.group(1), reason.group(1) if reason else ""
            )
    return records, missing


def parse_jobs(stdout: str) -> list[tuple[str, list[str]]]:
    """`squeue -h -o %i|%N` lines → (job id, the node names it holds, expanded)."""
    jobs = []
    for line in stdout.splitlines():
        job_id, _, nodelist = line.strip().partition("|")
        if job_id:
            jobs.append((job_id, expand_hostlist(nodelist)))
    return jobs


def split_state(state: str) -> tuple[str, set[str]]:
    """ "MIXED+DRAIN" → ("MIXED", {"DRAIN"}); a trailing "*" (not responding) is a flag."""
    parts = state.upper().split("+")
    base = parts[0]
    flags = set(parts[1:])
    if base.endswith("*"):
        base = base[:-1]
        flags.add("NOT_RESPONDING")
    return base, flags


def is_drained(state: str) -> bool:
    """DRAIN flag on a node with nothing allocated: IDLE+DRAIN or DOWN+DRAIN. MIXED+DRAIN,
    ALLOCATED+DRAIN and anything still COMPLETING are draining, not drained."""
    base, flags = split_state(state)
    return "DRAIN" in flags and base in _DRAINED_BASES and "COMPLETING" not in flags


def is_schedulable(state: str) -> bool:
    """Slurm may start new work here: an up base state and no blocking flag."""
    base, flags = split_state(state)
    return base in _SCHEDULABLE_BASES and not flags & _UNSCHEDULABLE_FLAGS


# --- errors ---------------------------------------------------------------------------

UNKNOWN_NODE = "unknown node"
UNREACHABLE = "unreachable"
INVALID_STATE = "invalid state"
REFUSED = "refused"

_ERRORS = (
    (UNKNOWN_NODE, ("Invalid node name specified", "Invalid node name")),
    (
        UNREACHABLE,
        (
            "Unable to contact slurm controller",
            "Socket timed out",
            "Communication connection failure",
            "Zero Bytes were transmitted or received",
            "Slurm backup controller in standby mode",
            "Connection refused",
        ),
    ),
    (INVALID_STATE, ("Invalid node state specified",)),
)


def classify_error(stderr: str) -> str:
    """Which of Slurm's refusals this is, from the client's own words."""
    for kind, needles in _ERRORS:
        if any(needle.lower() in stderr.lower() for needle in needles):
            return kind
    return REFUSED


def brief(text: str, limit: int = 300) -> str:
    """One line of a command's output for a technician's message."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


# --- hostlists ------------------------------------------------------------------------

_BRACKET = re.compile(r"^(.*?)\[([^\]]+)\](.*)$")


def _split_top(text: str) -> list[str]:
    """Split on commas outside brackets: "a[1-2],b" → ["a[1-2]", "b"]."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in (p.strip() for p in parts) if p]


def expand_hostlist(text: str) -> list[str]:
    """Slurm's hostlist expression → names: "gpu[001-003,007],login1" → five names.
    (Several bracket groups in one name are expanded left to right.)"""
    names: list[str] = []
    for part in _split_top(text):
        match = _BRACKET.match(part)
        if not match:
            names.append(part)
            continue
        prefix, ranges, rest = match.groups()
        for item in ranges.split(","):
            low, _, high = item.partition("-")
            width = len(low)
            for number in range(int(low), int(high or low) + 1):
                names.extend(expand_hostlist(f"{prefix}{number:0{width}d}{rest}"))
    return names


_NUMBERED = re.compile(r"^(.*?)(\d+)$")


def compress_hostlist(names: Iterable[str]) -> str:
    """Names → a hostlist expression slurm.conf accepts: gpu001..gpu003 + gpu007 →
    "gpu[001-003,007]". Names that do not end in digits are listed as they are."""
    groups: dict[tuple[str, int], list[int]] = {}
    plain: list[str] = []
    for name in sorted(set(names)):
        match = _NUMBERED.match(name)
        if match:
            prefix, digits = match.groups()
            groups.setdefault((prefix, len(digits)), []).append(int(digits))
        else:
            plain.append(name)
    parts = []
    for (prefix, width), numbers in sorted(groups.items()):
        numbers.sort()
        if len(numbers) == 1:
            parts.append(f"{prefix}{numbers[0]:0{width}d}")
            continue
        ranges, start, previous = [], numbers[0], numbers[0]
        for number in [*numbers[1:], None]:
            if number is not None and number == previous + 1:
                previous = number
                continue
            low, high = f"{start:0{width}d}", f"{previous:0{width}d}"
            ranges.append(low if start == previous else f"{low}-{high}")
            if number is not None:
                start = previous = number
        parts.append(f"{prefix}[{','.join(ranges)}]")
    return ",".join([*parts, *plain])
