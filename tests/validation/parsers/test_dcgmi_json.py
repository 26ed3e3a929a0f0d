import json

import pytest

from validation.parsers import ParseError
from validation.parsers.dcgmi_json import parse_dcgmi_json

from .helpers import cut_half, load

V4 = "dcgmi-diag-json-dcgm4-r3-constructed.json"
V3 = "dcgmi-diag-json-dcgm3-r3-skip-constructed.json"
FRAGMENT = "dcgmi-diag-json-dcgm4-diagnostic-fragment.json"


def test_dcgm4_document():
    result = parse_dcgmi_json(load(V4))
    data = result.to_dict()
    assert data["tool"] == "dcgmi-json"
    assert data["dcgm_version"] == "4.0.0"
    assert data["driver_version"] == "550.90.07"
    assert data["gpu_device_ids"] == ["2330", "2330"]
    assert data["tests"] == {
        "software": "Pass",
        "memory": "Pass",
        "diagnostic": "Pass",
        "pcie": "Pass",
        "targeted_power": "Fail",
        "memory_bandwidth": "Skip",
    }
    assert data["overall"] == "Fail"
    assert data["details"]["diagnostic"]["info"][2] == (
        "GPU 0 calculated at approximately 859.08 gigaflops during this test"
    )
    assert data["details"]["targeted_power"]["gpus"] == {"0": "Fail", "7": "Pass"}
    assert data["details"]["targeted_power"]["warnings"] == [
        "Detected 3 unexpected XIDs on GPU 0 during the test."
    ]
    assert not result.passed("memory_bandwidth")  # Skip
    assert result.passed("diagnostic")


def test_dcgm3_document():
    result = parse_dcgmi_json(load(V3))
    assert result.source_format == "json-3.x"
    assert result.dcgm_version == "3.3.1"
    assert result.driver_version == "535.129.03"
    assert result.tests["pcie"] == "Skip"
    assert result.tests["memory"] == "Pass"  # "GPU Memory"
    assert result.overall == "Skip"
    assert result.missing_or_not_passed(["pcie", "memory", "diagnostic"]) == [
        "pcie",
        "diagnostic",
    ]


def test_fragment_is_not_a_document():
    with pytest.raises(ParseError, match="DCGM Diagnostic"):
        parse_dcgmi_json(load(FRAGMENT))


@pytest.mark.parametrize("name", [V4, V3])
def test_truncated_raises(name):
    text = load(name)
    with pytest.raises(ParseError, match="line"):
        parse_dcgmi_json(cut_half(text))
    with pytest.raises(ParseError):
        parse_dcgmi_json(text.rstrip()[:-1])  # final brace missing


def test_garbled_status_raises():
    text = load(V4).replace('"status" : "Skip"', '"status" : "Skipp"', 1)
    with pytest.raises(ParseError, match="Skipp") as info:
        parse_dcgmi_json(text)
    assert "test_categories[3].tests[1].results[0].status" in str(info.value)


def test_runtime_error_is_a_fail_not_a_pass():
    doc = {
        "DCGM Diagnostic": {"runtime_error": "Unable to start the diagnostic"},
        "metadata": {"version": "4.2.3"},
    }
    result = parse_dcgmi_json(json.dumps(doc))
    assert result.overall == "Fail"
    assert result.runtime_error == "Unable to start the diagnostic"
    assert result.tests == {}


def test_empty_categories_raise():
    with pytest.raises(ParseError, match="at least one test"):
        parse_dcgmi_json(json.dumps({"DCGM Diagnostic": {"test_categories": []}}))


def test_dcgm3_info_and_warning_as_one_string():
    """DCGM 3.x writes a result's ``info`` (and ``warnings``) as one string, not a list:
    the real -r 3 document in tests/corpus/tools/dcgmi-json (VirtualClient's example)
    was refused with 'expected a list of messages'."""
    doc = {
        "DCGM GPU Diagnostic": {
            "test_categories": [
                {
                    "category": "Hardware",
                    "tests": [
                        {
                            "name": "GPU Memory",
                            "results": [
                                {
                                    "gpu_ids": "0",
                                    "info": "GPU 0 Allocated 15206918958 bytes (97.3%)",
                                    "warnings": "one warning",
                                    "status": "Pass",
                                }
                            ],
                        }
                    ],
                }
            ]
        }
    }
    data = parse_dcgmi_json(json.dumps(doc)).to_dict()
    assert data["details"]["memory"]["info"] == ["GPU 0 Allocated 15206918958 bytes (97.3%)"]
    assert data["details"]["memory"]["warnings"] == ["one warning"]


def test_messages_of_another_type_still_raise():
    doc = {
        "DCGM GPU Diagnostic": {
            "test_categories": [
                {
                    "category": "Hardware",
                    "tests": [{"name": "GPU Memory", "results": [{"info": 7, "status": "Pass"}]}],
                }
            ]
        }
    }
    with pytest.raises(ParseError, match="messages"):
        parse_dcgmi_json(json.dumps(doc))
