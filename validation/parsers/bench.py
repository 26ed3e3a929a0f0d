"""Parse-throughput benchmark: ``python -m validation.parsers.bench``.

Not a test: it exists so a change that makes a parser quadratic (easy to do with line
joining or regex backtracking) shows up as a number before it shows up as a stalled
acceptance run on a host with a 200 MB kernel log. Prints one line per parser:
outputs parsed per second and MB/s over that parser's fixtures.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from . import PARSERS

_DEFAULT_FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "tool_outputs"

# Fixture file name prefix -> registry key. Files that are not whole documents (the DCGM
# fragment, the noheader CSV that needs fields=) are left out.
_PREFIXES = {
    "dcgmi-diag-json-dcgm4-r3": "dcgmi-json",
    "dcgmi-diag-json-dcgm3": "dcgmi-json",
    "dcgmi-diag-r": "dcgmi",
    "nvidia-smi-query-gpu-8x": "nvidia-smi-csv",
    "nvidia-smi-q-x": "nvidia-smi-xml",
    "nvidia-smi-topo": "nvidia-smi-topo",
    "nccl-": "nccl",
    "nvbandwidth-": "nvbandwidth",
    "gpu-burn-": "gpu-burn",
    "fio-": "fio",
    "iperf3-": "iperf3",
    "kern-log-xid": "xid",
}


def collect(directory: Path) -> dict[str, list[str]]:
    """Fixture texts grouped by the parser they belong to."""
    grouped: dict[str, list[str]] = {tool: [] for tool in PARSERS}
    for path in sorted(directory.iterdir()):
        for prefix, tool in _PREFIXES.items():
            if path.name.startswith(prefix):
                grouped[tool].append(path.read_text(encoding="utf-8"))
                break
    return grouped


def measure(tool: str, texts: list[str], seconds: float) -> tuple[float, float]:
    """(outputs/s, MB/s) for ``tool`` parsing ``texts`` round-robin for ``seconds``."""
    parser = PARSERS[tool]
    size = sum(len(t) for t in texts)
    rounds = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for text in texts:
            parser(text)
        rounds += 1
    elapsed = time.perf_counter() - start
    return rounds * len(texts) / elapsed, rounds * size / elapsed / 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m validation.parsers.bench")
    parser.add_argument("--fixtures", type=Path, default=_DEFAULT_FIXTURES)
    parser.add_argument("--seconds", type=float, default=0.5, help="time per parser")
    args = parser.parse_args(argv)
    if not args.fixtures.is_dir():
        print(f"error: no fixture directory {args.fixtures}", file=sys.stderr)
        return 1
    for tool, texts in collect(args.fixtures).items():
        if not texts:
            print(f"{tool:16s} (no fixtures)")
            continue
        per_s, mb_s = measure(tool, texts, args.seconds)
        print(f"{tool:16s} {per_s:10.0f} outputs/s  {mb_s:7.2f} MB/s  ({len(texts)} fixtures)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
