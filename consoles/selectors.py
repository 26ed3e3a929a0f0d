"""Reading console logs: whole, or their last lines as a terminal would have shown them."""

from __future__ import annotations

import re

from provisioning.drivers import CONSOLE_PROTOCOLS, LIVE_CONSOLE_PROTOCOLS, PROTOCOL_REDFISH

from .models import ConsoleChunk, ConsoleLog, ConsoleSession

# Escape sequences a terminal acts on and a page must not show: CSI (colours, cursor
# moves), OSC (titles) and the two-byte ones; then control characters but tab and newline.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]")
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def logs_of(node_id: int, limit: int = 10) -> list[ConsoleLog]:
    return list(ConsoleLog.objects.filter(node_id=node_id).select_related("operation")[:limit])


def no_console(node, live: bool = False) -> str:
    """Why the node's console is not recorded (or, `live`, cannot be opened), where its
    BMC offers none Corral can attach to ("" where it does). A live console is tried on
    any BMC that may have one (the BMC says if not); a Redfish BMC's deploys are recorded
    where inspection found its serial console over SSH, since many offer none."""
    bmc = getattr(node, "bmc", None)
    if bmc is None:
        return "it has no BMC recorded"
    kind = bmc.get_protocol_display()
    if live:
        if bmc.protocol in LIVE_CONSOLE_PROTOCOLS:
            return ""
        return f"its BMC ({kind}) offers no serial console Corral can attach to yet"
    if bmc.protocol in CONSOLE_PROTOCOLS:
        return ""
    if bmc.protocol == PROTOCOL_REDFISH:
        facts = node.hardware_facts or {}
        if facts.get("serial_console") == "ssh":
            return ""
        if not node.inspected_at:
            return "whether its BMC offers a serial console is known once the node is inspected"
        return "its BMC offers no serial console over SSH (its SerialConsole.SSH, as inspected)"
    return f"Corral does not record the consoles of {kind} BMCs yet"


def sessions_of(node_id: int, limit: int = 5) -> list[ConsoleSession]:
    """The node's latest live console sessions: who was at its console, and for how long."""
    return list(ConsoleSession.objects.filter(node_id=node_id)[:limit])


def output(log: ConsoleLog) -> bytes:
    """The kept output, as the machine wrote it."""
    chunks = ConsoleChunk.objects.filter(log=log).order_by("id").values_list("data", flat=True)
    return b"".join(bytes(chunk) for chunk in chunks)


def readable(data: bytes) -> str:
    """`data` as text a page can show: UTF-8 (anything else replaced), escape sequences and
    control characters gone, a carriage return overwriting its line as on a terminal."""
    text = _ESCAPES.sub("", data.decode("utf-8", errors="replace"))
    lines = []
    for line in text.replace("\r\n", "\n").split("\n"):
        shown = [part for part in line.split("\r") if part] or [""]
        lines.append(_CONTROLS.sub("", shown[-1]))
    return "\n".join(lines)


def last_lines(log: ConsoleLog, count: int = 40) -> list[str]:
    """The last `count` lines with something on them."""
    lines = [line for line in readable(output(log)).split("\n") if line.strip()]
    return lines[-count:]
