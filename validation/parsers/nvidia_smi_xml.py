"""``nvidia-smi -q -x`` XML output.

Pulls what acceptance and inventory care about: driver and CUDA version, and per GPU
its identity (uuid, serial, VBIOS, PCI bus id), ECC error counts (volatile and
aggregate, summed into correctable/uncorrectable because the element names changed
across generations: ``single_bit``/``double_bit`` with a ``total`` before Ampere,
``sram_*``/``dram_*`` after), retired pages (pre-Ampere), remapped rows (Ampere+,
including the pending flag that means "reset before use") and temperatures.

``attached_gpus`` must match the number of ``<gpu>`` elements: a cut-off document that
still parses (it will not, but a truncated-then-closed one could) must not lose GPUs.
"""

from __future__ import annotations

import dataclasses
import re
import xml.etree.ElementTree as ET

from .base import ParseError, Result, check_text


@dataclasses.dataclass
class EccCounts:
    correctable: int | None
    uncorrectable: int | None


@dataclasses.dataclass
class SmiGpu:
    pci_bus_id: str
    product_name: str | None
    uuid: str
    serial: str | None
    vbios_version: str | None
    ecc_mode: str | None
    ecc_volatile: EccCounts
    ecc_aggregate: EccCounts
    retired_pages_sbe: int | None
    retired_pages_dbe: int | None
    retired_pages_pending: bool | None
    remapped_rows_correctable: int | None
    remapped_rows_uncorrectable: int | None
    remapped_rows_pending: bool | None
    remapped_rows_failure: bool | None
    temperature_gpu_c: int | None
    temperature_memory_c: int | None
    # What the driver asks to be done before the GPU is used again, after an uncorrectable
    # error ("None": nothing; NVML's GPU reset, node reboot, drain P2P, ...); None when
    # the driver does not report it (before about driver 550).
    recovery_action: str | None = None


@dataclasses.dataclass
class NvidiaSmiXmlResult(Result):
    tool = "nvidia-smi-xml"

    driver_version: str
    cuda_version: str | None
    attached_gpus: int
    gpus: list[SmiGpu]


def _text(node: ET.Element | None, path: str) -> str | None:
    if node is None:
        return None
    found = node.find(path)
    if found is None or found.text is None:
        return None
    value = found.text.strip()
    return None if value in ("", "N/A", "[N/A]", "Not Supported", "[Not Supported]") else value


def _int(node: ET.Element | None, path: str) -> int | None:
    value = _text(node, path)
    if value is None:
        return None
    match = re.match(r"^(-?\d+)", value)
    if not match:
        raise ParseError(f"expected an integer, got {value!r}", key=path)
    return int(match.group(1))


def _flag(node: ET.Element | None, path: str) -> bool | None:
    value = _text(node, path)
    return None if value is None else value.strip().lower() in ("yes", "true", "1")


def _ecc(node: ET.Element | None) -> EccCounts:
    """Sum correctable and uncorrectable counters under one of volatile/aggregate."""
    if node is None:
        return EccCounts(None, None)
    corr = unc = None
    for bucket, is_unc in (("single_bit", False), ("double_bit", True)):
        total = _int(node, f"{bucket}/total")
        if total is not None:
            if is_unc:
                unc = (unc or 0) + total
            else:
                corr = (corr or 0) + total
    if corr is None and unc is None:
        for child in node:
            if "correctable" not in child.tag or "total" in child.tag:
                continue
            value = _int(node, child.tag)
            if value is None:
                continue
            if "uncorrectable" in child.tag:
                unc = (unc or 0) + value
            elif "correctable" in child.tag:
                corr = (corr or 0) + value
    return EccCounts(corr, unc)


def _gpu(node: ET.Element, index: int) -> SmiGpu:
    uuid = _text(node, "uuid")
    if uuid is None:
        raise ParseError("expected a <uuid> for every GPU", key=f"gpu[{index}]/uuid")
    bus_id = node.get("id") or _text(node, "pci/pci_bus_id")
    if not bus_id:
        raise ParseError("expected a PCI bus id", key=f"gpu[{index}]@id")
    ecc = node.find("ecc_errors")
    retired = node.find("retired_pages")
    remap = node.find("remapped_rows")
    temps = node.find("temperature")
    return SmiGpu(
        pci_bus_id=bus_id,
        product_name=_text(node, "product_name"),
        uuid=uuid,
        serial=_text(node, "serial"),
        vbios_version=_text(node, "vbios_version"),
        ecc_mode=_text(node, "ecc_mode/current_ecc"),
        ecc_volatile=_ecc(ecc.find("volatile") if ecc is not None else None),
        ecc_aggregate=_ecc(ecc.find("aggregate") if ecc is not None else None),
        retired_pages_sbe=_int(retired, "multiple_single_bit_retirement/retired_count"),
        retired_pages_dbe=_int(retired, "double_bit_retirement/retired_count"),
        retired_pages_pending=_flag(retired, "pending_retirement"),
        remapped_rows_correctable=_int(remap, "remapped_row_corr"),
        remapped_rows_uncorrectable=_int(remap, "remapped_row_unc"),
        remapped_rows_pending=_flag(remap, "remapped_row_pending"),
        remapped_rows_failure=_flag(remap, "remapped_row_failure"),
        temperature_gpu_c=_int(temps, "gpu_temp"),
        temperature_memory_c=_int(temps, "memory_temp"),
        recovery_action=_text(node, "gpu_recovery_action"),
    )


def parse_nvidia_smi_xml(text: str) -> NvidiaSmiXmlResult:
    """Parse ``nvidia-smi -q -x``: driver/CUDA version and per-GPU identity and health."""
    check_text(text, "nvidia-smi -q -x XML output")
    if "<!ENTITY" in text:
        # nvidia-smi never declares entities; refusing them keeps entity expansion
        # attacks (billion laughs) out of the standard-library parser.
        raise ParseError("expected nvidia-smi XML, found an <!ENTITY> declaration")
    try:
        root = ET.fromstring(text)  # noqa: S314 - entities rejected above, no DTD loading
    except ET.ParseError as exc:
        line, column = exc.position
        reason = getattr(exc, "msg", None) or str(exc)
        raise ParseError(f"expected well-formed XML: {reason} at column {column}", line=line)
    if root.tag != "nvidia_smi_log":
        raise ParseError(f"expected root element <nvidia_smi_log>, got <{root.tag}>")
    driver = _text(root, "driver_version")
    if driver is None:
        raise ParseError("expected <driver_version>", key="nvidia_smi_log/driver_version")
    attached = _int(root, "attached_gpus")
    gpu_nodes = root.findall("gpu")
    if attached is None:
        raise ParseError("expected <attached_gpus>", key="nvidia_smi_log/attached_gpus")
    if attached != len(gpu_nodes):
        raise ParseError(
            f"expected {attached} <gpu> elements (attached_gpus), found {len(gpu_nodes)}",
            key="nvidia_smi_log/gpu",
        )
    return NvidiaSmiXmlResult(
        driver_version=driver,
        cuda_version=_text(root, "cuda_version"),
        attached_gpus=attached,
        gpus=[_gpu(node, i) for i, node in enumerate(gpu_nodes)],
    )
