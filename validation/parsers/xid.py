"""NVIDIA XID lines from a kernel log (``dmesg``, ``journalctl -k``, ``/var/log/kern.log``).

Lines look like ``NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen
off the bus.``; older drivers omit ``PCI:`` or the ``pid=``/``name=`` fields, and pid can
be ``'<unknown>'``. A line that says ``NVRM: Xid`` and does not parse is a ParseError: a
cut-off or mangled XID must never read as "no XIDs".

Two driver messages convict a GPU without an Xid line of their own, and become events
with ``source="nvrm"`` (one per GPU):

- "GPU has fallen off the bus" from the resource manager (``NVRM: GPU 0000:3b:00.0: GPU
  has fallen off the bus.``) or at probe time (``NVRM: The NVIDIA GPU 0000:3b:00.0`` ...
  ``fallen off the bus and is not responding to commands.``, one to three lines): Xid
  79's condition, so code 79 and its class; dropped when the log has the Xid 79 itself.
- ``RmInitAdapter failed!`` for a GPU (older drivers name none): the GPU did not
  initialise; code None, classed like Xid 143 (GPU_INIT_ERROR).

Xid 45 (a channel torn down after an earlier error) is informational on its own, but
when its message names the Xid that caused it ("... previous Xid 149/145") it takes the
worst class of the Xids it names (``caused_by``). Every other log line is ignored, so an
empty log (for example a ``grep Xid`` with no matches) is a clean result.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter

from .base import ParseError, Result, numbered_lines
from .xid_catalog import classify, worst_action

_MARKER = re.compile(r"NVRM: Xid\b", re.IGNORECASE)
_BDF = r"(?P<pci>[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2})(?:\.[0-7])?"
_BUS_RM = re.compile(rf"NVRM: GPU {_BDF}: (?P<message>GPU has fallen off the bus.*)$")
_BUS_PROBE = re.compile(rf"NVRM: The NVIDIA GPU {_BDF}")
_BUS_PROBE_END = re.compile(r"fallen off the bus and is not responding", re.IGNORECASE)
_INIT = re.compile(rf"NVRM: (?:GPU {_BDF}(?: / \S+)?: )?(?P<message>RmInitAdapter failed.*)$")
_CAUSE = re.compile(r"\bXid\s*#?\s*(\d+(?:\s*/\s*\d+)*)", re.IGNORECASE)
_INIT_CLASS = classify(143)  # GPU_INIT_ERROR: the driver could not initialise the GPU
_PROBE_WINDOW = 3  # the probe message spans up to three lines
_XID = re.compile(
    r"NVRM: Xid \((?:PCI:)?(?P<pci>[0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.\d)?)\):"
    r"\s*(?P<code>\d+),\s*"
    r"(?:pid=(?P<pid>'?<?[^,]*?>?'?),\s*name=(?P<name>[^,]*),\s*)?"
    r"(?P<message>.*)$"
)


@dataclasses.dataclass
class XidEvent:
    pci: str
    code: int | None
    pid: int | None
    name: str | None
    action: str
    mnemonic: str
    message: str
    line: int
    source: str = "xid"  # "xid": an NVRM Xid line; "nvrm": a driver line with no Xid
    caused_by: list[int] = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class XidResult(Result):
    tool = "xid"

    xids: list[XidEvent]
    codes: dict[int, int]
    by_action: dict[str, int]
    worst_action: str | None
    gpus: list[str]


def gpu_key(pci: str) -> str:
    """``00000000:3B:00.0`` and ``0000:3b:00`` name the same GPU: ``0000:3b:00``."""
    domain, bus, device = pci.split(".")[0].split(":")
    return f"{int(domain, 16):04x}:{bus.lower()}:{device.lower()}"


def _xid_event(match: re.Match[str], number: int) -> XidEvent:
    code = int(match.group("code"))
    info = classify(code)
    pid = (match.group("pid") or "").strip("'<> ")
    name = match.group("name")
    message = match.group("message").strip()
    action, causes = info.action, []
    if info.nvidia_action == "WORKFLOW_XID_45":
        causes = [int(n) for group in _CAUSE.findall(message) for n in re.split(r"\s*/\s*", group)]
        causes = [c for c in dict.fromkeys(causes) if c != code]
        action = worst_action([action, *(classify(c).action for c in causes)]) or action
    return XidEvent(
        pci=match.group("pci").lower(),
        code=code,
        pid=int(pid) if pid.isdigit() else None,
        name=None if name is None or name.strip("<> ") == "unknown" else name.strip(),
        action=action,
        mnemonic=info.name,
        message=message,
        line=number,
        caused_by=causes,
    )


def _driver_event(pci: str, code: int | None, message: str, number: int) -> XidEvent:
    info = classify(code) if code is not None else _INIT_CLASS
    return XidEvent(
        pci=gpu_key(pci) if pci else "",
        code=code,
        pid=None,
        name=None,
        action=info.action,
        mnemonic=info.name if code is not None else "RM_INIT_ADAPTER_FAILED",
        message=message.strip(),
        line=number,
        source="nvrm",
    )


def _driver_line(line: str, number: int, probe: tuple[str, int] | None) -> XidEvent | None:
    if match := _BUS_RM.search(line):
        return _driver_event(match.group("pci"), 79, match.group("message"), number)
    if probe and number - probe[1] < _PROBE_WINDOW and _BUS_PROBE_END.search(line):
        return _driver_event(probe[0], 79, "fallen off the bus and is not responding", number)
    if match := _INIT.search(line):
        return _driver_event(match.group("pci") or "", None, match.group("message"), number)
    return None


def _deduplicate(xids: list[XidEvent], driver: list[XidEvent]) -> list[XidEvent]:
    """One driver event per GPU and kind, none for a GPU whose Xid 79 is in the log."""
    seen: set[tuple[str, int | None]] = {(gpu_key(e.pci), e.code) for e in xids if e.code == 79}
    kept = []
    for event in driver:
        key = (event.pci, event.code)
        if key not in seen:
            seen.add(key)
            kept.append(event)
    return sorted(xids + kept, key=lambda e: e.line)


def parse_xid(text: str) -> XidResult:
    """Extract XID events with NVIDIA's action class from kernel log text."""
    if not isinstance(text, str):
        raise ParseError(f"expected kernel log text, got {type(text).__name__}")
    if "\x00" in text:
        nul_line = text.count("\n", 0, text.index("\x00")) + 1
        raise ParseError("expected kernel log text, found a NUL byte (binary data)", line=nul_line)
    xids: list[XidEvent] = []
    driver: list[XidEvent] = []
    probe: tuple[str, int] | None = None
    for number, line in numbered_lines(text):
        if _MARKER.search(line):
            match = _XID.search(line)
            if not match:
                raise ParseError(
                    "expected 'NVRM: Xid (PCI:dddd:bb:dd): <code>, ...' on a line mentioning "
                    "NVRM: Xid (truncated or garbled?)",
                    line=number,
                )
            xids.append(_xid_event(match, number))
            continue
        if match := _BUS_PROBE.search(line):
            probe = (match.group("pci"), number)
        if event := _driver_line(line, number, probe):
            driver.append(event)
    events = _deduplicate(xids, driver)
    actions = [e.action for e in events]
    return XidResult(
        xids=events,
        codes=dict(sorted(Counter(e.code for e in events if e.code is not None).items())),
        by_action=dict(Counter(actions)),
        worst_action=worst_action(actions),
        gpus=sorted({e.pci for e in events if e.pci}),
    )
