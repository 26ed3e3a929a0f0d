"""Redfish hardware inventory (sensors.py: health; firmware.py; gpus.py: GPUs).

Resources are read as JSON through sushy's connector rather than sushy's typed
resources: vendors differ in which optional links they fill, and one missing or odd
sub-resource (404, absent DIMM, VLAN pseudo-NIC) must not cost the whole inventory.
"""

from __future__ import annotations

from typing import Any

from inventory.macs import mac_or_none
from provisioning.drivers.base import (
    HEALTH_CRITICAL,
    HEALTH_OK,
    HEALTH_UNKNOWN,
    HEALTH_WARNING,
    InspectInterface,
)
from provisioning.drivers.redfish import rules
from provisioning.drivers.redfish.client import RedfishClient
from provisioning.drivers.redfish.console import offers_ssh_console
from provisioning.drivers.redfish.gpus import GpuFinder, absent
from provisioning.drivers.redfish.reader import Reader, last_segment, link, links
from provisioning.drivers.redfish.vendors import Profiles, service_profiles
from provisioning.drivers.results import (
    NIC,
    Drive,
    HardwareFacts,
)

_HEALTH = {"OK": HEALTH_OK, "Warning": HEALTH_WARNING, "Critical": HEALTH_CRITICAL}
_SEVERITY = [HEALTH_UNKNOWN, HEALTH_OK, HEALTH_WARNING, HEALTH_CRITICAL]
MAX_SENSORS = 256


def _health(data: dict[str, Any], rollup: bool = False) -> str:
    status = s if isinstance(s := data.get("Status"), dict) else {}
    value: Any = (status.get("HealthRollup") if rollup else None) or status.get("Health")
    return _HEALTH.get(value, HEALTH_UNKNOWN)


def worst(statuses: list[str]) -> str:
    """Overall health: the most severe known status, unknown only if nothing is known."""
    return max(statuses, key=_SEVERITY.index, default=HEALTH_UNKNOWN)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


class RedfishInspect(InspectInterface):
    def __init__(self, client: RedfishClient) -> None:
        self.client = client
        # Where each GPU candidate was found and why it counts or not (inspect_bmc --explain).
        self.findings: list[dict[str, Any]] = []
        self.profiles: list[str] = []

    def inspect(self) -> HardwareFacts:
        with self.client.translate("reading the hardware inventory"):
            system = self.client.get_json(self.client.system_path)
            reader = Reader(self.client)
            profiles = service_profiles(self.client)
            self.profiles = profiles.names
            facts = HardwareFacts(
                manufacturer=rules.text(system.get("Manufacturer")),
                model=rules.text(system.get("Model")),
                serial=rules.serial(system.get("SerialNumber")),
                uuid=(system.get("UUID") or "").lower() or None,
                bios_version=rules.text(system.get("BiosVersion")),
                serial_console="ssh" if offers_ssh_console(system) else None,
            )
            processors = reader.members(link(system, "Processors"), "processors")
            _cpus(facts, system, processors)
            finder = GpuFinder(reader, system, profiles)
            facts.gpus = finder.find(processors)
            findings = finder.findings
            own_id = last_segment(self.client.system_path)
            chosen = self.client.settings.gpu_system_id
            others = [chosen] if chosen else profiles.gpu_systems(own_id, profiles.system_ids)
            for other in others:
                gpus, seen = self._gpu_system(reader, other, profiles)
                findings += seen
                if gpus:  # the baseboard describes the GPUs the host sees on its PCIe bus
                    for finding in finder.findings:
                        if finding.gpu is not None and finding.merged_into is None:
                            finding.merged_into = f"{other} (the GPU baseboard describes it)"
                    facts.gpus = gpus
            self.findings = [f.explain() for f in findings]
            memory = system.get("MemorySummary") or {}
            facts.memory_gib = _number(memory.get("TotalSystemMemoryGiB"))
            facts.nics = self._nics(reader, system)
            facts.drives = self._drives(reader, system)
            facts.unavailable.update(reader.unavailable)
        return facts

    def _gpu_system(self, reader: Reader, system_id: str, profiles: Profiles) -> tuple[list, list]:
        """The GPUs of another system of this BMC that belongs to the node (an HGX baseboard)."""
        path = f"{self.client.system_path.rstrip('/').rsplit('/', 1)[0]}/{system_id}"
        other = reader.get(path, "gpus")
        if other is None:
            return [], []
        finder = GpuFinder(reader, other, profiles)
        gpus = finder.find(reader.members(link(other, "Processors"), "gpus"))
        return gpus, finder.findings

    def _nics(self, reader: Reader, system: dict[str, Any]) -> list[NIC]:
        nics: list[NIC] = []
        seen: set[str] = set()
        for nic in reader.members(link(system, "EthernetInterfaces"), "nics"):
            # VLAN pseudo-interfaces repeat a physical MAC; the host interface is the
            # BMC's own USB NIC and never carries PXE traffic.
            if nic.get("EthernetInterfaceType") == "Virtual" or link(
                nic.get("Links") or {}, "HostInterface"
            ):
                continue
            mac = mac_or_none(nic.get("MACAddress")) or mac_or_none(nic.get("PermanentMACAddress"))
            if not mac or mac in seen:
                continue
            seen.add(mac)
            state = nic.get("LinkStatus")
            nics.append(
                NIC(
                    id=_id(nic),
                    mac=mac,
                    permanent_mac=mac_or_none(nic.get("PermanentMACAddress")),
                    speed_mbps=nic.get("SpeedMbps"),
                    link_up=None if state is None else state == "LinkUp",
                )
            )
        return nics

    def _drives(self, reader: Reader, system: dict[str, Any]) -> list[Drive]:
        drives: list[Drive] = []
        for storage in reader.members(link(system, "Storage"), "storage"):
            for path in links(storage, "Drives"):
                drive = reader.get(path, "drives")
                if drive is not None and not absent(drive):
                    drives.append(
                        Drive(
                            name=drive.get("Name") or _id(drive, path),
                            size_bytes=drive.get("CapacityBytes"),
                            model=drive.get("Model"),
                            manufacturer=drive.get("Manufacturer"),
                            serial=drive.get("SerialNumber"),
                        )
                    )
        if drives:
            return drives
        for controller in reader.members(link(system, "SimpleStorage"), "simple storage"):
            for device in controller.get("Devices") or []:
                if isinstance(device, dict) and not absent(device):
                    drives.append(
                        Drive(
                            name=device.get("Name") or "",
                            model=device.get("Model"),
                            size_bytes=device.get("CapacityBytes"),
                            manufacturer=device.get("Manufacturer"),
                        )
                    )
        return drives


def _id(data: dict[str, Any], path: str | None = None) -> str:
    """The resource's Id, else the last segment of its path: never the string "None"."""
    value = data.get("Id")
    if isinstance(value, str | int) and str(value).strip():
        return str(value)
    return last_segment(path or data.get("@odata.id") or "") or "unknown"


def _cpus(facts: HardwareFacts, system: dict[str, Any], processors: list[dict[str, Any]]) -> None:
    """CPU facts from the Processors members; ProcessorSummary only when none could be read.

    Some BMCs count GPUs (and FPGAs) in ProcessorSummary, so the summary would report a
    GPU server's GPUs as CPUs whenever one member of the collection failed to read.
    """
    summary = system.get("ProcessorSummary") or {}
    if not processors:
        facts.cpu_count = summary.get("Count")
        facts.cpu_model = summary.get("Model")
        facts.cpu_cores = summary.get("CoreCount")
        facts.cpu_threads = summary.get("LogicalProcessorCount")
        return
    cpus = [p for p in processors if p.get("ProcessorType") in (None, "CPU") and not absent(p)]
    facts.cpu_count = len(cpus)
    facts.cpu_model = cpus[0].get("Model") if cpus else None
    cores: list[Any] = [p.get("TotalCores") for p in cpus]
    threads: list[Any] = [p.get("TotalThreads") for p in cpus]
    facts.cpu_cores = sum(cores) if cpus and all(isinstance(c, int) for c in cores) else None
    facts.cpu_threads = sum(threads) if cpus and all(isinstance(t, int) for t in threads) else None
