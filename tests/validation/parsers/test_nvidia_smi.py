import pytest

from validation.parsers import ParseError
from validation.parsers.nvidia_smi_csv import parse_nvidia_smi_csv
from validation.parsers.nvidia_smi_topo import parse_nvidia_smi_topo
from validation.parsers.nvidia_smi_xml import parse_nvidia_smi_xml

from .helpers import corpus, cut_before, cut_half, load

CSV = "nvidia-smi-query-gpu-8xH100-constructed.csv"
CSV_BARE = "nvidia-smi-query-gpu-noheader-nounits-constructed.csv"
XML = "nvidia-smi-q-x-2xH100-constructed.xml"
XML_V100 = "nvidia-smi-q-x-1xV100-legacy-ecc-constructed.xml"
TOPO = "nvidia-smi-topo-m-8xH100-hgx.txt"
TOPO2 = "nvidia-smi-topo-m-2xA100-legend-constructed.txt"
BARE_FIELDS = ["index", "name", "uuid", "driver_version", "memory.total", "temperature.gpu"]


def test_csv_with_header_and_units():
    data = parse_nvidia_smi_csv(load(CSV)).to_dict()
    assert data["driver_version"] == "550.54.15"
    assert len(data["gpus"]) == 8
    assert data["units"] == {"memory.total": "MiB", "power.draw": "W"}
    gpu0 = data["gpus"][0]
    assert gpu0["index"] == 0
    assert gpu0["memory.total"] == 81559
    assert gpu0["power.draw"] == pytest.approx(71.42)
    assert gpu0["vbios_version"] == "96.00.89.00.01"
    assert gpu0["pci.bus_id"] == "00000000:18:00.0"
    assert data["gpus"][4]["ecc.errors.uncorrected.volatile.total"] is None  # [N/A]
    assert data["gpus"][7]["ecc.errors.uncorrected.volatile.total"] == 2


def test_csv_noheader_nounits_needs_fields():
    with pytest.raises(ParseError, match="fields"):
        parse_nvidia_smi_csv(load(CSV_BARE))
    data = parse_nvidia_smi_csv(load(CSV_BARE), fields=BARE_FIELDS).to_dict()
    assert data["driver_version"] == "550.54.15"
    assert [g["temperature.gpu"] for g in data["gpus"]] == [33, 31]
    assert data["gpus"][1]["uuid"] == "GPU-0a3f7d2e-91b4-4c3e-a5d6-2f4e8c1b7a02"


def test_csv_identity_fields_stay_strings():
    text = "index, driver_version, serial\n0, 551.60, 1654123000001\n"
    data = parse_nvidia_smi_csv(text).to_dict()
    assert data["driver_version"] == "551.60"
    assert data["gpus"][0]["serial"] == "1654123000001"


def test_csv_truncated_or_garbled_raises():
    with pytest.raises(ParseError, match="comma-separated values"):
        parse_nvidia_smi_csv(cut_half(load(CSV)))
    with pytest.raises(ParseError, match="line 3"):
        parse_nvidia_smi_csv(load(CSV).replace("GPU-0a3f7d2e-91b4-4c3e-a5d6-2f4e8c1b7a02, ", ""))
    with pytest.raises(ParseError, match="at least one GPU row"):
        parse_nvidia_smi_csv(load(CSV).splitlines()[0] + "\n")


def test_xml_hopper():
    data = parse_nvidia_smi_xml(load(XML)).to_dict()
    assert data["driver_version"] == "550.54.15"
    assert data["cuda_version"] == "12.4"
    assert data["attached_gpus"] == 2
    gpu0, gpu1 = data["gpus"]
    assert gpu0["uuid"] == "GPU-c6b0ca29-53c0-326e-8aaa-cfa1653e18d1"
    assert gpu0["serial"] == "1654123000001"
    assert gpu0["vbios_version"] == "96.00.89.00.01"
    assert gpu0["pci_bus_id"] == "00000000:18:00.0"
    assert gpu0["ecc_volatile"] == {"correctable": 0, "uncorrectable": 0}
    assert gpu0["ecc_aggregate"] == {"correctable": 3, "uncorrectable": 0}
    assert gpu0["retired_pages_dbe"] is None  # N/A on Hopper: row remapping instead
    assert gpu0["remapped_rows_pending"] is False
    assert gpu0["temperature_gpu_c"] == 33 and gpu0["temperature_memory_c"] == 40
    assert gpu1["ecc_volatile"] == {"correctable": 0, "uncorrectable": 1}
    assert gpu1["ecc_aggregate"] == {"correctable": 14, "uncorrectable": 1}
    assert gpu1["remapped_rows_uncorrectable"] == 1
    assert gpu1["remapped_rows_pending"] is True
    assert gpu1["remapped_rows_failure"] is False


def test_xml_legacy_ecc_and_retired_pages():
    (gpu,) = parse_nvidia_smi_xml(load(XML_V100)).gpus
    assert gpu.ecc_aggregate.correctable == 5 and gpu.ecc_aggregate.uncorrectable == 1
    assert gpu.retired_pages_dbe == 1 and gpu.retired_pages_sbe == 0
    assert gpu.retired_pages_pending is False
    assert gpu.remapped_rows_pending is None


@pytest.mark.parametrize("name", [XML, XML_V100])
def test_xml_truncated_raises(name):
    with pytest.raises(ParseError, match="well-formed XML"):
        parse_nvidia_smi_xml(cut_half(load(name)))
    with pytest.raises(ParseError, match="well-formed XML"):
        parse_nvidia_smi_xml(cut_before(load(name), "</nvidia_smi_log>"))


def test_xml_gpu_count_mismatch_and_entities_raise():
    text = load(XML).replace("<attached_gpus>2</attached_gpus>", "<attached_gpus>3</attached_gpus>")
    with pytest.raises(ParseError, match="expected 3 <gpu>"):
        parse_nvidia_smi_xml(text)
    bomb = '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><nvidia_smi_log/>'
    with pytest.raises(ParseError, match="ENTITY"):
        parse_nvidia_smi_xml(bomb)


def test_topo_recorded_hgx():
    data = parse_nvidia_smi_topo(load(TOPO)).to_dict()
    assert data["gpu_count"] == 8 and data["nic_count"] == 10
    gpu0 = data["gpus"][0]
    assert gpu0["links"] == {f"GPU{i}": "NV18" for i in range(1, 8)}
    assert gpu0["nics"]["NIC0"] == "PIX" and gpu0["nearest_nics"] == ["NIC0"]
    assert gpu0["cpu_affinity"] == "0-55,112-167"
    assert gpu0["numa_affinity"] == "0"
    assert gpu0["gpu_numa_id"] == "N/A"
    assert data["gpus"][3]["nearest_nics"] == ["NIC5"]
    assert data["gpus"][7]["numa_affinity"] == "1"
    assert data["gpus"][7]["nearest_nics"] == ["NIC9"]
    assert sorted(data["nics"]) == ["NIC0", "NIC1", "NIC2"]  # the rest were cut in the source


def test_topo_with_legend():
    data = parse_nvidia_smi_topo(load(TOPO2)).to_dict()
    assert data["nic_names"] == {"NIC0": "mlx5_0", "NIC1": "mlx5_1"}
    assert data["gpus"][1]["links"] == {"GPU0": "NV12"}
    assert data["gpus"][1]["nearest_nics"] == ["NIC1"]
    assert data["gpus"][1]["cpu_affinity"] == "32-63,96-127"


def test_topo_truncated_or_garbled_raises():
    with pytest.raises(ParseError, match="no row for GPU|link cells"):
        parse_nvidia_smi_topo(cut_half(load(TOPO)))
    with pytest.raises(ParseError, match="no row for GPU7"):
        parse_nvidia_smi_topo(cut_before(load(TOPO), "GPU7\t"))
    with pytest.raises(ParseError, match="link type"):
        parse_nvidia_smi_topo(load(TOPO).replace("NV18", "NX18", 1))
    with pytest.raises(ParseError, match="header"):
        parse_nvidia_smi_topo("GPU0 X\n")


H200_AFTER_FAULTS = "nvidia-smi-xml/v13-580-1xH200-vm-after-app-faults-xid31-13-43-corral.xml"


def test_xml_recovery_action_as_the_driver_reports_it():
    """Driver 580 reports `<gpu_recovery_action>None</gpu_recovery_action>` on a healthy GPU;
    older XML has no such element."""
    assert parse_nvidia_smi_xml(corpus(H200_AFTER_FAULTS)).gpus[0].recovery_action == "None"
    assert parse_nvidia_smi_xml(load(XML)).gpus[0].recovery_action is None
