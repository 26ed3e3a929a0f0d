"""Per-judge rules beyond the headline scenarios in tests/validation/test_verdicts.py."""

import ast
import dataclasses
import json
from pathlib import Path

import pytest

from validation.parsers import PARSERS
from validation.verdicts import (
    JUDGES,
    CheckSpec,
    Findings,
    ThresholdError,
    Verdict,
    judge,
    judge_output,
)
from validation.verdicts.judges_trust import TPM_QUOTE

from ..parsers.helpers import corpus, cut_half, load
from .support import PROFILE, dcgm_spec, node, parsed, spec

IB = "nccl-allreduce-2node-ib-large-sizes.txt"
DCGM_PASS = "dcgmi-diag-r3-dcgm4.0-4gpu-pass.txt"
V100 = "nvidia-smi-q-x-1xV100-legacy-ecc-constructed.xml"


def nccl(**thresholds):
    return spec("nccl", {"busbw_inplace_at_max_gbps": 430, **thresholds})


# --- nccl ---------------------------------------------------------------------------


def test_nccl_wrong_results_fail_even_above_the_floor():
    text = load(IB).replace("466.51      0", "466.51      3")
    verdict = judge_output(nccl(), text, node())
    assert verdict.status == "fail" and not verdict.hardware_fault
    assert verdict.reason.startswith("nccl-tests reported 3 wrong result(s) (#wrong)")


def test_nccl_out_of_bounds_fails():
    text = load(IB).replace("# Out of bounds values : 0 OK", "# Out of bounds values : 2 FAILED")
    verdict = judge_output(nccl(), text, node())
    assert verdict.reason == "nccl-tests reported 2 out-of-bounds value(s)"


@pytest.mark.parametrize(
    ("floor", "margin", "status"),
    [
        (466.51, 0, "pass"),  # exactly on the floor passes
        (480, 5, "degraded"),  # 466.5 >= 480 * 0.95
        (480, 0, "fail"),
        (500, 5, "fail"),  # 466.5 < 475
    ],
)
def test_nccl_degraded_margin(floor, margin, status):
    verdict = judge(
        nccl(busbw_inplace_at_max_gbps=floor, degraded_margin_pct=margin),
        parsed("nccl", IB),
        node(),
    )
    assert verdict.status == status, verdict.reason
    if status == "degraded":
        assert verdict.reason.endswith("(within the 5% degraded margin)")


def test_nccl_small_runs_and_wrong_collectives_fail():
    short = judge(nccl(min_size_bytes=16 << 30), parsed("nccl", IB), node())
    assert short.reason == "largest message was 8 GiB, the floor is defined at 16 GiB (raise -e)"
    other = parsed("nccl", "nccl-alltoall-2node-tagged-info-constructed.txt")
    wrong = judge(nccl(collective="all_reduce", busbw_inplace_at_max_gbps=0), other, node())
    assert wrong.status == "fail" and "this check needs all_reduce" in wrong.reason


# --- DCGM ---------------------------------------------------------------------------


def test_dcgm_skip_is_not_a_pass():
    result = parsed("dcgmi-json", "dcgmi-diag-json-dcgm3-r3-skip-constructed.json")
    verdict = judge(dcgm_spec(check_driver=False), result, node(gpu_count=1))
    assert verdict.status == "fail" and not verdict.hardware_fault
    assert verdict.reason.startswith("required DCGM test pcie was skipped; a skip is not a pass")


def test_dcgm_warn_degrades_unless_warnings_fail():
    text = load(DCGM_PASS).replace(
        "| targeted_power            | Pass ", "| targeted_power            | Warn "
    )
    ctx = node(gpu_count=4, driver="550.90.07")
    warned = judge_output(dcgm_spec(), text, ctx)
    assert warned.status == "degraded" and warned.reason == "DCGM targeted_power: Warn"
    strict = judge_output(dcgm_spec(warn_is_fail=True), text, ctx)
    assert strict.status == "fail" and not strict.hardware_fault


def test_dcgm_runtime_error_fails_without_blaming_hardware():
    text = json.dumps(
        {
            "DCGM Diagnostic": {"runtime_error": "Unable to connect to host engine"},
            "metadata": {"version": "4.0.0", "driver_version": "550.54.15"},
        }
    )
    verdict = judge_output(spec("dcgmi-json", {"required_tests": ["memory"]}), text, node())
    assert verdict.status == "fail" and not verdict.hardware_fault
    assert "dcgmi runtime error (DCGM did not complete): Unable to connect" in verdict.evidence[0]


def test_dcgm_3x_deployment_checks_stand_in_for_software():
    result = parsed("dcgmi", "dcgmi-diag-r3-dcgm3.3.5-4gpu-pcie-fail-constructed.txt")
    verdict = judge(dcgm_spec(), result, node(gpu_count=4))
    assert verdict.hardware_fault
    assert verdict.reason.startswith("DCGM pcie: Fail on GPU 0: GPU 0 Error using CUDA API")
    assert not any("software" in line for line in verdict.evidence)
    assert any("targeted_power was skipped" in line for line in verdict.evidence)


def test_dcgm_hardware_fail_on_json_targeted_power():
    result = parsed("dcgmi-json", "dcgmi-diag-json-dcgm4-r3-constructed.json")
    verdict = judge(PROFILE.check("dcgm-diag-r3"), result, node(gpu_count=2, driver="550.90.07"))
    assert verdict.hardware_fault and verdict.reason.startswith(
        "DCGM targeted_power: Fail on GPU 0"
    )


# --- health judges ------------------------------------------------------------------


def test_lifetime_ecc_is_noted_unless_a_ceiling_is_set():
    ctx = node(gpu_count=1, driver="460.73.01")
    noted = judge_output(PROFILE.check("gpu-health"), load(V100), ctx)
    assert noted.status == "degraded" and "1 lifetime uncorrectable ECC error(s)" in noted.reason
    strict = spec("nvidia-smi-xml", {"ecc_uncorrectable_aggregate_max": 0})
    assert judge_output(strict, load(V100), ctx).hardware_fault


@pytest.mark.parametrize(
    ("action", "advice"),
    [("GPU Reset", "nvidia-smi -r"), ("Node Reboot", "reboot the node"), ("Drain P2P", "drain")],
)
def test_a_gpu_whose_driver_asks_for_recovery_is_not_admitted(action, advice):
    """The real H200 XML (recovery action None passes), with the element changed to what the
    driver reports after an uncorrectable error (NVIDIA's Error Recovery and Response Flags):
    the GPU must not be admitted before that is done."""
    real = corpus("nvidia-smi-xml/v13-580-1xH200-vm-after-app-faults-xid31-13-43-corral.xml")
    ctx = node(gpu_model="H200-SXM", gpu_count=1, fabric="none", driver="580.159.04")
    check = PROFILE.check("gpu-health")
    assert judge_output(check, real, ctx).status == "pass"
    asked = real.replace(
        "<gpu_recovery_action>None</gpu_recovery_action>",
        f"<gpu_recovery_action>{action}</gpu_recovery_action>",
    )
    verdict = judge_output(check, asked, ctx)
    assert verdict.status == "fail" and verdict.hardware_fault, verdict.reason
    assert f"the driver asks for recovery before the GPU is used again: {action}" in verdict.reason
    assert advice in verdict.reason


def test_ecc_disabled_is_a_configuration_failure():
    text = load(V100).replace(
        "<current_ecc>Enabled</current_ecc>", "<current_ecc>Disabled</current_ecc>"
    )
    verdict = judge_output(
        spec("nvidia-smi-xml", {"ecc_uncorrectable_aggregate_max": 5}),
        text,
        node(gpu_count=1, driver="460.73.01"),
    )
    assert verdict.status == "fail" and not verdict.hardware_fault
    assert verdict.reason.endswith("ECC mode is Disabled, acceptance requires Enabled")


def test_missing_driver_baseline_fails_and_null_switches_the_rule_off():
    ctx = node(gpu_count=1, driver=None)
    verdict = judge_output(spec("gpu-burn"), load("gpu-burn-h100-ok.txt"), ctx)
    assert verdict.status == "pass"  # gpu-burn has no driver rule
    smi = judge_output(spec("nvidia-smi-xml"), load(V100), ctx)
    assert smi.reason.startswith("no driver baseline in the node context")
    off = spec("nvidia-smi-xml", {"check_driver": {"fabric": {"ib-400g": None}}})
    assert judge_output(off, load(V100), ctx).status == "degraded"  # only the lifetime ECC note


def test_topology_link_count_and_missing_gpu():
    result = parsed("nvidia-smi-topo", "nvidia-smi-topo-m-8xH100-hgx.txt")
    assert judge(PROFILE.check("nvlink-topology"), result, node()).status == "pass"
    more = judge(spec("nvidia-smi-topo", {"min_nvlinks": 20}), result, node())
    assert more.reason.startswith("GPU0 <-> GPU1 has NV18, fewer than NV20")
    assert judge(spec("nvidia-smi-topo"), result, node(gpu_count=9)).hardware_fault


# --- gpu-burn, fio, iperf3 ----------------------------------------------------------


def test_gpu_burn_counts_and_floor():
    ok = parsed("gpu-burn", "gpu-burn-h100-ok.txt")
    fewer = judge(spec("gpu-burn"), ok, node(gpu_count=8))
    assert fewer.reason == "gpu-burn tested 1 GPUs, the node has 8" and not fewer.hardware_fault
    slow = judge(spec("gpu-burn", {"min_gflops_per_gpu": 60000}), ok, node(gpu_count=1))
    assert slow.status == "fail" and "51402 Gflop/s < 60000 Gflop/s floor" in slow.reason


def test_fio_errors_and_floors():
    text = load("fio-randread-2jobs-preamble-constructed.json")
    errored = judge_output(spec("fio"), text, node())
    assert errored.reason == "fio job seqwrite: error 5 (EIO)"
    clean = text.replace('"error" : 5', '"error" : 0')
    assert judge_output(spec("fio", {"read_iops_min": 700000}), clean, node()).status == "pass"
    slow = judge_output(spec("fio", {"read_iops_min": 1000000}), clean, node())
    assert slow.reason == "fio read IOPS 782231 IOPS < 1000000 IOPS floor"


def test_iperf3_floor_retransmits_and_errors():
    ok = load("iperf3-tcp-8streams-ok-constructed.json")
    check = PROFILE.check("iperf3-host-network")
    assert judge_output(check, ok, node()).status == "pass"
    capped = spec("iperf3", {"min_received_gbps": 40, "max_retransmits": 10})
    assert judge_output(capped, ok, node()).reason == "iperf3 37 TCP retransmits > 10 allowed"
    refused = judge_output(check, load("iperf3-connect-refused-constructed.json"), node())
    assert refused.status == "fail" and refused.reason.startswith("iperf3 error: unable to connect")


# --- shared machinery ---------------------------------------------------------------


def test_hardware_fault_needs_a_hardware_evidence_check():
    result = parsed("gpu-burn", "gpu-burn-faulty.txt")
    verdict = judge(spec("gpu-burn", hardware_evidence=False), result, node(gpu_count=1))
    assert verdict.status == "fail" and verdict.hardware_fault is False
    assert any("not credited" in line for line in verdict.evidence)


def test_unparseable_output_fails_never_passes():
    verdict = judge_output(
        PROFILE.check("gpu-burn"), cut_half(load("gpu-burn-h100-ok.txt")), node(gpu_count=1)
    )
    assert verdict.status == "fail" and not verdict.hardware_fault
    assert verdict.reason.startswith("gpu-burn: could not parse gpu-burn output:")


def test_bad_specs_and_mismatched_results_raise():
    with pytest.raises(ThresholdError, match="unknown threshold key 'busbw'"):
        judge(spec("nccl", {"busbw": 1}), parsed("nccl", IB), node())
    with pytest.raises(ThresholdError, match="unknown tool 'nope'"):
        judge(spec("nope"), parsed("nccl", IB), node())
    with pytest.raises(TypeError, match="got a NcclResult"):
        judge(spec("gpu-burn"), parsed("nccl", IB), node())


def test_verdict_rules_and_json_round_trip():
    with pytest.raises(ValueError, match="status"):
        Verdict("ok", "x")
    with pytest.raises(ValueError, match="hardware_fault"):
        Verdict("pass", "x", hardware_fault=True)
    assert Verdict("fail", "line one\n   line two").reason == "line one line two"
    verdict = judge(PROFILE.check("nccl-allreduce-2node"), parsed("nccl", IB), node())
    assert json.loads(json.dumps(verdict.to_dict())) == verdict.to_dict()
    assert verdict.to_dict()["check"] == "nccl-allreduce-2node"


def test_every_judge_has_a_parser_and_documented_keys():
    # tpm-quote is judged from the boot's TPM evidence, not from parsed command output.
    assert set(JUDGES) - {TPM_QUOTE} <= set(PARSERS)
    assert TPM_QUOTE not in PARSERS
    for tool, chosen in JUDGES.items():
        assert all(key_spec.doc for key_spec in chosen.keys.values()), tool


def test_verdicts_package_does_not_import_django():
    root = Path(__file__).resolve().parents[3] / "validation" / "verdicts"
    for path in root.glob("*.py"):
        tree = ast.parse(path.read_text())
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert not any(name.split(".")[0] == "django" for name in names), path.name


def test_check_spec_is_plain_data():
    check = PROFILE.check("gpu-burn")
    assert dataclasses.replace(check, required=False).required is False
    assert isinstance(CheckSpec("x", "fio", "fio").thresholds, dict)


def test_a_headlines_more_names_the_other_kinds_when_every_one_has_one():
    """Five Xid lines, one shown: the reason still says which codes the other four were."""
    f = Findings(spec("xid"), node(), {})
    f.fail("XID 13 app", kind="XID 13")
    f.fail("XID 79 gone", hardware=True, kind="XID 79")
    f.fail("XID 13 again", kind="XID 13")
    f.fail("XID 31 mmu", kind="XID 31")
    verdict = f.verdict()
    assert verdict.reason == "XID 79 gone (+3 more problems: XID 13 ×2, XID 31)"

    many = Findings(spec("xid"), node(), {})
    for code in (13, 31, 43, 45, 48, 63, 64, 79, 94):
        many.degrade(f"XID {code} seen", kind=f"XID {code}")
    assert many.verdict().reason == (
        "XID 13 seen (+8 more: XID 31, XID 43, XID 45, XID 48, XID 63, XID 64, …)"
    )

    unnamed = Findings(spec("xid"), node(), {})
    unnamed.degrade("first", kind="XID 13")
    unnamed.degrade("second")
    assert unnamed.verdict().reason == "first (+1 more)"
