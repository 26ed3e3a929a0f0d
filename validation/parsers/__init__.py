"""Pure-Python parsers for the outputs of GPU acceptance tools.

Each parser takes the tool's captured stdout (or file) as text and returns a typed
result whose ``to_dict()`` is JSON-serialisable, or raises ``ParseError`` saying what
was expected and where. Truncated or garbled output is always a ParseError, never a
partial pass. No Django here: the package must import on a bare host.
"""

from __future__ import annotations

from collections.abc import Callable

from .base import ParseError, Result
from .dcgmi import parse_dcgmi
from .dcgmi_json import parse_dcgmi_json
from .fio import parse_fio
from .gpu_burn import parse_gpu_burn
from .iperf3 import parse_iperf3
from .nccl import parse_nccl
from .nvbandwidth import parse_nvbandwidth
from .nvidia_smi_csv import parse_nvidia_smi_csv, query_fields
from .nvidia_smi_nvlink import parse_nvidia_smi_nvlink
from .nvidia_smi_topo import parse_nvidia_smi_topo
from .nvidia_smi_xml import parse_nvidia_smi_xml
from .xid import parse_xid

PARSERS: dict[str, Callable[[str], Result]] = {
    "dcgmi": parse_dcgmi,
    "dcgmi-json": parse_dcgmi_json,
    "nvidia-smi-csv": parse_nvidia_smi_csv,
    "nvidia-smi-xml": parse_nvidia_smi_xml,
    "nvidia-smi-topo": parse_nvidia_smi_topo,
    "nvidia-smi-nvlink": parse_nvidia_smi_nvlink,
    "nccl": parse_nccl,
    "nvbandwidth": parse_nvbandwidth,
    "gpu-burn": parse_gpu_burn,
    "fio": parse_fio,
    "iperf3": parse_iperf3,
    "xid": parse_xid,
}


class UnknownToolError(KeyError):
    """``parse()`` was asked for a tool that has no parser; the message lists the valid ones."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown tool"


def parse(tool: str, text: str, command: str | None = None) -> Result:
    """Parse ``text`` as the output of ``tool`` (a key of ``PARSERS``).

    ``command`` is the command line that printed it, where the output alone does not say
    what it holds: ``nvidia-smi --query-gpu=… --format=csv,noheader`` names its columns only
    on the command line.
    """
    try:
        parser = PARSERS[tool]
    except KeyError:
        raise UnknownToolError(
            f"unknown tool {tool!r}; valid tools: {', '.join(PARSERS)}"
        ) from None
    if tool == "nvidia-smi-csv" and command:
        return parse_nvidia_smi_csv(text, fields=query_fields(command))
    return parser(text)


__all__ = ["PARSERS", "ParseError", "Result", "UnknownToolError", "parse", "query_fields"]
