"""What the gates' output says about which part failed: pure functions over a gate run's
failing results, so a case opens naming `GPU 3` with its PCI address and serial instead of
"see the evidence"."""

from __future__ import annotations

import re
from typing import Any

PCI = re.compile(
    r"\b((?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?)(?![0-9a-fA-F])"
)
GPU_INDEX = re.compile(r"\bGPU\s*#?(\d{1,2})\b", re.IGNORECASE)
SERIAL = re.compile(r"\bserial\s+([^\s,()?]+)")


def _norm_pci(value: str) -> str:
    """`3B:00.0`, `0000:3b:00` and `00000000:3B:00.0` name the same GPU (bus and device;
    the kernel's XID line leaves out the function)."""
    parts = value.lower().split(":")
    return f"{parts[-2]}:{parts[-1].split('.')[0]}"


def _gpu_facts(facts: dict[str, Any]) -> list[dict[str, Any]]:
    gpus = facts.get("gpus") if isinstance(facts, dict) else None
    return [g for g in gpus or [] if isinstance(g, dict)]


def suspected_component(lines: list[str], facts: dict[str, Any]) -> dict[str, Any]:
    """The first GPU a failing line names (by index or PCI address), with whatever the
    node's facts know of it (serial, UUID, model). Empty when no line names a GPU."""
    gpus = _gpu_facts(facts)
    for line in lines:
        if pci := PCI.search(line):
            wanted = _norm_pci(pci.group(1))
            for position, known in enumerate(gpus):
                address = str(known.get("pci_address") or known.get("pci_bus_id") or "x:x")
                if _norm_pci(address) == wanted:
                    return _describe(position, known, pci.group(1))
            serial = SERIAL.search(line)
            return _describe(None, {"serial": serial.group(1) if serial else None}, pci.group(1))
        if idx := GPU_INDEX.search(line):
            index = int(idx.group(1))
            match = next((g for g in gpus if str(g.get("index")) == str(index)), None)
            if match is None and index < len(gpus):
                match = gpus[index]
            return _describe(index, match or {}, None)
    return {}


def _describe(index: int | None, gpu: dict[str, Any], pci: str | None) -> dict[str, Any]:
    found = {
        "name": f"GPU {gpu.get('index', index)}" if index is not None else f"GPU {pci}",
        "pci_address": gpu.get("pci_address") or gpu.get("pci_bus_id") or pci,
        "serial": gpu.get("serial"),
        "uuid": gpu.get("uuid"),
        "model": gpu.get("model") or gpu.get("name"),
    }
    return {k: v for k, v in found.items() if v not in (None, "")}
