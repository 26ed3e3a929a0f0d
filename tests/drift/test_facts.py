"""Observed facts: one shape whatever the source, the latest value kept with its source."""

import pytest

from inventory import facts
from inventory.facts import FactShapeError
from inventory.models import Fact


def test_a_report_flattens_to_keys_every_source_shares():
    rows = facts.flatten(
        {
            "kernel": "6.8.0-45-generic",
            "secure_boot": True,
            "firmware": {"BMC": "1.45", "BIOS": None},
            "gpus": [{"vbios": "96.00.89.00.01", "serial": 1652}, {"index": 3, "vbios": "96"}],
            "nics": ["mlx5_0", "mlx5_1"],
            "custom.thing": 4.5,
        }
    )
    assert rows == [
        ("kernel", -1, "6.8.0-45-generic"),
        ("secure_boot", -1, "true"),
        ("firmware.BMC", -1, "1.45"),
        ("gpu.vbios", 0, "96.00.89.00.01"),
        ("gpu.serial", 0, "1652"),
        ("gpu.vbios", 3, "96"),
        ("nics", -1, "mlx5_0, mlx5_1"),
        ("custom.thing", -1, "4.5"),
    ]


@pytest.mark.parametrize(
    ("report", "path"),
    [
        ({"firmware": {"BMC": {"version": "1"}}}, "firmware.BMC"),
        ({"gpus": {"0": {"vbios": "1"}}}, "gpus"),
        ({"gpus": [{"vbios": ["a"]}]}, "gpus[0].vbios"),
        ({"gpus": [{"index": 99, "vbios": "1"}]}, "gpus[0].index"),
        ({"bad key!": "1"}, "facts"),
        ({"list": [{"a": 1}]}, "list"),
        ({"kernel": "x" * 300}, "kernel"),
    ],
)
def test_a_bad_shape_is_refused_naming_where(report, path):
    with pytest.raises(FactShapeError) as err:
        facts.flatten(report)
    assert err.value.path == path


def test_lenient_keeps_the_good_parts_of_a_report_it_must_not_refuse():
    assert facts.lenient({"driver": "550", "firmware": {"BMC": {"x": 1}}}) == [
        ("driver", -1, "550")
    ]


@pytest.mark.django_db
def test_record_keeps_the_latest_value_per_key_with_its_source(node):
    facts.record(node, "phone-home", {"kernel": "6.8.0", "driver": "550.90.07"})
    facts.record(node, "ansible", {"driver": "550.90.12"})
    stored = {f.key: (f.value, f.source) for f in Fact.objects.filter(node=node)}
    assert stored == {"kernel": ("6.8.0", "phone-home"), "driver": ("550.90.12", "ansible")}


@pytest.mark.django_db
def test_a_full_reread_drops_what_the_source_no_longer_reports(node):
    facts.record(
        node,
        "redfish",
        facts.firmware_rows([{"id": "BMC", "version": "1"}, {"id": "CPLD", "version": "2"}]),
    )
    facts.record(node, "ansible", {"firmware": {"NIC": "3"}})
    rows = facts.firmware_rows(
        [{"id": "BMC", "version": "1.1"}, {"id": None, "name": None, "version": "x"}]
    )
    facts.record(node, "redfish", rows, replace_prefix="firmware.")
    assert sorted(Fact.objects.filter(node=node).values_list("key", "value")) == [
        ("firmware.BMC", "1.1"),
        ("firmware.NIC", "3"),
    ]


def test_inspection_facts_name_the_bios_and_each_gpu():
    rows = facts.hardware_rows(
        {
            "bios_version": "2.1.7",
            "gpus": [
                {"id": "GPU0", "model": "H100", "serial": "S0", "firmware_version": "96.00"},
                {"id": "GPU1", "model": "H100"},
            ],
        }
    )
    assert rows == [
        ("firmware.BIOS", -1, "2.1.7"),
        ("gpu_count", -1, "2"),
        ("gpu.model", 0, "H100"),
        ("gpu.serial", 0, "S0"),
        ("gpu.vbios", 0, "96.00"),
        ("gpu.model", 1, "H100"),
    ]
    assert facts.hardware_rows({"gpus": [], "unavailable": {"gpus": "IPMI cannot list"}}) == []


@pytest.mark.django_db
def test_a_machine_reports_nul_or_half_a_surrogate_pair_and_the_rest_is_kept(node):
    """A BMC's string with a NUL or a lone surrogate ("\\ud800" in its JSON) was a
    database error that lost the whole report; now that value keeps U+FFFD in its place."""
    facts.record(node, "redfish", {"firmware": {"BIOS": "2.1\ud800", "BMC": "7.0\0"}, "ok": "1"})
    stored = dict(Fact.objects.filter(node=node).values_list("key", "value"))
    assert stored == {"firmware.BIOS": "2.1\ufffd", "firmware.BMC": "7.0\ufffd", "ok": "1"}
