import pytest

from validation.parsers import ParseError
from validation.parsers.gpu_burn import parse_gpu_burn
from validation.parsers.nvbandwidth import parse_nvbandwidth

from .helpers import cut_before, cut_half, load

NVB8 = "nvbandwidth-d2d-write-ce-8gpu.txt"
NVB_SUM = "nvbandwidth-h100-3tests-sum-constructed.txt"


def test_nvbandwidth_recorded_matrix():
    data = parse_nvbandwidth(load(NVB8)).to_dict()
    test = data["tests"]["device_to_device_memcpy_write_ce"]
    assert test["columns"] == [str(i) for i in range(8)]
    assert len(test["matrix"]) == 8
    assert test["matrix"][6][0] == pytest.approx(274.89)
    # the 0.00 diagonal (a GPU copying to itself) is not a measurement
    assert test["min"] == pytest.approx(274.89)
    assert test["max"] == pytest.approx(276.76)
    assert test["mean"] == pytest.approx(276.3371, abs=1e-3)
    assert test["sum"] is None  # this older output prints no SUM line
    assert test["unit"] == "GB/s"


def test_nvbandwidth_multi_test_with_sum_and_na():
    data = parse_nvbandwidth(load(NVB_SUM)).to_dict()
    assert data["version"] == "v0.7" and data["driver_version"] == "550.54.15"
    assert list(data["tests"]) == [
        "host_to_device_memcpy_ce",
        "device_to_host_memcpy_ce",
        "device_to_device_memcpy_read_ce",
    ]
    h2d = data["tests"]["host_to_device_memcpy_ce"]
    assert (h2d["min"], h2d["max"], h2d["sum"]) == (55.09, 55.78, 221.44)
    d2d = data["tests"]["device_to_device_memcpy_read_ce"]
    assert d2d["matrix"][0][0] is None
    assert (d2d["min"], d2d["max"], d2d["sum"]) == (389.44, 390.54, 4678.53)


def test_nvbandwidth_truncated_raises():
    with pytest.raises(ParseError, match="incomplete matrix"):
        parse_nvbandwidth(cut_half(load(NVB8)))
    with pytest.raises(ParseError, match="SUM device_to_device_memcpy_read_ce"):
        parse_nvbandwidth(cut_before(load(NVB_SUM), "SUM device_to_device"))
    with pytest.raises(ParseError):
        parse_nvbandwidth(cut_half(load(NVB_SUM)))


def test_nvbandwidth_garbled_raises():
    with pytest.raises(ParseError, match="line 8"):
        parse_nvbandwidth(load(NVB8).replace("276.76", "27#.76"))
    with pytest.raises(ParseError, match="matrix row"):
        parse_nvbandwidth(load(NVB8).replace("    276.45      0.00", "      0.00"))


def test_gpu_burn_ok():
    data = parse_gpu_burn(load("gpu-burn-h100-ok.txt")).to_dict()
    assert data["gpus"] == {"0": "OK"}
    assert data["gflops"] == {"0": 51402.0}
    assert data["gflops_total"] == 51402.0
    assert data["errors_total"] == {"0": 0}
    assert data["temps_c"] == {"0": 56}
    assert data["models"] == {"0": "NVIDIA H100 80GB HBM3"}
    assert data["uuids"] == {"0": "GPU-c6b0ca29-53c0-326e-8aaa-cfa1653e18d1"}
    assert data["ok"] is True


def test_gpu_burn_faulty():
    data = parse_gpu_burn(load("gpu-burn-faulty.txt")).to_dict()
    assert data["gpus"] == {"0": "FAULTY"}
    assert data["gflops"] == {"0": 3064.0}
    assert data["errors_total"] == {"0": 30454599 + 10159088}
    assert data["faulty_intervals"] == {"0": 2}
    assert data["ok"] is False


def test_gpu_burn_multi_gpu_progress():
    text = (
        "100.0%  proc'd: 5600 (51402 Gflop/s) - 5590 (51311 Gflop/s)   "
        "errors: 0 - 7 (WARNING!)   temps: 56 C - 58 C \n\nTested 2 GPUs:\n"
        "\tGPU 0: OK\n\tGPU 1: FAULTY\n"
    )
    result = parse_gpu_burn(text)
    assert result.gpus == {0: "OK", 1: "FAULTY"}
    assert result.gflops == {0: 51402.0, 1: 51311.0}
    assert result.errors_total == {0: 0, 1: 7}
    assert result.temps_c == {0: 56, 1: 58}


@pytest.mark.parametrize("name", ["gpu-burn-h100-ok.txt", "gpu-burn-faulty.txt"])
def test_gpu_burn_truncated_raises(name):
    text = load(name)
    with pytest.raises(ParseError, match="Tested N GPUs|progress line"):
        parse_gpu_burn(cut_half(text))
    with pytest.raises(ParseError, match="Tested N GPUs"):
        parse_gpu_burn(cut_before(text, "Tested 1 GPUs"))
    with pytest.raises(ParseError, match="expected 1"):
        parse_gpu_burn(cut_before(text, "GPU 0:"))  # verdict line cut off


def test_gpu_burn_garbled_verdict_raises():
    text = load("gpu-burn-h100-ok.txt").replace("GPU 0: OK", "GPU 0: 0K")
    with pytest.raises(ParseError, match="'0K'"):
        parse_gpu_burn(text)
