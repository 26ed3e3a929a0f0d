"""Finding a system's GPUs wherever a BMC puts them, and saying why each one counts.

BMCs list GPUs as ``Processors`` of type GPU under the system, as ``PCIeDevices`` under the
system or its chassis (recognised by their functions' PCI class, rules.gpu_function), as
``Processors`` of a GPU baseboard chassis (ChassisType ``Module``) inside the system's
chassis, or in a vendor's own view (HPE's ``Chassis/1/Devices``, vendors/hpe.py). Many
show one GPU several ways at once, so findings are merged when they share a resource link
(a Processor's ``Links.PCIeDevice``/``PCIeFunctions``), a serial number or UUID seen in
two collections, or the same PCIe device Id and PCI ids in two collections (Dell lists
each device under both Systems and Chassis): a GPU is counted once.

Only chassis reached from the system (its ``Links.Chassis`` and what they ``Contains``) are
searched, never the whole Chassis collection: on a BMC that manages several systems the
neighbour's GPUs are not this node's. Every finding is kept with where it was found and
why it counts or not (``findings``), which ``inspect_bmc --explain`` prints.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from provisioning.drivers.redfish import rules
from provisioning.drivers.redfish.findings import Finding, gpu_of
from provisioning.drivers.redfish.reader import Reader, link, links
from provisioning.drivers.results import GPU

if TYPE_CHECKING:
    from provisioning.drivers.redfish.vendors.base import Profiles

MAX_CHASSIS = 64
is_gpu_processor = rules.is_gpu_processor
absent = rules.absent


def merge(findings: list[Finding]) -> list[GPU]:
    """Findings that are one GPU become one; the first seen (a Processor) leads and the
    others fill what it lacks (a PCIe device's serial or a model from its Name, say)."""
    heads: list[Finding] = []
    for finding in findings:
        if finding.gpu is None:
            continue
        matches = [h for h in heads if h.same_gpu(finding)]
        if not matches:
            heads.append(finding)
            continue
        head = matches[0]
        for other in [*matches[1:], finding]:
            head.links |= other.links
            head.ids |= other.ids
            head.origins |= other.origins
            other.merged_into = head.resource
            assert head.gpu is not None and other.gpu is not None
            for name, value in other.gpu.to_dict().items():
                if getattr(head.gpu, name) is None:
                    setattr(head.gpu, name, value)
        heads = [h for h in heads if h is head or all(h is not m for m in matches)]
    return [h.gpu for h in heads if h.gpu is not None]


class GpuFinder:
    def __init__(self, reader: Reader, system: dict[str, Any], profiles: Profiles) -> None:
        self.reader = reader
        self.system = system
        self.profiles = profiles
        self.findings: list[Finding] = []

    def find(self, system_processors: list[dict[str, Any]]) -> list[GPU]:
        devices: dict[str, dict[str, Any] | None] = {
            p.rstrip("/"): None for p in links(self.system, "PCIeDevices")
        }
        processors = [p for p in system_processors if is_gpu_processor(p)]
        chassis = self._chassis()
        for box in chassis:
            found = self.reader.members(link(box, "Processors"), "chassis processors")
            processors += [p for p in found if is_gpu_processor(p)]
            for listed in self.reader.members(link(box, "PCIeDevices"), "pcie devices"):
                devices[listed["@odata.id"].rstrip("/")] = listed
        gpu_paths: set[str] = set()
        for proc in processors:
            path = proc["@odata.id"]
            refs = links(proc.get("Links"), "PCIeDevice") + links(
                proc.get("Links"), "PCIeFunctions"
            )
            self.findings.append(
                Finding.make(gpu_of(proc, path), "Processor", "ProcessorType GPU", path, refs)
            )
            gpu_paths.add(path.rstrip("/"))
        for path, known in devices.items():
            device = known or self.reader.get(path, "pcie devices")
            if device is not None and not absent(device):
                self._device(path, device, gpu_paths)
        self.findings += self.profiles.extra_gpus(self.reader, chassis)
        return merge(self.findings)

    def _device(self, path: str, device: dict[str, Any], gpu_paths: set[str]) -> None:
        functions = self._functions(device)
        linked = {
            p.rstrip("/")
            for f in functions
            for p in links(f.get("Links"), "Processor") + links(f.get("Links"), "Processors")
        } | {p.rstrip("/") for p in links(device.get("Links"), "Processors")}
        refs = [f["@odata.id"] for f in functions if f.get("@odata.id")]
        refs += links(device.get("Links"), "PCIeFunctions") + sorted(linked & gpu_paths)
        first = functions[0] if functions else {}
        pci = (
            device.get("Id"),
            rules.pci_id(first.get("VendorId")),
            rules.pci_id(first.get("DeviceId")),
        )
        vga = rules.onboard_vga(device, functions)
        reason: str | None
        if linked & gpu_paths:
            reason = f"linked to GPU processor {min(linked & gpu_paths)}"
        else:
            reason = None if vga else rules.gpu_function(functions)
        if reason:
            gpu = gpu_of(device, path)
            self.findings.append(Finding.make(gpu, "PCIeDevice", reason, path, refs, pci))
        elif vga or _looks_like_gpu(device, functions):
            why = vga or _not_gpu(functions)
            self.findings.append(Finding.make(None, "PCIeDevice", why, path, refs, pci))

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
            found.append(dict(chassis, **{"@odata.id": path}))
            queue += links(chassis.get("Links"), "Contains")
        return found


def _looks_like_gpu(device: dict[str, Any], functions: list[dict[str, Any]]) -> bool:
    """Worth a line in the explanation: named like a GPU, or of a display/accelerator class."""
    named = " ".join(str(device.get(k) or "") for k in ("Name", "Model", "Description"))
    return "gpu" in named.lower() or any(
        rules.base_class(f) in (rules.DISPLAY_BASE, rules.ACCELERATOR_BASE) for f in functions
    )


def _not_gpu(functions: list[dict[str, Any]]) -> str:
    classes = sorted({c for f in functions if (c := rules.base_class(f)) is not None})
    if not classes:
        return "named like a GPU but no PCI function says what it is"
    return "PCI class " + ", ".join(f"{c:#04x}" for c in classes) + ": not a display or accelerator"
