import pytest

from validation.parsers import ParseError
from validation.parsers.dcgmi import parse_dcgmi

from .helpers import cut_before, cut_half, load

B200 = "dcgmi-diag-r2-dcgm4.4.1-8xB200-pcie-fail.txt"
PASS4 = "dcgmi-diag-r3-dcgm4.0-4gpu-pass.txt"
V3 = "dcgmi-diag-r3-dcgm3.3.5-4gpu-pcie-fail-constructed.txt"


def test_b200_pcie_fail_with_joined_warning():
    result = parse_dcgmi(load(B200))
    data = result.to_dict()
    assert data["dcgm_version"] == "4.4.1"
    assert data["driver_version"] == "570.172.08"
    assert data["gpu_device_ids"] == ["2901"] * 8
    assert data["tests"] == {"pcie": "Fail"}
    assert data["overall"] == "Fail"
    # every GPU passed individually, yet the test as a whole failed: keep both facts
    assert data["details"]["pcie"]["gpus"] == {str(i): "Pass" for i in range(8)}
    (warning,) = data["details"]["pcie"]["warnings"]
    assert warning == (
        "There was an internal error during the test: 'Output of child process (11167) "
        "couldn't be parsed: '* Line 1, Column 1   Syntax error: value, object or array "
        "expected. '' Check DCGM and system logs for errors. Reset GPU. Restart DCGM. "
        "Rerun diagnostics."
    )
    assert not result.passed("pcie")
    assert not result.passed("PCIe")


def test_dcgm4_all_pass():
    result = parse_dcgmi(load(PASS4))
    assert result.dcgm_version == "4.0.0"
    assert result.driver_version == "550.90.07"
    assert result.tests == {
        "software": "Pass",
        "memory": "Pass",
        "diagnostic": "Pass",
        "pcie": "Pass",
        "memory_bandwidth": "Pass",
        "targeted_stress": "Pass",
        "targeted_power": "Pass",
    }
    assert result.overall == "Pass"
    assert result.gpus == {0: "Pass", 1: "Pass", 2: "Pass", 3: "Pass"}
    assert result.details["targeted_power"].category == "Stress"
    assert result.missing_or_not_passed(["memory", "pcie", "diagnostic"]) == []
    # a required test the run never contained has not passed
    assert result.missing_or_not_passed(["memtest"]) == ["memtest"]


def test_dcgm3_row_per_check_layout():
    result = parse_dcgmi(load(V3))
    assert result.dcgm_version == "3.3.5"
    assert result.source_format == "text-3.x"
    assert result.tests["pcie"] == "Fail"
    assert result.details["pcie"].gpus == {0: "Fail", 1: "Pass", 2: "Pass", 3: "Pass"}
    assert result.details["pcie"].warnings == [
        "GPU 0 Error using CUDA API cudaDeviceGetByPCIBusId Check DCGM and system logs for "
        "errors. Reset GPU. Restart DCGM. Rerun diagnostics."
    ]
    assert result.tests["memory"] == "Pass"  # "GPU Memory" in 3.x
    assert result.status_of("GPU Memory") == "Pass"
    assert result.tests["targeted_power"] == "Skip"
    assert result.tests["denylist"] == "Pass"
    assert result.overall == "Fail"


def test_skip_has_not_passed():
    result = parse_dcgmi(load(V3))
    assert result.status_of("Targeted Power") == "Skip"
    assert not result.passed("targeted_power")
    assert not result.passed("targeted_power", allow_warn=True)
    assert result.passed("targeted_stress")
    assert result.missing_or_not_passed(["targeted_stress", "targeted_power", "pcie"]) == [
        "targeted_power",
        "pcie",
    ]


@pytest.mark.parametrize("name", [B200, PASS4, V3])
def test_truncated_raises(name):
    text = load(name)
    with pytest.raises(ParseError, match="closing"):
        parse_dcgmi(cut_before(text, "+---------------------------+----"))
    with pytest.raises(ParseError):
        parse_dcgmi(cut_half(text))


@pytest.mark.parametrize(
    "old,new,message",
    [
        (
            "| software                  | Pass ",
            "| software                  | Pazz ",
            "status",
        ),
        ("| GPU2: Pass ", "| GPU2: Pas  ", "GPU"),
        ("| memory                    | Pass", "  memory                      Pass", "table row"),
    ],
)
def test_garbled_raises(old, new, message):
    text = load(PASS4)
    assert old in text
    with pytest.raises(ParseError, match=message) as info:
        parse_dcgmi(text.replace(old, new, 1))
    assert "line" in str(info.value)


def test_not_a_table():
    with pytest.raises(ParseError, match="no.*found|none found"):
        parse_dcgmi("Error: unable to establish a connection to the host engine\n")
