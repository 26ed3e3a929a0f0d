import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "tool_outputs"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "parse_output", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.slow  # 2 s on its own (docs/testing.md: Markers)
def test_prints_json_for_a_recorded_output():
    out = run("nccl", str(FIXTURES / "nccl-allreduce-2node-16xH100-tcpxo-full.txt"))
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["avg_busbw_gbps"] == 70.742
    assert round(data["busbw_inplace_at_max_gbps"]) == 337


@pytest.mark.slow  # 2 s on its own (docs/testing.md: Markers)
def test_garbled_output_is_exit_1_with_a_message_and_no_traceback(tmp_path):
    cut = tmp_path / "cut.txt"
    text = (FIXTURES / "dcgmi-diag-r3-dcgm4.0-4gpu-pass.txt").read_text()
    cut.write_text(text[: len(text) // 2])
    out = run("dcgmi", str(cut))
    assert out.returncode == 1
    assert out.stderr.startswith("error: ") and "Traceback" not in out.stderr
    assert out.stdout == ""
