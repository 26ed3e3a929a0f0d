import json
import subprocess
import sys
from pathlib import Path

import pytest

from validation.parsers import PARSERS, ParseError, UnknownToolError, parse
from validation.parsers.cli import main

from .helpers import FIXTURES

EXPECTED_TOOLS = [
    "dcgmi",
    "dcgmi-json",
    "nvidia-smi-csv",
    "nvidia-smi-xml",
    "nvidia-smi-topo",
    "nvidia-smi-nvlink",
    "nccl",
    "nvbandwidth",
    "gpu-burn",
    "fio",
    "iperf3",
    "xid",
]

# (tool, fixture) pairs that must parse: the whole fixture set except the DCGM fragment
# (not a document) and the noheader CSV (needs fields=).
VALID = [
    ("dcgmi", "dcgmi-diag-r2-dcgm4.4.1-8xB200-pcie-fail.txt"),
    ("dcgmi", "dcgmi-diag-r3-dcgm4.0-4gpu-pass.txt"),
    ("dcgmi", "dcgmi-diag-r3-dcgm3.3.5-4gpu-pcie-fail-constructed.txt"),
    ("dcgmi-json", "dcgmi-diag-json-dcgm4-r3-constructed.json"),
    ("dcgmi-json", "dcgmi-diag-json-dcgm3-r3-skip-constructed.json"),
    ("nvidia-smi-csv", "nvidia-smi-query-gpu-8xH100-constructed.csv"),
    ("nvidia-smi-xml", "nvidia-smi-q-x-2xH100-constructed.xml"),
    ("nvidia-smi-xml", "nvidia-smi-q-x-1xV100-legacy-ecc-constructed.xml"),
    ("nvidia-smi-topo", "nvidia-smi-topo-m-8xH100-hgx.txt"),
    ("nvidia-smi-topo", "nvidia-smi-topo-m-2xA100-legend-constructed.txt"),
    ("nccl", "nccl-allreduce-2node-16xH100-tcpxo-full.txt"),
    ("nccl", "nccl-allreduce-2node-ib-large-sizes.txt"),
    ("nccl", "nccl-alltoall-2node-tagged-info-constructed.txt"),
    ("nccl", "nccl-allgather-legacy-v100-constructed.txt"),
    ("nccl", "nccl-allreduce-8xH100-json-constructed.json"),
    ("nvbandwidth", "nvbandwidth-d2d-write-ce-8gpu.txt"),
    ("nvbandwidth", "nvbandwidth-h100-3tests-sum-constructed.txt"),
    ("gpu-burn", "gpu-burn-h100-ok.txt"),
    ("gpu-burn", "gpu-burn-faulty.txt"),
    ("fio", "fio-randread-2jobs-preamble-constructed.json"),
    ("iperf3", "iperf3-tcp-8streams-ok-constructed.json"),
    ("iperf3", "iperf3-connect-refused-constructed.json"),
    ("xid", "kern-log-xid-constructed.txt"),
]


def test_registry_keys():
    assert list(PARSERS) == EXPECTED_TOOLS


def test_every_fixture_is_listed():
    listed = {name for _, name in VALID}
    others = {
        "SOURCES.md",
        "dcgmi-diag-json-dcgm4-diagnostic-fragment.json",
        "nvidia-smi-query-gpu-noheader-nounits-constructed.csv",
    }
    assert {p.name for p in FIXTURES.iterdir()} == listed | others


@pytest.mark.parametrize("tool,name", VALID)
def test_to_dict_round_trips_through_json(tool, name):
    data = parse(tool, (FIXTURES / name).read_text()).to_dict()
    assert data["tool"] == tool
    assert json.loads(json.dumps(data, allow_nan=False)) == data


def test_parse_unknown_tool():
    with pytest.raises(UnknownToolError, match="valid tools: dcgmi, dcgmi-json"):
        parse("nope", "x")


@pytest.mark.parametrize("tool", EXPECTED_TOOLS)
def test_empty_or_binary_input_is_a_parse_error(tool):
    if tool != "xid":  # an empty kernel-log grep is a clean result
        with pytest.raises(ParseError):
            parse(tool, "")
    with pytest.raises(ParseError, match="NUL"):
        parse(tool, "\x00\x01\x02binary")


def test_cli_prints_json(capsys):
    path = FIXTURES / "nccl-allreduce-2node-16xH100-tcpxo-full.txt"
    assert main(["nccl", str(path)]) == 0
    out = capsys.readouterr()
    data = json.loads(out.out)
    assert data["busbw_inplace_at_max_gbps"] == pytest.approx(337.35)
    assert out.err == ""


def test_cli_parse_error(tmp_path, capsys):
    path = tmp_path / "cut.txt"
    text = (FIXTURES / "gpu-burn-h100-ok.txt").read_text()
    path.write_text(text.split("Tested")[0])
    assert main(["gpu-burn", str(path)]) == 1
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.startswith("error: incomplete gpu-burn output")
    assert "Traceback" not in out.err


def test_cli_unknown_tool(capsys):
    assert main(["bogus", "whatever"]) == 2
    err = capsys.readouterr().err
    assert "unknown tool 'bogus'" in err
    for tool in EXPECTED_TOOLS:
        assert tool in err


def test_cli_missing_file(tmp_path, capsys):
    assert main(["xid", str(tmp_path / "absent.log")]) == 1
    assert capsys.readouterr().err.startswith("error: cannot read")


def test_cli_usage_error_returns_2(capsys):
    assert main([]) == 2


def test_cli_as_module_and_without_django():
    root = Path(__file__).resolve().parents[3]
    code = (
        "import sys; sys.modules['django'] = None\n"
        "import validation.parsers, validation.parsers.cli\n"
        "assert 'django' not in [m for m in sys.modules if sys.modules[m] is not None]\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=root, check=True)
    proc = subprocess.run(
        [sys.executable, "-m", "validation.parsers.cli", "xid", "-"],
        cwd=root,
        input="NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n",
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["xids"][0]["action"] == "reboot"
