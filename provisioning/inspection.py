"""What inspection checks: the GPUs a node was enrolled with against what its BMC reports.

A node enrolled as "8 × H100-SXM" whose BMC lists no GPU has lost its GPUs, or sits in
the wrong rack position, or its BMC hides them; either way it must not become ``ready``
silently. ``CORRAL_INSPECT_GPU_MISMATCH`` decides: ``fail`` (the default) fails the
inspection with the mismatch as the reason, ``flag`` lets the node reach ``ready`` with the
mismatch stored in its hardware facts and shown on its page.

Model names are compared loosely, because enrolment sheets and BMCs name one GPU
differently ("H100-SXM" and "NVIDIA H100 80GB HBM3"): see ``model_matches``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .drivers import BMCFatalError, Driver
from .runner import bmc_io

FAIL, FLAG = "fail", "flag"
_TOKEN = re.compile(r"[a-z0-9]+")


class HardwareMismatch(BMCFatalError):
    """The BMC reports other hardware than the node was enrolled with; retrying will not
    change what is in the machine."""


def read_bmc(
    driver: Driver, progress: Callable[[int, str], object] | None = None
) -> tuple[str, dict[str, Any], list[dict[str, Any]]]:
    """(power state, hardware facts, firmware inventory): what an inspection reads, and
    what ``manage.py inspect_bmc`` prints, by the same calls. Each read hands the database
    connection back while it waits on the BMC (runner.bmc_io)."""
    step = progress or (lambda percent, what: None)
    step(10, "reading power state")
    with bmc_io():
        power = driver.power.get_power_state()
    step(30, "reading hardware inventory")
    with bmc_io():
        hardware = driver.inspect.inspect().to_dict()
    step(70, "reading firmware inventory")
    with bmc_io():
        firmware = [c.to_dict() for c in driver.firmware.firmware()]
        hardware["unavailable"].update(driver.firmware.unavailable_parts())
    return power, hardware, firmware


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def model_matches(enrolled: str, reported: str | None) -> bool:
    """Whether a BMC's GPU model is the enrolled one.

    The enrolled model's first token that holds a digit (its family and generation:
    "H100" in "H100-SXM", "MI300X" in "AMD MI300X") must be a token of the reported
    model; an enrolled model without such a token must appear, letters and digits only,
    inside the reported one. Case and punctuation never matter, and a BMC that reports no
    model is not contradicting anything.
    """
    if not reported or not enrolled.strip():
        return True
    wanted, seen = _tokens(enrolled), _tokens(reported)
    key = next((t for t in wanted if any(c.isdigit() for c in t)), None)
    if key is not None:
        return key in seen
    return "".join(wanted) in "".join(seen)


def gpu_mismatch(expected_count: int, expected_model: str, hardware: dict[str, Any]) -> str | None:
    """A technician's sentence saying how the reported GPUs differ, or None if they agree.

    A node enrolled with no GPUs is never a mismatch (its model column is informational).
    """
    if not expected_count:
        return None
    gpus = hardware.get("gpus") or []
    models = [g.get("model") for g in gpus]
    if len(gpus) == expected_count and all(model_matches(expected_model, m) for m in models):
        return None
    expected = f"{expected_count} × {expected_model}"
    if not expected_model:
        expected = f"{expected_count} GPUs" if expected_count != 1 else "1 GPU"
    reported = f"{len(gpus)} GPUs" if len(gpus) != 1 else "1 GPU"
    if gpus:
        counts: dict[str, int] = {}
        for model in models:
            counts[model or "unknown model"] = counts.get(model or "unknown model", 0) + 1
        reported = ", ".join(f"{n} × {m}" for m, n in counts.items())
    message = f"expected {expected}, BMC reports {reported}"
    unavailable = hardware.get("unavailable") or {}
    # Parts that failed to read may be where the GPUs went; "gpus" alone says it all.
    parts = ("gpus",) if "gpus" in unavailable else _GPU_PARTS
    missing = {p: w for p, w in unavailable.items() if p in parts}
    if missing:
        message += " (" + "; ".join(f"{p} unavailable: {w}" for p, w in missing.items()) + ")"
    return message


def check_serial(enrolled: str, address: str, hardware: dict) -> str | None:
    """Record (and return) that the BMC answers for another machine than the node was
    enrolled as: its system's serial is a real one (placeholders were dropped when read)
    and not the node's. A swapped cable or a wrong address in a rack's manifest points a
    node at its neighbour's BMC; power actions would then cycle the neighbour. Flagged,
    not failed: some vendors' system serial is the board's, not the one on the label; a
    person decides (and a rack built to a template is not ready while it stands)."""
    hardware.pop("serial_mismatch", None)
    reported = (hardware.get("serial") or "").strip()
    if not reported or reported.casefold() == (enrolled or "").strip().casefold():
        return None
    message = f"the BMC at {address} answers for serial {reported}, not {enrolled}"
    hardware["serial_mismatch"] = message
    return message


_GPU_PARTS = ("gpus", "processors", "chassis", "chassis processors", "pcie devices")


def check_gpus(expected_count: int, expected_model: str, hardware: dict, mode: str) -> str | None:
    """Record a mismatch in the hardware facts; return it when the inspection must fail.

    When the protocol cannot list GPUs at all ("gpus" unavailable, as over IPMI) the
    mismatch is only flagged, whatever the mode: the gates check the GPUs in-band.
    """
    hardware.pop("mismatch", None)
    message = gpu_mismatch(expected_count, expected_model, hardware)
    if message is None:
        return None
    hardware["mismatch"] = message
    if mode == FLAG or "gpus" in (hardware.get("unavailable") or {}):
        return None
    return message
