"""Acceptance verdicts from recorded tool outputs: the scenarios the gate exists for.

More detailed rules live in tests/validation/verdicts/. Fixture provenance is in
tests/fixtures/tool_outputs/SOURCES.md (recorded vs constructed).
"""

import json

import pytest

from validation.verdicts import (
    CheckSpec,
    ProfileError,
    Verdict,
    classify_run,
    judge,
    judge_output,
    load_profile,
    parse_profile,
    resolve_thresholds,
)

from .parsers.helpers import load
from .verdicts.support import PROFILE, check_data, dcgm_spec, node, parsed, profile_data

TCPXO = "nccl-allreduce-2node-16xH100-tcpxo-full.txt"
IB = "nccl-allreduce-2node-ib-large-sizes.txt"
B200 = "dcgmi-diag-r2-dcgm4.4.1-8xB200-pcie-fail.txt"
DCGM_PASS = "dcgmi-diag-r3-dcgm4.0-4gpu-pass.txt"
SMI_XML = "nvidia-smi-q-x-2xH100-constructed.xml"
SMI_CSV = "nvidia-smi-query-gpu-8xH100-constructed.csv"


# --- nccl all_reduce: largest size, per fabric --------------------------------------


def test_tcpxo_run_passes_the_tcpxo_floor():
    verdict = judge(
        PROFILE.check("nccl-allreduce-2node"), parsed("nccl", TCPXO), node(fabric="tcpxo")
    )
    assert verdict.status == "pass"
    assert verdict.reason == "busbw 337.4 GB/s >= 300.0 GB/s floor for H100-SXM on tcpxo at 8 GiB"
    assert verdict.metrics["busbw_inplace_at_max_gbps"] == 337.35
    assert verdict.metrics["avg_busbw_gbps"] == 70.742  # recorded, never gated on


def test_tcpxo_run_fails_the_ib_floor_with_one_exact_line():
    verdict = judge(
        PROFILE.check("nccl-allreduce-2node"), parsed("nccl", TCPXO), node(fabric="ib-400g")
    )
    assert verdict.status == "fail"
    assert verdict.reason == "busbw 337.4 GB/s < 430.0 GB/s floor for H100-SXM on ib-400g at 8 GiB"
    assert verdict.hardware_fault is False  # slow is for a human, not an RMA
    assert verdict.metrics["thresholds"]["busbw_inplace_at_max_gbps"] == 430


def test_ib_large_sizes_pass_the_ib_floor_for_h100_and_h200():
    for model in ("H100-SXM", "H200-SXM"):
        verdict = judge(
            PROFILE.check("nccl-allreduce-2node"),
            parsed("nccl", IB),
            node(gpu_model=model, fabric="ib-400g"),
        )
        assert verdict.status == "pass", verdict.reason
        assert verdict.reason.startswith("busbw 466.5 GB/s >= 430.0 GB/s floor")


def test_unknown_fabric_has_no_floor_and_fails_closed():
    verdict = judge(
        PROFILE.check("nccl-allreduce-2node"), parsed("nccl", IB), node(fabric="roce-400g")
    )
    assert verdict.status == "fail"
    assert "no busbw_inplace_at_max_gbps threshold for H100-SXM on roce-400g" in verdict.reason


# --- DCGM ---------------------------------------------------------------------------


def test_b200_pcie_fail_is_rma_with_hardware_evidence():
    ctx = node(gpu_model="B200", driver="570.172.08")
    verdict = judge(dcgm_spec(), parsed("dcgmi", B200), ctx)
    assert verdict.status == "fail" and verdict.hardware_fault
    assert verdict.reason.startswith("DCGM pcie: Fail: There was an internal error during the test")
    assert "\n" not in verdict.reason
    outcome = classify_run([verdict])
    assert outcome.status == "rma"
    assert outcome.reason.startswith("dcgmi: DCGM pcie: Fail")
    assert any("[hardware] DCGM pcie: Fail" in line for line in outcome.hardware_evidence)
    assert any(
        "Reset GPU. Restart DCGM. Rerun diagnostics." in line for line in outcome.hardware_evidence
    )
    assert verdict.facts["dcgm"] == "4.4.1" and verdict.facts["driver"] == "570.172.08"


def test_four_gpu_dcgm_r3_pass_is_a_pass():
    verdict = judge(dcgm_spec(), parsed("dcgmi", DCGM_PASS), node(gpu_count=4, driver="550.90.07"))
    assert verdict.status == "pass", verdict.reason
    assert verdict.reason == "DCGM 4.0.0: 7 required tests Pass"
    assert classify_run([verdict]).status == "pass"


def test_dcgm_driver_mismatch_fails_but_is_not_hardware():
    verdict = judge(dcgm_spec(), parsed("dcgmi", DCGM_PASS), node(gpu_count=4, driver="550.54.15"))
    assert verdict.status == "fail" and not verdict.hardware_fault
    assert verdict.reason == "driver 550.90.07 != image baseline 550.54.15 (dcgmi)"


# --- gpu-burn -----------------------------------------------------------------------


def test_gpu_burn_faulty_is_rma():
    verdict = judge(
        PROFILE.check("gpu-burn"), parsed("gpu-burn", "gpu-burn-faulty.txt"), node(gpu_count=1)
    )
    assert verdict.status == "fail" and verdict.hardware_fault
    assert verdict.reason.startswith("gpu-burn GPU 0: FAULTY")
    assert classify_run([verdict]).status == "rma"


def test_gpu_burn_ok_is_pass():
    verdict = judge(
        PROFILE.check("gpu-burn"), parsed("gpu-burn", "gpu-burn-h100-ok.txt"), node(gpu_count=1)
    )
    assert verdict.status == "pass", verdict.reason
    assert verdict.facts["gpu_uuids"] == ["GPU-c6b0ca29-53c0-326e-8aaa-cfa1653e18d1"]
    assert classify_run([verdict]).status == "pass"


# --- nvbandwidth --------------------------------------------------------------------


def test_nvbandwidth_recorded_matrix_against_floors():
    result = parsed("nvbandwidth", "nvbandwidth-d2d-write-ce-8gpu.txt")
    check = PROFILE.check("nvbandwidth-d2d")
    verdict = judge(check, result, node())
    assert verdict.status == "fail" and not verdict.hardware_fault
    assert verdict.reason == (
        "nvbandwidth device_to_device_memcpy_write_ce min 274.9 GB/s < 300.0 GB/s floor "
        "for H100-SXM"
    )
    assert verdict.metrics["min_gbps"] == 274.89  # the diagonal 0.00 is not the minimum
    lower = CheckSpec("d2d", "nvbandwidth", "nvbandwidth", {"min_gbps": 270})
    assert judge(lower, result, node()).status == "pass"
    margin = CheckSpec(
        "d2d", "nvbandwidth", "nvbandwidth", {"min_gbps": 280, "degraded_margin_pct": 5}
    )
    assert judge(margin, result, node()).status == "degraded"


# --- XID classes --------------------------------------------------------------------


def _xid(lines: list[str]) -> Verdict:
    text = "\n".join(
        line
        for line in load("kern-log-xid-constructed.txt").splitlines()
        if any(f"): {code}," in line for code in lines)
    )
    return judge_output(PROFILE.check("kernel-xid"), text, node())


@pytest.mark.parametrize(
    ("code", "status", "hardware"),
    [
        ("48", "fail", True),  # double-bit ECC: rma class
        ("64", "fail", True),  # row-remap failure: rma class
        ("74", "fail", True),  # NVLink: rma class
        ("79", "fail", True),  # fallen off the bus: reboot class
        ("119", "fail", True),  # GSP timeout: reset class
        ("999", "fail", False),  # unknown code: a human looks
        ("13", "degraded", False),  # application class
        ("31", "degraded", False),
        ("43", "pass", False),  # informational
        ("63", "pass", False),
    ],
)
def test_xid_by_action_class(code, status, hardware):
    verdict = _xid([code])
    assert (verdict.status, verdict.hardware_fault) == (status, hardware), verdict.reason
    if status != "pass":
        assert verdict.reason.startswith(f"XID {code} ")


def test_whole_kernel_log_headlines_the_most_severe_xid():
    verdict = judge_output(
        PROFILE.check("kernel-xid"), load("kern-log-xid-constructed.txt"), node()
    )
    assert verdict.hardware_fault
    assert verdict.reason.startswith("XID 48 (rma class, ROBUST_CHANNEL_GPU_ECC_DBE) on 0000:ab:00")
    assert judge_output(PROFILE.check("kernel-xid"), "no xids here\n", node()).status == "pass"


# --- nvidia-smi: count, driver, ECC -------------------------------------------------


def test_nvidia_smi_missing_gpus_is_hardware():
    verdict = judge(PROFILE.check("gpu-health"), parsed("nvidia-smi-xml", SMI_XML), node())
    assert verdict.status == "fail" and verdict.hardware_fault
    assert verdict.reason.startswith("nvidia-smi sees 2 of 8 GPUs on gpu-a01: 6 missing")


def test_nvidia_smi_ecc_and_pending_remap_are_hardware():
    verdict = judge(
        PROFILE.check("gpu-health"), parsed("nvidia-smi-xml", SMI_XML), node(gpu_count=2)
    )
    assert verdict.status == "fail" and verdict.hardware_fault
    assert verdict.reason.startswith(
        "GPU 00000000:2A:00.0 (serial 1654123000002, GPU-0a3f7d2e-91b4-4c3e-a5d6-2f4e8c1b7a02): "
        "1 uncorrectable ECC error(s) since driver load (max 0)"
    )
    assert any("row remap pending" in line for line in verdict.evidence)
    assert verdict.facts["gpu_serials"] == ["1654123000001", "1654123000002"]
    assert verdict.facts["vbios"] == ["96.00.89.00.01"]


def test_nvidia_smi_driver_mismatch_is_not_hardware():
    clean = load(SMI_CSV).replace(", 2, Active", ", 0, Not Active").replace("[N/A], Not", "0, Not")
    verdict = judge_output(PROFILE.check("gpu-query"), clean, node(driver="550.90.07"))
    assert verdict.status == "fail" and not verdict.hardware_fault
    assert verdict.reason == "driver 550.54.15 != image baseline 550.90.07 (nvidia-smi)"
    assert judge_output(PROFILE.check("gpu-query"), clean, node()).status == "pass"


def test_nvidia_smi_csv_ecc_counts():
    verdict = judge_output(PROFILE.check("gpu-query"), load(SMI_CSV), node())
    assert verdict.hardware_fault
    assert verdict.reason.startswith(
        "GPU 7 (00000000:DB:00.0, serial 1654123000008): 2 uncorrectable ECC error(s)"
    )


# --- threshold resolution -----------------------------------------------------------

TREE = {
    "floor": {
        "default": 1,
        "fabric": {"tcpxo": 2},
        "gpu_model": {
            "H100-SXM": {"default": 3, "fabric": {"ib-400g": {"value": 4, "source": "x"}}},
            "H200-SXM": 5,
        },
    }
}


@pytest.mark.parametrize(
    ("model", "fabric", "expected"),
    [
        ("H100-SXM", "ib-400g", 4),  # gpu_model + fabric
        ("H100-SXM", "tcpxo", 3),  # gpu_model beats fabric
        ("H200-SXM", "tcpxo", 5),  # model shorthand beats fabric
        ("B200", "tcpxo", 2),  # fabric beats default
        ("B200", "roce", 1),  # default
        ("h100-sxm", "IB-400G", 4),  # names match case-insensitively
    ],
)
def test_resolution_order(model, fabric, expected):
    assert resolve_thresholds(TREE, model, fabric) == {"floor": expected}


def test_resolution_without_default_leaves_the_key_out():
    assert resolve_thresholds({"floor": {"fabric": {"tcpxo": 2}}}, "H100-SXM", "ib-400g") == {}


# --- profiles -----------------------------------------------------------------------


def test_default_profile_loads_in_phase_order():
    profile = load_profile()
    assert profile.title == "HGX H100/H200 acceptance"
    assert [p.name for p in profile.phases] == [
        "preflight",
        "gpu",
        "nvlink",
        "fabric",
        "storage",
        "burn-in",
    ]
    burn = profile.phases[-1]
    assert burn.soak and burn.duration_s == 120 and burn.repeat == 15
    assert profile.check("dcgm-diag-r3").command == "dcgmi diag -r 3 -j"
    assert {c.tool for c in profile.checks()} >= {
        "nvidia-smi-xml",
        "xid",
        "dcgmi-json",
        "nvbandwidth",
        "nccl",
        "iperf3",
        "fio",
        "gpu-burn",
    }


def test_typo_in_a_threshold_key_is_refused_by_name():
    data = profile_data()
    floors = check_data(data, "nccl-allreduce-2node")["thresholds"]
    floors["busbw_inplace_at_max_gbs"] = floors.pop("busbw_inplace_at_max_gbps")
    with pytest.raises(ProfileError) as raised:
        parse_profile(data, "typo.json")
    message = str(raised.value)
    assert (
        "phase 'fabric' check 'nccl-allreduce-2node' thresholds: unknown threshold key "
        "'busbw_inplace_at_max_gbs' for tool 'nccl' (did you mean "
        "'busbw_inplace_at_max_gbps'?)"
    ) in message
    assert "missing required threshold key 'busbw_inplace_at_max_gbps'" in message


def test_unknown_tool_is_refused_by_name(tmp_path):
    data = profile_data()
    check_data(data, "fio-nvme-randread")["tool"] = "fioo"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(
        ProfileError,
        match=r"phase 'storage' check 'fio-nvme-randread': unknown "
        r"tool 'fioo' \(did you mean 'fio'\?\)",
    ):
        load_profile(path)


# --- run outcomes -------------------------------------------------------------------


def _v(status, check, hardware=False, required=True):
    return Verdict(
        status,
        f"{check} said {status}",
        hardware_fault=hardware,
        evidence=[f"{check} evidence"],
        check=check,
        required=required,
    )


def test_classify_run_outcomes():
    assert classify_run([_v("pass", "a"), _v("pass", "b")]).status == "pass"
    degraded = classify_run([_v("pass", "a"), _v("degraded", "b")])
    assert degraded.status == "pass" and degraded.notes == ["degraded b: b said degraded"]
    failed = classify_run([_v("pass", "a"), _v("fail", "b"), _v("fail", "c")])
    assert (failed.status, failed.reason) == ("fail", "b: b said fail (+1 more failed check)")
    rma = classify_run([_v("fail", "a"), _v("fail", "b", hardware=True)])
    assert (rma.status, rma.reason) == ("rma", "b: b said fail")
    assert rma.hardware_evidence == ["b: b evidence"] and rma.notes == [
        "also failed a: a said fail"
    ]
    optional = classify_run([_v("pass", "a"), _v("fail", "b", required=False)])
    assert optional.status == "pass" and optional.notes == ["optional check failed b: b said fail"]
    assert classify_run([_v("fail", "b", hardware=True, required=False)]).status == "rma"
    assert classify_run([]).status == "fail"
