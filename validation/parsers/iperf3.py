"""iperf3 ``-J`` output.

A run that failed (server busy, connection refused, interrupted) still produces JSON,
with an ``error`` key; that is a result with ``ok=False``, not a parse error, so the
gate can show iperf3's own reason. A JSON without ``error`` must carry the ``end``
summary, otherwise the run was cut off.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .base import ParseError, Result, check_text, get_path, load_json_object


@dataclasses.dataclass
class Iperf3Result(Result):
    tool = "iperf3"

    ok: bool
    error: str | None
    protocol: str | None
    num_streams: int | None
    received_bits_per_second: float | None
    sent_bits_per_second: float | None
    received_gbps: float | None
    retransmits: int | None
    duration_s: float | None
    version: str | None


def _number(block: dict[str, Any], path: str) -> float:
    value = get_path(block, path, (int, float), "a number")
    if isinstance(value, bool):
        raise ParseError("expected a number, got a boolean", key=path)
    return float(value)


def parse_iperf3(text: str) -> Iperf3Result:
    """Parse iperf3 JSON: received/sent throughput and TCP retransmits."""
    check_text(text, "iperf3 JSON output")
    doc = load_json_object(text, "iperf3 -J")
    start = s if isinstance(s := doc.get("start"), dict) else {}
    test_start = t if isinstance(t := start.get("test_start"), dict) else {}
    protocol = test_start.get("protocol")
    streams = test_start.get("num_streams")
    version = start.get("version")
    common: dict[str, Any] = {
        "protocol": str(protocol) if protocol is not None else None,
        "num_streams": streams if isinstance(streams, int) else None,
        "version": str(version) if version is not None else None,
    }
    if "error" in doc:
        return Iperf3Result(
            ok=False,
            error=str(doc["error"]),
            received_bits_per_second=None,
            sent_bits_per_second=None,
            received_gbps=None,
            retransmits=None,
            duration_s=None,
            **common,
        )
    end = get_path(doc, "end", dict, "the end-of-test summary (run cut short?)")
    if "sum_received" in end:
        received = _number(doc, "end.sum_received.bits_per_second")
        duration = _number(doc, "end.sum_received.seconds")
    else:
        # UDP tests summarise in end.sum (the receiver's view, with lost packets).
        received = _number(doc, "end.sum.bits_per_second")
        duration = _number(doc, "end.sum.seconds")
    sent = _number(doc, "end.sum_sent.bits_per_second") if "sum_sent" in end else None
    retransmits = None
    if isinstance(end.get("sum_sent"), dict) and "retransmits" in end["sum_sent"]:
        retransmits = int(_number(doc, "end.sum_sent.retransmits"))
    return Iperf3Result(
        ok=True,
        error=None,
        received_bits_per_second=received,
        sent_bits_per_second=sent,
        received_gbps=round(received / 1e9, 3),
        retransmits=retransmits,
        duration_s=duration,
        **common,
    )
