"""``nvidia-smi nvlink -s`` / ``-e``: the parser and the NVLink judge (issue 28).

The two real -s samples come from tests/corpus/tools/nvidia-smi-nvlink. No real -e
capture with non-zero counters was found, so the counter cases below are synthetic and
follow the line shape of published -e output ("Link 0: Replay Errors: 0").
"""

import pytest

from validation.parsers import ParseError, parse
from validation.parsers.nvidia_smi_nvlink import parse_nvidia_smi_nvlink
from validation.verdicts import ThresholdError, judge

from ..verdicts.support import node, spec
from .helpers import corpus

H100_PCIE = "nvidia-smi-nvlink/s-2xH100-PCIe-NV12-bridge-555.txt"
A100_NO_BRIDGE = "nvidia-smi-nvlink/s-2xA100-PCIe-no-bridge-all-inactive-555.txt"

COUNTERS = """GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-aaaa)
\t Link 0: Replay Errors: 0
\t Link 0: Recovery Errors: 0
\t Link 0: CRC Errors: 0

\t Link 1: Replay Errors: 3
\t Link 1: Recovery Errors: 0
\t Link 1: CRC Errors: 12
"""


def test_status_lists_active_and_inactive_links_per_gpu():
    result = parse("nvidia-smi-nvlink", corpus(H100_PCIE))
    assert [g.uuid for g in result.gpus] == [
        "GPU-6968dfc2-d444-d92c-c36b-6abe53445cb9",
        "GPU-9b1446e2-8a89-4cf6-b68c-a98d99e958d3",
    ]
    gpu = result.gpus[0]
    assert gpu.name == "NVIDIA H100 PCIe"
    assert gpu.active_links() == [0, 1, 2, 3, 6, 7, 8, 9, 12, 13, 14, 15]
    assert gpu.inactive_links() == [4, 5, 10, 11, 16, 17]
    assert {link.speed_gbps for link in gpu.links if link.active} == {26.562}
    assert result.has_status and not result.has_counters


def test_all_links_inactive_sentence():
    result = parse_nvidia_smi_nvlink(corpus(A100_NO_BRIDGE))
    assert [(g.index, g.all_inactive, g.links) for g in result.gpus] == [
        (0, True, []),
        (1, True, []),
    ]


def test_counters_and_status_merge_per_link():
    text = corpus(H100_PCIE).split("GPU 1:")[0] + COUNTERS.replace("H100 80GB HBM3", "H100 PCIe")
    gpu = parse_nvidia_smi_nvlink(text).gpus[0]
    assert gpu.links[1].active is True and gpu.links[1].counters["CRC Errors"] == 12


def test_nested_counters_under_a_bare_link_line():
    text = "GPU 0: NVIDIA B200 (UUID: GPU-b)\n\t Link 0:\n\t\t Replay Errors: 2\n"
    assert parse_nvidia_smi_nvlink(text).gpus[0].links[0].counters == {"Replay Errors": 2}


@pytest.mark.parametrize(
    "text,match",
    [
        ("Link 0: 26.562 GB/s\n", "GPU <i>"),
        ("GPU 0: NVIDIA H100 (UUID: GPU-a)\n\t Link 0: 26.5#2 GB/s\n", "line 2"),
        ("GPU 0: NVIDIA H100 (UUID: GPU-a)\n\t [...]\n", "line 2"),
        ("GPU 0: NVIDIA H100 (UUID: GPU-a)\n", "no link lines"),
        ("", "empty"),
    ],
)
def test_garbled_or_cut_output_raises(text, match):
    with pytest.raises(ParseError, match=match):
        parse_nvidia_smi_nvlink(text)


def test_judge_counts_active_links_against_the_boards_floor():
    result = parse_nvidia_smi_nvlink(corpus(H100_PCIE))
    bridged = judge(spec("nvidia-smi-nvlink", {"min_active_links": 12}), result, node(gpu_count=2))
    assert bridged.status == "pass", bridged.reason
    sxm = judge(spec("nvidia-smi-nvlink", {"min_active_links": 18}), result, node(gpu_count=2))
    assert sxm.status == "fail" and not sxm.hardware_fault
    assert "GPU 0 (NVIDIA H100 PCIe): 12 NVLinks active, fewer than 18" in sxm.reason
    assert "inactive: 4, 5, 10, 11, 16, 17" in sxm.reason


def test_judge_fails_a_gpu_with_every_link_inactive():
    result = parse_nvidia_smi_nvlink(corpus(A100_NO_BRIDGE))
    verdict = judge(spec("nvidia-smi-nvlink", {"min_active_links": 4}), result, node(gpu_count=2))
    assert verdict.status == "fail"
    assert "all links are inActive" in verdict.reason


def test_judge_error_counters_and_speed_floor():
    result = parse_nvidia_smi_nvlink(COUNTERS)
    verdict = judge(
        spec("nvidia-smi-nvlink", {"min_active_links": 0, "max_link_errors": 5}),
        result,
        node(gpu_count=1),
    )
    assert verdict.status == "fail"
    assert "link 1 CRC Errors = 12" in verdict.reason and "Replay" not in verdict.reason
    slow = judge(
        spec("nvidia-smi-nvlink", {"min_active_links": 12, "min_link_gbps": 30}),
        parse_nvidia_smi_nvlink(corpus(H100_PCIE)),
        node(gpu_count=2),
    )
    assert "12 NVLink(s) below 30 GB/s" in slow.reason


def test_judge_needs_a_floor_and_sees_missing_gpus():
    result = parse_nvidia_smi_nvlink(corpus(H100_PCIE))
    with pytest.raises(ThresholdError, match="missing required threshold key 'min_active_links'"):
        judge(spec("nvidia-smi-nvlink"), result, node(gpu_count=2))
    missing = judge(spec("nvidia-smi-nvlink", {"min_active_links": 12}), result, node())
    assert missing.hardware_fault  # 2 of the node's 8 GPUs listed
    with pytest.raises(ThresholdError, match="min_active_link"):
        judge(spec("nvidia-smi-nvlink", {"min_active_link": 12}), result, node())
