"""One H100 SXM passed through to a VM (the corral recordings of 2026-11-27 in
tests/corpus/tools): the outputs a single-GPU node gives and the verdicts they call for.

Each test failed before its fix: nccl-tests on one rank passed a busbw floor on
sendrecv's in-place number (27031 GB/s), or failed with a confusing "0.0 GB/s < floor";
driver 580's underlined ``topo -m`` header was refused; a one-GPU topology "passed" as
"all pairs on NVLink (weakest NVNone)"; an empty ``nvlink -s`` said "got empty input";
nvbandwidth ``-j`` JSON was refused for having "no 'Running <test>.' block".
"""

import pytest

from validation.parsers import ParseError, parse
from validation.verdicts import judge, judge_output

from ..parsers.helpers import corpus, load
from .support import node, spec

SENDRECV = "nccl/sendrecv-2.19.6-1xH100-SXM-1rank-inplace-absurd-corral.txt"
ALL_REDUCE = "nccl/allreduce-2.19.6-1xH100-SXM-1rank-8B-1GiB-corral.txt"
ALL_REDUCE_JSON = "nccl/allreduce-2.19.6-1xH100-SXM-1rank-J-v3-env-removed-corral.json"
TOPO_1GPU = "nvidia-smi-topo/1xH100-SXM-vm-ansi-underline-header-580-corral.txt"
NVLINK_EMPTY = "nvidia-smi-nvlink/s-1xH100-SXM-vm-empty-580-corral.txt"
NVB_JSON = "nvbandwidth/v0.8-1xH100-SXM-vm-h2d-d2h-json-corral.json"
ONE_GPU = {"gpu_model": "H100-SXM", "gpu_count": 1, "fabric": "none", "driver": None}
NOT_MEASURED = "1 rank: bus bandwidth is not measured"


@pytest.mark.parametrize("sample", [SENDRECV, ALL_REDUCE, ALL_REDUCE_JSON])
def test_nccl_one_rank_is_not_a_bus_bandwidth_measurement(sample):
    check = spec("nccl", {"busbw_inplace_at_max_gbps": 400})
    verdict = judge_output(check, corpus(sample), node(**ONE_GPU))
    assert verdict.status == "fail" and not verdict.hardware_fault
    assert verdict.reason.startswith(NOT_MEASURED)
    assert "GB/s" not in verdict.reason  # neither sendrecv's 27031 nor all_reduce's 0.0


def test_nccl_one_rank_still_fails_wrong_results_first():
    text = corpus(ALL_REDUCE).replace("937111    0.00       0", "937111    0.00       5")
    verdict = judge_output(spec("nccl", {"busbw_inplace_at_max_gbps": 400}), text, node(**ONE_GPU))
    assert verdict.reason.startswith("nccl-tests reported 5 wrong result(s)")
    assert any(line.startswith(NOT_MEASURED) for line in verdict.evidence)


def test_nccl_two_ranks_are_judged_on_the_floor_as_before():
    verdict = judge_output(
        spec("nccl", {"busbw_inplace_at_max_gbps": 430}),
        load("nccl-allreduce-2node-ib-large-sizes.txt"),
        node(),
    )
    assert verdict.status == "pass" and verdict.reason.startswith("busbw 466.5 GB/s")


def test_topo_header_underlined_with_escape_codes_parses():
    data = parse("nvidia-smi-topo", corpus(TOPO_1GPU)).to_dict()
    assert data["gpu_count"] == 1 and data["nic_count"] == 0
    assert data["gpus"][0]["links"] == {}
    assert data["gpus"][0]["cpu_affinity"] == "0-15"
    assert data["gpus"][0]["gpu_numa_id"] == "N/A"


def test_topo_one_gpu_says_there_is_no_pair_to_check():
    result = parse("nvidia-smi-topo", corpus(TOPO_1GPU))
    verdict = judge(spec("nvidia-smi-topo"), result, node(**ONE_GPU))
    assert verdict.status == "pass"
    assert verdict.reason == "1 GPU: no GPU pairs, so no NVLink to check"


def test_topo_no_nvlink_pair_when_not_required_is_not_called_nvlink():
    text = load("nvidia-smi-topo-m-8xH100-hgx.txt").replace("NV18", "SYS")
    result = parse("nvidia-smi-topo", text)
    verdict = judge(spec("nvidia-smi-topo", {"require_nvlink": False}), result, node())
    assert verdict.status == "pass"
    assert verdict.reason == "8 GPUs, no pair on NVLink (not required)"


def test_empty_nvlink_output_is_no_nvlink_information_not_a_pass():
    with pytest.raises(ParseError, match="no NVLink information"):
        parse("nvidia-smi-nvlink", corpus(NVLINK_EMPTY))
    check = spec("nvidia-smi-nvlink", {"min_active_links": 18}, name="nvlink")
    verdict = judge_output(check, corpus(NVLINK_EMPTY), node(**ONE_GPU))
    assert verdict.status == "fail" and not verdict.hardware_fault
    assert "no NVLink information" in verdict.reason


def test_nvbandwidth_json_is_refused_by_name():
    with pytest.raises(ParseError, match="-j JSON is not read"):
        parse("nvbandwidth", corpus(NVB_JSON))
