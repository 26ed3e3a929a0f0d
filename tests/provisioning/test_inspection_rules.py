"""The GPU comparison rule on its own: enrolment sheets and BMCs name one GPU differently."""

from __future__ import annotations

import pytest

from provisioning.inspection import check_gpus, gpu_mismatch, model_matches


@pytest.mark.parametrize(
    ("enrolled", "reported", "same"),
    [
        ("H100-SXM", "NVIDIA H100 80GB HBM3", True),
        ("h100 sxm5", "NVIDIA H100 80GB HBM3", True),
        ("H100-SXM", "NVIDIA A100-SXM4-80GB", False),
        ("H100-SXM", "NVIDIA H200", False),
        ("A100", "NVIDIA A100-SXM4-80GB", True),
        ("MI300X", "AMD Instinct MI300X OAM", True),
        ("MI300X", "AMD Instinct MI300A", False),
        ("TU102", "Nvidia(R) TU102", True),
        ("Hopper", "NVIDIA Hopper HBM3", True),  # no digit: the name as a substring
        ("H100-SXM", None, True),  # a BMC that names no model contradicts nothing
        ("", "NVIDIA H100", True),
    ],
)
def test_model_matches(enrolled, reported, same):
    assert model_matches(enrolled, reported) is same


def test_messages_say_what_was_expected_and_what_was_reported():
    h100 = {"model": "NVIDIA H100 80GB HBM3"}
    assert gpu_mismatch(8, "H100-SXM", {"gpus": [h100] * 8}) is None
    assert gpu_mismatch(8, "H100-SXM", {"gpus": [h100] * 7}) == (
        "expected 8 × H100-SXM, BMC reports 7 × NVIDIA H100 80GB HBM3"
    )
    assert gpu_mismatch(2, "H100-SXM", {"gpus": [h100, {"model": None}]}) is None
    assert gpu_mismatch(1, "H100-SXM", {"gpus": []}) == "expected 1 × H100-SXM, BMC reports 0 GPUs"
    assert gpu_mismatch(4, "", {"gpus": [{"model": None}]}) == (
        "expected 4 GPUs, BMC reports 1 × unknown model"
    )
    assert gpu_mismatch(1, "", {"gpus": []}) == "expected 1 GPU, BMC reports 0 GPUs"
    assert gpu_mismatch(0, "H100-SXM", {"gpus": [h100]}) is None
    # A part that failed to read is named, since it may be where the GPUs went.
    partial = {"gpus": [], "unavailable": {"processors": "BMC at x answered HTTP 500 for /P"}}
    assert gpu_mismatch(8, "H100-SXM", partial) == (
        "expected 8 × H100-SXM, BMC reports 0 GPUs "
        "(processors unavailable: BMC at x answered HTTP 500 for /P)"
    )


def test_check_fails_only_in_fail_mode_and_only_when_the_bmc_can_list_gpus():
    redfish = {"gpus": [], "unavailable": {}}
    assert check_gpus(8, "H100", redfish, "fail") == "expected 8 × H100, BMC reports 0 GPUs"
    assert redfish["mismatch"] == "expected 8 × H100, BMC reports 0 GPUs"
    flagged = {"gpus": [], "unavailable": {}}
    assert check_gpus(8, "H100", flagged, "flag") is None and "mismatch" in flagged
    ipmi = {"gpus": [], "unavailable": {"gpus": "IPMI cannot"}}
    assert check_gpus(8, "H100", ipmi, "fail") is None
    assert (
        ipmi["mismatch"] == "expected 8 × H100, BMC reports 0 GPUs (gpus unavailable: IPMI cannot)"
    )
