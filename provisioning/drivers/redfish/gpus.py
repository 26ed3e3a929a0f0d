"""Finding a system's GPUs wherever the Redfish standard lets a BMC put them.

BMCs differ: some list GPUs as ``Processors`` of type GPU under the system, some only as
chassis ``PCIeDevices`` (recognisable by their functions' PCI class: base class 0x03,
display controller, 0x0302 being a 3D controller), and GPU baseboards (NVIDIA HGX, CXL
type 2 cards) hang them as ``Processors`` under a chassis of their own (ChassisType
``Module``, ``Card``, ``Component``...) inside the system's chassis. Many BMCs show one GPU
several of those ways at once, so candidates are merged when they share a resource link
(a Processor's ``Links.PCIeDevice``/``PCIeFunctions``, a function's ``Links.Processor``),
a serial number or a UUID: a GPU is counted once.

Only chassis reached from the system (its ``Links.Chassis`` and what they ``Contains``) are
searched, never the whole Chassis collection: on a BMC that manages several systems, or
that exposes pooled devices, the neighbour's GPUs are not this node's. Redfish has no
standard property for a GPU's PCI bus address, so none is reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from provisioning.drivers.redfish.reader import Reader, last_segment, link, links
from provisioning.drivers.results import GPU

MAX_CHASSIS = 64
_DISPLAY_CLASS = "DisplayController"
_DISPLAY_CLASS_CODE = "0x03"  # PCI base class 03; 0x0302xx is a 3D controller


def is_gpu_processor(proc: dict[str, Any]) -> bool:
    return proc.get("ProcessorType") == "GPU" and not absent(proc)


def absent(data: dict[str, Any]) -> bool:
    status = data.get("Status")
    return isinstance(status, dict) and status.get("State") == "Absent"


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _location(data: dict[str, Any]) -> str | None:
    for holder in (data.get("Location"), (data.get("Slot") or {}).get("Location")):
        part = (holder or {}).get("PartLocation") if isinstance(holder, dict) else None
        if isinstance(part, dict) and _text(part.get("ServiceLabel")):
            return _text(part.get("ServiceLabel"))
    return _text(data.get("Socket"))


@dataclass
class _Candidate:
    gpu: GPU
    links: set[str] = field(default_factory=set)
    ids: set[str] = field(default_factory=set)  # serial and UUID
    origins: set[str] = field(default_factory=set)  # the collections it was listed in

    def same_gpu(self, other: _Candidate) -> bool:
        """One GPU when the two share a resource link, or a serial or UUID seen through two
        different collections (two members of one collection are two devices, even when a
        sloppy BMC gives them one serial)."""
        if self.links & other.links:
            return True
        return bool(self.ids & other.ids) and not self.origins & other.origins


def _candidate(data: dict[str, Any], extra_links: list[str]) -> _Candidate:
    path = data["@odata.id"].rstrip("/")
    gpu = GPU(
        id=_text(data.get("Id")) or last_segment(path),
        model=_text(data.get("Model")),
        manufacturer=_text(data.get("Manufacturer")),
        serial=_text(data.get("SerialNumber")),
        part_number=_text(data.get("PartNumber")),
        firmware_version=_text(data.get("FirmwareVersion")),
        uuid=(_text(data.get("UUID")) or "").lower() or None,
        location=_location(data),
        resource=path,
    )
    ids = {f"serial:{gpu.serial}"} if gpu.serial else set()
    ids |= {f"uuid:{gpu.uuid}"} if gpu.uuid else set()
    return _Candidate(
        gpu,
        links={p.rstrip("/") for p in [path, *extra_links]},
        ids=ids,
        origins={path.rsplit("/", 1)[0]},
    )


def _merge(candidates: list[_Candidate]) -> list[GPU]:
    """Candidates that are one GPU become one; the first seen (a Processor) leads and the
    others fill what it lacks (a PCIe device's serial or firmware version, say)."""
    merged: list[_Candidate] = []
    for cand in candidates:
        matches = [m for m in merged if m.same_gpu(cand)]
        if not matches:
            merged.append(cand)
            continue
        head = matches[0]
        for other in [*matches[1:], cand]:
            head.links |= other.links
            head.ids |= other.ids
            head.origins |= other.origins
            for name, value in other.gpu.to_dict().items():
                if getattr(head.gpu, name) is None:
                    setattr(head.gpu, name, value)
        merged = [m for m in merged if m is head or all(m is not x for x in matches)]
    return [m.gpu for m in merged]


class GpuFinder:
    def __init__(self, reader: Reader, system: dict[str, Any]) -> None:
        self.reader = reader
        self.system = system

    def find(self, system_processors: list[dict[str, Any]]) -> list[GPU]:
        candidates: list[_Candidate] = []
        gpu_paths: set[str] = set()
        devices: dict[str, dict[str, Any] | None] = {
            p.rstrip("/"): None for p in links(self.system, "PCIeDevices")
        }
        processors = [p for p in system_processors if is_gpu_processor(p)]
        for chassis in self._chassis():
            chassis_procs = self.reader.members(link(chassis, "Processors"), "chassis processors")
            processors += [p for p in chassis_procs if is_gpu_processor(p)]
            for listed in self.reader.members(link(chassis, "PCIeDevices"), "pcie devices"):
                devices[listed["@odata.id"].rstrip("/")] = listed
        for proc in processors:
            to = proc.get("Links")
            refs = links(to, "PCIeDevice") + links(to, "PCIeFunctions")
            candidates.append(_candidate(proc, refs))
            gpu_paths.add(proc["@odata.id"].rstrip("/"))
        for path, known in devices.items():
            device = known or self.reader.get(path, "pcie devices")
            if device is None or absent(device):
                continue
            device.setdefault("@odata.id", path)
            functions = self._functions(device)
            linked = {
                p.rstrip("/")
                for f in functions
                for p in links(f.get("Links"), "Processor") + links(f.get("Links"), "Processors")
            } | {p.rstrip("/") for p in links(device.get("Links"), "Processors")}
            display = any(
                f.get("DeviceClass") == _DISPLAY_CLASS
                or str(f.get("ClassCode") or "").lower().startswith(_DISPLAY_CLASS_CODE)
                for f in functions
            )
            if display or linked & gpu_paths:
                refs = [f["@odata.id"] for f in functions] + sorted(linked & gpu_paths)
                candidates.append(_candidate(device, refs))
        return _merge(candidates)

    def _functions(self, device: dict[str, Any]) -> list[dict[str, Any]]:
        collection = link(device, "PCIeFunctions")
        if collection:
            return self.reader.members(collection, "pcie functions")
        # Older PCIeDevice versions link their functions from Links.
        found = [
            (p, self.reader.get(p, "pcie functions"))
            for p in links(device.get("Links"), "PCIeFunctions")
        ]
        return [dict(f, **{"@odata.id": p}) for p, f in found if f is not None]

    def _chassis(self) -> list[dict[str, Any]]:
        """The system's chassis and, recursively, the chassis they contain."""
        queue = links(self.system.get("Links"), "Chassis")
        seen: set[str] = set()
        found: list[dict[str, Any]] = []
        while queue and len(seen) < MAX_CHASSIS:
            path = queue.pop(0).rstrip("/")
            if path in seen:
                continue
            seen.add(path)
            chassis = self.reader.get(path, "chassis")
            if chassis is None:
                continue
            found.append(chassis)
            queue += links(chassis.get("Links"), "Contains")
        return found
