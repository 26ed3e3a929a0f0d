"""gpu-burn runs that end with every GPU "OK" although some never computed (issue 28).

gpu-burn's final block marks a GPU FAULTY only for computation errors, so a GPU whose
process never reported, hung, or died is printed "OK". The corpus sample is a real
7x B300 run: last progress at 84.5%, six GPUs at "0 (0 Gflop/s)", force-killed.
"""

import pytest

from validation.parsers.gpu_burn import parse_gpu_burn
from validation.verdicts import judge

from ..verdicts.support import node, spec
from .helpers import corpus

B300 = "gpu-burn/7xB300-killed-at-84pct-six-gpus-0-gflops.txt"


def test_killed_run_with_idle_gpus_is_not_ok():
    result = parse_gpu_burn(corpus(B300))
    assert result.gpus == dict.fromkeys(range(7), "OK")  # what the tool printed
    assert result.processed == {0: 0, 1: 478, 2: 0, 3: 0, 4: 0, 5: 0, 6: 0}
    assert result.idle == [0, 2, 3, 4, 5, 6]
    assert result.progress_pct == pytest.approx(84.5)
    assert result.force_killed is True
    assert result.ok is False


def test_judge_fails_naming_every_idle_gpu():
    verdict = judge(spec("gpu-burn"), parse_gpu_burn(corpus(B300)), node("B300", 7))
    assert verdict.status == "fail"
    assert not verdict.hardware_fault  # no computation error was seen
    text = "\n".join(verdict.evidence)
    for gpu in (0, 2, 3, 4, 5, 6):
        assert f"GPU {gpu} (GPU-" in text and "computed nothing" in text
    assert "GPU 1 (" not in text.split("84.5%")[0]  # GPU 1 did compute
    assert "84.5%" in text


def test_glued_progress_records_stay_per_gpu():
    # Captures that lost the carriage returns glue records together; GPU indexes must
    # restart at every "NN.N%  proc'd:" instead of running past the GPU count.
    record = (
        "100.0%  proc'd: 10 (900 Gflop/s) - 12 (950 Gflop/s)   errors: 0 - 0   temps: 50 C - 51 C "
    )
    text = record + record + "\nTested 2 GPUs:\n\tGPU 0: OK\n\tGPU 1: OK\n"
    result = parse_gpu_burn(text)
    assert result.gflops == {0: 900.0, 1: 950.0}
    assert result.ok is True


def test_a_died_gpu_is_not_ok():
    text = (
        "100.0%  proc'd: 4000 (900 Gflop/s) - -1 (0 Gflop/s)   errors: 0 - 0  (DIED!)   "
        "temps: 50 C - 51 C \nTested 2 GPUs:\n\tGPU 0: OK\n\tGPU 1: OK\n"
    )
    result = parse_gpu_burn(text)
    assert result.died == [1]
    assert result.ok is False
