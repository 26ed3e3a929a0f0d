"""``nvidia-smi nvlink -s`` (link speeds) and ``nvidia-smi nvlink -e`` (error counters).

Both print one ``GPU i: <name> (UUID: GPU-...)`` line per GPU and one or more
``Link n: ...`` lines under it; the two outputs may be concatenated and are merged per
GPU and link::

    GPU 0: NVIDIA H100 PCIe (UUID: GPU-6968dfc2-...)
             Link 0: 26.562 GB/s              <- -s: an active link and its speed
             Link 4: <inactive>               <- -s: a link that is down or not cabled
             Link 0: Replay Errors: 0         <- -e: one counter per line

A GPU with no active link at all gets NVML's sentence instead of link lines ("NVML:
Unable to retrieve NVLink information as all links are inActive"). Counters that a
driver prints nested under a bare ``Link n:`` line (``Name: value`` on the following
lines) are read too. Any other line under a GPU is a ParseError: a garbled capture must
not read as "all links fine". Empty output is a ParseError saying there is no NVLink
information: nvidia-smi prints nothing, exit 0, for GPUs without visible NVLink (a single
H100 SXM passed through to a VM, driver 580).
"""

from __future__ import annotations

import dataclasses
import re

from .base import ParseError, Result, check_text, numbered_lines, to_float

_GPU = re.compile(r"^GPU (\d+): (.+)$")
_UUID = re.compile(r"\s*\(UUID: (\S+?)\)")
_SPEED = re.compile(r"^Link (\d+): ([\d.]+) GB/s$")
_INACTIVE = re.compile(r"^Link (\d+): <inactive>$", re.IGNORECASE)
_COUNTER = re.compile(r"^Link (\d+): ([A-Za-z][\w /-]*?)\s*: (\d+|N/A)$")
_BARE_LINK = re.compile(r"^Link (\d+):$")
_NESTED = re.compile(r"^([A-Za-z][\w /-]*?)\s*: (\d+|N/A)$")
_NVML = re.compile(r"^NVML: (.+)$")


@dataclasses.dataclass
class NvlinkLink:
    link: int
    active: bool | None  # None: the output has no -s line for this link
    speed_gbps: float | None
    counters: dict[str, int | None] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class NvlinkGpu:
    index: int
    name: str
    uuid: str | None
    links: list[NvlinkLink]
    message: str | None  # NVML's sentence when it lists no links

    @property
    def all_inactive(self) -> bool:
        return bool(self.message and "inactive" in self.message.lower())

    def active_links(self) -> list[int]:
        return [link.link for link in self.links if link.active]

    def inactive_links(self) -> list[int]:
        return [link.link for link in self.links if link.active is False]


@dataclasses.dataclass
class NvidiaSmiNvlinkResult(Result):
    tool = "nvidia-smi-nvlink"

    gpus: list[NvlinkGpu]
    has_status: bool  # -s lines (or NVML's all-inactive sentence) were present
    has_counters: bool  # -e lines were present


class _Reader:
    def __init__(self) -> None:
        self.gpus: dict[int, NvlinkGpu] = {}
        self.gpu: NvlinkGpu | None = None
        self.nested: NvlinkLink | None = None
        self.has_status = False
        self.has_counters = False

    def link(self, number: int) -> NvlinkLink:
        assert self.gpu is not None
        for link in self.gpu.links:
            if link.link == number:
                return link
        link = NvlinkLink(number, None, None)
        self.gpu.links.append(link)
        return link

    def start_gpu(self, match: re.Match[str]) -> None:
        index, text = match.groups()
        name, uuid, rest = text.strip(), None, ""
        if found := _UUID.search(text):
            name, uuid, rest = text[: found.start()].strip(), found.group(1), text[found.end() :]
        gpu = self.gpus.get(int(index))
        if gpu is None:
            gpu = self.gpus[int(index)] = NvlinkGpu(int(index), name, uuid, [], None)
        self.gpu, self.nested = gpu, None
        if rest.strip():  # NVML's sentence after the UUID on the GPU line
            gpu.message = rest.strip()
            self.has_status = True

    def under_gpu(self, line: str, number: int) -> None:
        if match := _SPEED.match(line):
            link = self.link(int(match.group(1)))
            link.active, link.speed_gbps = True, to_float(match.group(2), "link speed", number)
            self.has_status, self.nested = True, None
        elif match := _INACTIVE.match(line):
            self.link(int(match.group(1))).active = False
            self.has_status, self.nested = True, None
        elif match := _COUNTER.match(line):
            self.count(self.link(int(match.group(1))), match.group(2), match.group(3))
            self.nested = None
        elif match := _BARE_LINK.match(line):
            self.nested = self.link(int(match.group(1)))
        elif self.nested is not None and (match := _NESTED.match(line)):
            self.count(self.nested, match.group(1), match.group(2))
        elif match := _NVML.match(line):
            assert self.gpu is not None
            self.gpu.message = match.group(1).strip()
            self.has_status, self.nested = True, None
        else:
            raise ParseError(
                f"expected 'Link <n>: <speed> GB/s', 'Link <n>: <inactive>' or "
                f"'Link <n>: <counter>: <value>' under GPU {self.gpu.index if self.gpu else '?'}, "
                f"got {line!r}",
                line=number,
            )

    def count(self, link: NvlinkLink, name: str, value: str) -> None:
        link.counters[name.strip()] = None if value == "N/A" else int(value)
        self.has_counters = True


def parse_nvidia_smi_nvlink(text: str) -> NvidiaSmiNvlinkResult:
    """Parse ``nvidia-smi nvlink -s`` and/or ``-e`` output into GPUs and their links."""
    if isinstance(text, str) and not text.strip():
        # Not "no GPUs" (a missing-GPU hardware finding): nothing can be judged.
        raise ParseError(
            "no NVLink information: nvidia-smi nvlink output is empty (it prints nothing, "
            "with exit status 0, when no GPU exposes NVLink, e.g. one GPU passed through to "
            "a VM)"
        )
    check_text(text, "nvidia-smi nvlink output")
    reader = _Reader()
    for number, raw in numbered_lines(text):
        line = raw.strip()
        if not line:
            continue
        if match := _GPU.match(line):
            reader.start_gpu(match)
        elif reader.gpu is None:
            raise ParseError(
                f"expected a 'GPU <i>: <name> (UUID: ...)' line first, got {line!r}", line=number
            )
        else:
            reader.under_gpu(line, number)
    gpus = [reader.gpus[i] for i in sorted(reader.gpus)]
    for gpu in gpus:
        gpu.links.sort(key=lambda link: link.link)
        if not gpu.links and gpu.message is None:
            raise ParseError(f"GPU {gpu.index} has no link lines (output cut short?)")
    return NvidiaSmiNvlinkResult(
        gpus=gpus, has_status=reader.has_status, has_counters=reader.has_counters
    )
