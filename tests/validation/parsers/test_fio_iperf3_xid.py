import json

import pytest

from validation.parsers import ParseError
from validation.parsers.fio import parse_fio
from validation.parsers.iperf3 import parse_iperf3
from validation.parsers.xid import parse_xid
from validation.parsers.xid_catalog import XID_CATALOG, classify

from .helpers import cut_half, load

FIO = "fio-randread-2jobs-preamble-constructed.json"
IPERF = "iperf3-tcp-8streams-ok-constructed.json"
IPERF_ERR = "iperf3-connect-refused-constructed.json"
KERN = "kern-log-xid-constructed.txt"


def test_fio_skips_preamble_and_reports_per_job():
    data = parse_fio(load(FIO)).to_dict()
    assert data["fio_version"] == "fio-3.36"
    read_job, write_job = data["jobs"]
    assert read_job["name"] == "randread" and read_job["error"] == 0
    assert read_job["read"]["bw_kib_per_s"] == 3128925
    assert read_job["read"]["bw_bytes_per_s"] == 3204019541
    assert read_job["read"]["iops"] == pytest.approx(782231.334289)
    assert read_job["write"] is None  # no I/O in that direction
    assert write_job["error"] == 5
    assert write_job["write"]["bw_bytes_per_s"] == 1789569706
    assert data["errors"] == 1 and data["ok"] is False


def test_fio_truncated_or_garbled_raises():
    with pytest.raises(ParseError, match="complete JSON"):
        parse_fio(cut_half(load(FIO)))
    with pytest.raises(ParseError, match="no line starting"):
        parse_fio("fio: engine libaio not loadable\nfio: failed to load engine\n")
    with pytest.raises(ParseError, match=r"jobs\[0\]\.error"):
        parse_fio(load(FIO).replace('"error" : 0', '"error" : "zero"', 1))


def test_iperf3_ok():
    data = parse_iperf3(load(IPERF)).to_dict()
    assert data["ok"] is True
    assert data["received_bits_per_second"] == pytest.approx(93923808384.2)
    assert data["received_gbps"] == pytest.approx(93.924)
    assert data["retransmits"] == 37
    assert data["protocol"] == "TCP" and data["num_streams"] == 8


def test_iperf3_error_key_is_a_failure_not_a_parse_error():
    data = parse_iperf3(load(IPERF_ERR)).to_dict()
    assert data["ok"] is False
    assert "Connection refused" in data["error"]
    assert data["received_bits_per_second"] is None


def test_iperf3_truncated_raises():
    with pytest.raises(ParseError):
        parse_iperf3(cut_half(load(IPERF)))
    doc = json.loads(load(IPERF))
    del doc["end"]["sum_received"]
    with pytest.raises(ParseError, match="end.sum"):
        parse_iperf3(json.dumps(doc))


def test_xid_events_with_action_class():
    data = parse_xid(load(KERN)).to_dict()
    first = data["xids"][0]
    assert {k: first[k] for k in ("pci", "code", "pid", "name", "action")} == {
        "pci": "0000:18:00",
        "code": 13,
        "pid": 212345,
        "name": "python3",
        "action": "application",
    }
    by_code = {x["code"]: x for x in data["xids"]}
    assert by_code[79]["action"] == "reboot"
    assert by_code[79]["name"] == "nvc:[driver]" and by_code[79]["pid"] == 1101234
    assert by_code[79]["message"] == "GPU has fallen off the bus."
    assert by_code[63]["pid"] is None and by_code[63]["name"] is None
    assert by_code[48]["action"] == "rma"
    assert by_code[119]["action"] == "reset"
    assert by_code[154]["pid"] is None  # line without pid=/name=
    assert by_code[3]["pci"] == "0000:01:00"  # old driver, no "PCI:" prefix
    assert by_code[999]["action"] == "unknown"
    assert data["worst_action"] == "rma"
    assert data["codes"]["13"] == 2


def test_xid_required_codes_are_classified():
    expected = {
        13: "application",
        31: "application",
        43: "informational",
        45: "informational",
        48: "rma",
        61: "investigate",
        62: "reset",
        63: "informational",
        64: "rma",
        68: "application",
        69: "application",
        74: "rma",
        79: "reboot",
        92: "informational",
        94: "application",
        95: "reset",
        119: "reset",
        120: "reset",
        140: "reset",
    }
    for code, action in expected.items():
        assert code in XID_CATALOG
        assert classify(code).action == action, code
    name, action = XID_CATALOG[79][:2]
    assert name == "ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS" and action == "reboot"


def test_xid_clean_log_is_empty_not_an_error():
    assert parse_xid("").xids == []
    assert parse_xid("[    0.000000] Linux version 6.8.0\n").worst_action is None


def test_xid_truncated_or_garbled_line_raises():
    line = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=x, GPU has fallen off the bus.\n"
    with pytest.raises(ParseError, match="line 2"):
        parse_xid("boot\n" + line[:24] + "\n")
    with pytest.raises(ParseError, match="line 1"):
        parse_xid(line.replace(": 79,", ": 7x9,"))
    with pytest.raises(ParseError, match="NUL"):
        parse_xid("ok\n\x00\x01garbage")
