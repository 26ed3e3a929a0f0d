"""What drift means, on plain values (no database)."""

from datetime import UTC, datetime, timedelta

from drift import engine
from drift.engine import DRIFT, OK, STALE, UNKNOWN, Observation

T = datetime(2026, 11, 1, tzinfo=UTC)


def seen(value, source="gate"):
    return Observation(value, source, T)


def test_each_gpu_is_compared_on_its_own_so_one_odd_vbios_is_drift_on_that_gpu():
    facts = {("gpu.vbios", i): seen("96.00.89.00.01") for i in range(8)}
    facts[("gpu.vbios", 5)] = seen("96.00.74.00.0B")
    cells = engine.compare({"gpu.vbios": ("96.00.89.00.01",)}, facts)
    assert [(c.gpu, c.status) for c in cells if c.status != OK] == [(5, DRIFT)]
    assert len(cells) == 8


def test_a_gpu_that_reports_a_serial_but_no_vbios_is_unknown_not_missing():
    facts = {("gpu.serial", 0): seen("S0"), ("gpu.serial", 1): seen("S1")}
    facts[("gpu.vbios", 0)] = seen("96.00.89.00.01")
    cells = engine.compare({"gpu.vbios": ("96.00.89.00.01",)}, facts)
    assert [(c.gpu, c.status) for c in cells] == [(0, OK), (1, UNKNOWN)]


def test_nothing_observed_is_unknown_never_ok():
    [cell] = engine.compare({"firmware.BMC": ("1.45",)}, {})
    assert (cell.status, cell.observed, cell.gpu) == (UNKNOWN, "", -1)


def test_values_compare_trimmed_and_case_insensitively_and_a_list_accepts_any():
    expected = {"kernel": ("6.8.0-45-GENERIC",), "driver": ("550.90.07", "550.90.12")}
    facts = {("kernel", -1): seen(" 6.8.0-45-generic"), ("driver", -1): seen("550.90.12")}
    assert {c.component: c.status for c in engine.compare(expected, facts)} == {
        "kernel": OK,
        "driver": OK,
    }
    facts[("driver", -1)] = seen("535.129.03")
    cells = {c.component: c for c in engine.compare(expected, facts)}
    assert cells["driver"].status == DRIFT
    assert cells["driver"].expected == "550.90.07 | 550.90.12"


def test_image_manifest_and_hardware_baseline_merge_with_the_hardware_one_winning():
    image = engine.image_expected(
        {"kernel": "6.8.0", "driver": "550.90.07", "firmware": {"BMC": "1.40", "BIOS": "2.1"}}
    )
    merged = engine.merge(image, {"firmware.BMC": "1.45", "gpu.vbios": ["96.00.89.00.01"]})
    assert merged == {
        "kernel": ("6.8.0",),
        "driver": ("550.90.07",),
        "firmware.BMC": ("1.45",),
        "firmware.BIOS": ("2.1",),
        "gpu.vbios": ("96.00.89.00.01",),
    }


def test_a_malformed_image_manifest_gives_what_it_can():
    assert engine.image_expected({"driver": "550", "firmware": {"BMC": {"deep": 1}}}) == {
        "driver": ("550",)
    }
    assert engine.image_expected("not a manifest") == {}


def test_columns_read_os_stack_then_firmware_then_gpus():
    names = ["gpu.vbios", "firmware.bmc", "zeta", "driver", "kernel", "firmware.BIOS"]
    assert sorted(names, key=engine.component_order) == [
        "kernel",
        "driver",
        "firmware.BIOS",
        "firmware.bmc",
        "gpu.vbios",
        "zeta",
    ]


def test_an_old_ok_is_stale_but_old_drift_stays_drift():
    cut = T + timedelta(hours=1)
    assert engine.shown_status(OK, T, cut) == STALE
    assert engine.shown_status(DRIFT, T, cut) == DRIFT
    assert engine.shown_status(OK, cut, T) == OK
    assert engine.rollup([OK, STALE, OK]) == STALE
    assert engine.rollup([OK, UNKNOWN, DRIFT]) == DRIFT
