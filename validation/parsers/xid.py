"""NVIDIA XID lines from a kernel log (``dmesg``, ``journalctl -k``, ``/var/log/kern.log``).

Lines look like ``NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen
off the bus.``; older drivers omit ``PCI:`` or the ``pid=``/``name=`` fields, and pid can
be ``'<unknown>'``. Every other log line is ignored, so an empty log (for example a
``grep Xid`` with no matches) is a clean result. But a line that says ``NVRM: Xid`` and
does not parse is a ParseError: a cut-off or mangled XID must never read as "no XIDs".
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter

from .base import ParseError, Result, numbered_lines
from .xid_catalog import classify, worst_action

_MARKER = re.compile(r"NVRM: Xid\b", re.IGNORECASE)
_XID = re.compile(
    r"NVRM: Xid \((?:PCI:)?(?P<pci>[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.\d)?)\):"
    r"\s*(?P<code>\d+),\s*"
    r"(?:pid=(?P<pid>'?<?[^,]*?>?'?),\s*name=(?P<name>[^,]*),\s*)?"
    r"(?P<message>.*)$"
)


@dataclasses.dataclass
class XidEvent:
    pci: str
    code: int
    pid: int | None
    name: str | None
    action: str
    mnemonic: str
    message: str
    line: int


@dataclasses.dataclass
class XidResult(Result):
    tool = "xid"

    xids: list[XidEvent]
    codes: dict[int, int]
    by_action: dict[str, int]
    worst_action: str | None
    gpus: list[str]


def parse_xid(text: str) -> XidResult:
    """Extract XID events with NVIDIA's action class from kernel log text."""
    if not isinstance(text, str):
        raise ParseError(f"expected kernel log text, got {type(text).__name__}")
    if "\x00" in text:
        nul_line = text.count("\n", 0, text.index("\x00")) + 1
        raise ParseError("expected kernel log text, found a NUL byte (binary data)", line=nul_line)
    events = []
    for number, line in numbered_lines(text):
        if not _MARKER.search(line):
            continue
        match = _XID.search(line)
        if not match:
            raise ParseError(
                "expected 'NVRM: Xid (PCI:dddd:bb:dd): <code>, ...' on a line mentioning "
                "NVRM: Xid (truncated or garbled?)",
                line=number,
            )
        info = classify(int(match.group("code")))
        pid = (match.group("pid") or "").strip("'<> ")
        name = match.group("name")
        events.append(
            XidEvent(
                pci=match.group("pci").lower(),
                code=int(match.group("code")),
                pid=int(pid) if pid.isdigit() else None,
                name=None if name is None or name.strip("<> ") == "unknown" else name.strip(),
                action=info.action,
                mnemonic=info.name,
                message=match.group("message").strip(),
                line=number,
            )
        )
    actions = [e.action for e in events]
    return XidResult(
        xids=events,
        codes=dict(sorted(Counter(e.code for e in events).items())),
        by_action=dict(Counter(actions)),
        worst_action=worst_action(actions),
        gpus=sorted({e.pci for e in events}),
    )
