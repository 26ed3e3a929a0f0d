"""What inspection saw of a GPU candidate: where, as what, and why it counts or not.

Kept apart from gpus.py so vendor modules (vendors/hpe.py) can make findings without
importing the finder that imports them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from provisioning.drivers.redfish import rules
from provisioning.drivers.redfish.reader import last_segment
from provisioning.drivers.results import GPU


@dataclass
class Finding:
    """One place a GPU, or something that looks like one, was seen."""

    resource: str
    found_as: str
    gpu: GPU | None  # None: not a GPU
    why: str
    links: set[str] = field(default_factory=set)
    ids: set[str] = field(default_factory=set)  # serial and UUID
    origins: set[str] = field(default_factory=set)  # the collections it was listed in
    pci: tuple[Any, ...] | None = None  # (Id, vendor, device) of a PCIe device
    merged_into: str | None = None

    @classmethod
    def make(
        cls,
        gpu: GPU | None,
        found_as: str,
        why: str,
        path: str,
        extra_links: list[str],
        pci: tuple[Any, ...] | None = None,
    ) -> Finding:
        path = path.rstrip("/")
        ids = {f"serial:{gpu.serial}"} if gpu and gpu.serial else set()
        ids |= {f"uuid:{gpu.uuid}"} if gpu and gpu.uuid else set()
        return cls(
            resource=path,
            found_as=found_as,
            gpu=gpu,
            why=why,
            links={p.rstrip("/") for p in [path, *extra_links]},
            ids=ids,
            origins={path.rsplit("/", 1)[0]},
            pci=pci,
        )

    def same_gpu(self, other: Finding) -> bool:
        """One GPU when the two share a resource link; or a serial, UUID or PCIe identity
        seen through two different collections (two members of one collection are two
        devices, even when a sloppy BMC gives them one serial)."""
        if self.links & other.links:
            return True
        if self.origins & other.origins:
            return False
        return bool(self.ids & other.ids) or (self.pci is not None and self.pci == other.pci)

    def explain(self) -> dict[str, Any]:
        counted = self.gpu is not None and self.merged_into is None
        verdict = "GPU" if counted else "same GPU" if self.gpu else "not a GPU"
        return {
            "resource": self.resource,
            "found_as": self.found_as,
            "verdict": verdict,
            "why": self.why + (f"; the same GPU as {self.merged_into}" if self.merged_into else ""),
        }


def gpu_of(data: dict[str, Any], path: str) -> GPU:
    return GPU(
        id=rules.text(data.get("Id")) or last_segment(path),
        model=rules.model(data),
        manufacturer=rules.text(data.get("Manufacturer")),
        serial=rules.serial(data.get("SerialNumber")),
        part_number=rules.text(data.get("PartNumber")),
        firmware_version=rules.text(data.get("FirmwareVersion")),
        uuid=(rules.text(data.get("UUID")) or "").lower() or None,
        location=_location(data),
        resource=path.rstrip("/"),
    )


def _location(data: dict[str, Any]) -> str | None:
    for holder in (data.get("Location"), (data.get("Slot") or {}).get("Location")):
        part = (holder or {}).get("PartLocation") if isinstance(holder, dict) else None
        if isinstance(part, dict) and rules.text(part.get("ServiceLabel")):
            return rules.text(part.get("ServiceLabel"))
    return rules.text(data.get("Socket"))
