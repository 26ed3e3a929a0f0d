"""``nvidia-smi topo -m`` output: the TAB-separated GPU/NIC link matrix.

The header lists ``GPU0..n``, ``NIC0..m`` and then affinity columns (``CPU Affinity``,
``NUMA Affinity``, and on newer drivers ``GPU NUMA ID``). GPU rows carry link cells and
affinities; NIC rows only link cells. Drivers print an extra empty TAB before ``GPU
NUMA ID`` (``0\\t\\tN/A``), so empty affinity cells are dropped before matching; the
underline escape codes around the header (driver 580) are removed.

Every GPU named in the header must have a complete row; NIC rows and the legend are
optional because they add nothing a GPU-placement gate needs and published captures
often cut them. Link tokens are validated (X, SYS, NODE, PHB, PXB, PIX, NV#, ...), so a
garbled cell is an error, not an unknown link.
"""

from __future__ import annotations

import dataclasses
import re

from .base import ParseError, Result, check_text, numbered_lines

# nvidia-smi (seen on 580) underlines the header with SGR codes even into a file or pipe.
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_LINK = re.compile(r"^(X|SYS|NODE|PHB|PXB|PIX|SOC|C2C|NV\d+|NVB|N/A)$")
_DEVICE = re.compile(r"^(GPU|NIC)\d+$")
# Best (closest) first: used to pick each GPU's nearest NICs.
_RANK = ("X", "NV", "PIX", "PXB", "PHB", "NODE", "SOC", "SYS")


@dataclasses.dataclass
class TopoGpu:
    name: str
    links: dict[str, str]
    nics: dict[str, str]
    cpu_affinity: str | None
    numa_affinity: str | None
    gpu_numa_id: str | None
    nearest_nics: list[str]


@dataclasses.dataclass
class NvidiaSmiTopoResult(Result):
    tool = "nvidia-smi-topo"

    gpus: list[TopoGpu]
    nics: dict[str, dict[str, str]]
    nic_names: dict[str, str]
    gpu_count: int
    nic_count: int


def _rank(link: str) -> int:
    key = "NV" if link.startswith("NV") else link
    return _RANK.index(key) if key in _RANK else len(_RANK)


def parse_nvidia_smi_topo(text: str) -> NvidiaSmiTopoResult:
    """Parse ``nvidia-smi topo -m`` into per-GPU links, NIC affinity and CPU/NUMA affinity."""
    check_text(text, "nvidia-smi topo -m output")
    header: list[str] | None = None
    devices: list[str] = []
    extra: list[str] = []
    rows: dict[str, tuple[int, list[str]]] = {}
    nic_names: dict[str, str] = {}
    for number, raw in numbered_lines(text):
        line = _ANSI.sub("", raw)
        stripped = line.strip()
        if header is None:
            cells = [c.strip() for c in line.split("\t")]
            if len(cells) > 1 and cells[0] == "" and cells[1].startswith("GPU"):
                header = [c for c in cells[1:] if c]
                devices = [c for c in header if _DEVICE.match(c)]
                extra = header[len(devices) :]
                if header[: len(devices)] != devices:
                    raise ParseError("expected device columns before affinity columns", line=number)
            continue
        if match := re.match(r"^(NIC\d+):\s*(\S+)$", stripped):
            nic_names[match.group(1)] = match.group(2)
            continue
        cells = line.split("\t")
        name = cells[0].strip()
        if not _DEVICE.match(name) or "\t" not in line:
            continue
        if name in rows:
            raise ParseError(f"duplicate row for {name}", line=number)
        rows[name] = (number, [c.strip() for c in cells[1:]])
    if header is None:
        raise ParseError("expected a TAB-separated header row starting with '\\tGPU0'")
    gpu_names = [d for d in devices if d.startswith("GPU")]
    gpus = []
    nics: dict[str, dict[str, str]] = {}
    for name in devices:
        if name not in rows:
            if name.startswith("GPU"):
                raise ParseError(f"incomplete topology: no row for {name} (output cut short?)")
            continue
        number, cells = rows[name]
        links, rest = cells[: len(devices)], cells[len(devices) :]
        if len(links) != len(devices):
            raise ParseError(
                f"expected {len(devices)} link cells for {name}, got {len(links)}", line=number
            )
        for cell in links:
            if not _LINK.match(cell):
                raise ParseError(
                    f"expected a link type (X/SYS/NODE/PHB/PXB/PIX/NV#), got {cell!r}", line=number
                )
        link_map = dict(zip(devices, links, strict=True))
        if name.startswith("NIC"):
            nics[name] = link_map
            continue
        affinity = [c for c in rest if c]
        if len(affinity) > len(extra):
            raise ParseError(
                f"expected at most {len(extra)} affinity cells ({', '.join(extra)}) for {name}, "
                f"got {len(affinity)}",
                line=number,
            )
        if len(affinity) < min(len(extra), 2):
            raise ParseError(
                f"expected CPU/NUMA affinity cells for {name} (row cut short?)", line=number
            )
        values = dict(zip(extra, affinity, strict=False))
        nic_links = {k: v for k, v in link_map.items() if k.startswith("NIC")}
        best = min((_rank(v) for v in nic_links.values()), default=None)
        gpus.append(
            TopoGpu(
                name=name,
                links={k: v for k, v in link_map.items() if k.startswith("GPU") and k != name},
                nics=nic_links,
                cpu_affinity=values.get("CPU Affinity"),
                numa_affinity=values.get("NUMA Affinity"),
                gpu_numa_id=values.get("GPU NUMA ID"),
                nearest_nics=sorted(k for k, v in nic_links.items() if _rank(v) == best),
            )
        )
    return NvidiaSmiTopoResult(
        gpus=gpus,
        nics=nics,
        nic_names=nic_names,
        gpu_count=len(gpu_names),
        nic_count=len(devices) - len(gpu_names),
    )
