import json

import pytest

from validation.parsers import ParseError
from validation.parsers.nccl import parse_nccl

from .helpers import cut_before, cut_half, load

TCPXO = "nccl-allreduce-2node-16xH100-tcpxo-full.txt"
IB = "nccl-allreduce-2node-ib-large-sizes.txt"
ALLTOALL = "nccl-alltoall-2node-tagged-info-constructed.txt"
LEGACY = "nccl-allgather-legacy-v100-constructed.txt"
JSON = "nccl-allreduce-8xH100-json-constructed.json"


def test_tcpxo_gate_on_largest_size_not_average():
    data = parse_nccl(load(TCPXO)).to_dict()
    assert data["collective"] == "all_reduce"
    assert data["collective_inferred"] is True  # older output never names the test
    assert len(data["rows"]) == 31
    assert data["max_size_bytes"] == 8 * 1024**3
    assert data["busbw_inplace_at_max_gbps"] == pytest.approx(337.35)
    assert 337 <= data["busbw_inplace_at_max_gbps"] <= 338
    assert data["busbw_outofplace_at_max_gbps"] == pytest.approx(338.82)
    assert data["avg_busbw_gbps"] == pytest.approx(70.742)
    assert data["wrong_total"] == 0
    assert data["out_of_bounds"] == 0
    assert data["ranks"] == 16
    assert data["hosts"] == ["ztan-mig-235z", "ztan-mig-gq73"]
    assert data["gpu_model"] == "NVIDIA H100 80GB HBM3"
    first = data["rows"][0]
    assert first == {
        "size": 8,
        "count": 2,
        "type": "float",
        "redop": "sum",
        "root": -1,
        "oop_time_us": 135.8,
        "oop_algbw_gbps": 0.0,
        "oop_busbw_gbps": 0.0,
        "oop_wrong": 0,
        "ip_time_us": 123.5,
        "ip_algbw_gbps": 0.0,
        "ip_busbw_gbps": 0.0,
        "ip_wrong": 0,
        "oop_error": None,
        "ip_error": None,
    }
    assert data["max_error"] is None  # #wrong columns, no legacy error column
    assert data["rows"][28]["oop_time_us"] == 12646.0  # wide value without decimals
    assert json.loads(json.dumps(data)) == data


def test_ib_published_rows_without_device_lines():
    data = parse_nccl(load(IB)).to_dict()
    assert [r["size"] for r in data["rows"]] == [2**29, 2**30, 2**31, 2**32, 2**33]
    assert data["busbw_inplace_at_max_gbps"] == pytest.approx(466.51)
    assert data["busbw_outofplace_at_max_gbps"] == pytest.approx(467.28)
    assert data["avg_busbw_gbps"] == pytest.approx(450.404)
    assert data["ranks"] == 0 and data["hosts"] == [] and data["gpu_model"] is None


def test_tagged_output_info_lines_and_na_wrong():
    data = parse_nccl(load(ALLTOALL)).to_dict()
    assert data["collective"] == "alltoall"  # from "# Collective test starting:"
    assert data["collective_inferred"] is False
    assert len(data["rows"]) == 6
    assert all(r["ip_wrong"] is None for r in data["rows"])  # printed as N/A
    assert data["wrong_total"] == 0
    assert data["busbw_inplace_at_max_gbps"] == pytest.approx(41.27)
    assert data["max_size_bytes"] == 2**30
    assert data["ranks"] == 16
    assert data["hosts"] == ["gpu-a01", "gpu-a02"]
    assert data["nccl_version"] == "22304"


def test_legacy_header_without_root_and_error_column():
    data = parse_nccl(load(LEGACY)).to_dict()
    assert data["rows"][0]["redop"] is None and data["rows"][0]["root"] is None
    assert data["busbw_inplace_at_max_gbps"] == pytest.approx(38.0)
    assert data["ranks"] == 8 and data["hosts"] == ["dgx1-07"]
    assert data["gpu_model"] == "Tesla V100-SXM2-32GB"
    assert data["wrong_total"] == 0


def test_json_output():
    data = parse_nccl(load(JSON)).to_dict()
    assert data["source_format"] == "json"
    assert data["collective"] == "all_reduce"
    assert data["max_size_bytes"] == 8589934592
    assert data["busbw_outofplace_at_max_gbps"] == pytest.approx(454.83)
    assert data["busbw_inplace_at_max_gbps"] == pytest.approx(453.02)
    assert data["avg_busbw_gbps"] == pytest.approx(437.415)
    assert data["ranks"] == 8 and data["hosts"] == ["gpu-b01"]
    assert data["rows"][0]["root"] == -1


def test_wrong_elements_are_counted():
    text = load(IB).replace("  464.07      0", "  464.07      3")
    assert parse_nccl(text).wrong_total == 3


@pytest.mark.parametrize("name", [TCPXO, IB, ALLTOALL, LEGACY])
def test_truncated_text_raises(name):
    text = load(name)
    with pytest.raises(ParseError, match="incomplete|footer|columns|header"):
        parse_nccl(cut_half(text))
    with pytest.raises(ParseError, match="Out of bounds"):
        parse_nccl(cut_before(text, "# Out of bounds"))


def test_truncated_json_raises():
    text = load(JSON)
    with pytest.raises(ParseError):
        parse_nccl(cut_half(text))
    doc = json.loads(text)
    del doc["average_bus_bandwidth"]  # nccl-tests closes the JSON even when it dies
    with pytest.raises(ParseError, match="average_bus_bandwidth"):
        parse_nccl(json.dumps(doc))


@pytest.mark.parametrize(
    "old,new",
    [
        ("  8589934592    2147483648     float", "  8589934592    2147483648"),  # lost cells
        ("47743  179.92  337.35", "47743  179.92  3#7.35"),  # bad number
        ("  8589934592", "  X589934592"),  # damaged first cell must not be skipped
    ],
)
def test_garbled_rows_raise(old, new):
    text = load(TCPXO)
    assert old in text
    with pytest.raises(ParseError, match="line"):
        parse_nccl(text.replace(old, new, 1))
