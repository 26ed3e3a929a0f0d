"""Naming the suspected part from the gates' findings (pure functions)."""

from rma.evidence_facts import suspected_component

FACTS = {
    "gpus": [
        {"index": 0, "pci_address": "0000:18:00.0", "serial": "1650923000001"},
        {"index": 3, "pci_address": "00000000:3B:00.0", "serial": "1650923007581"},
    ]
}


def test_an_xid_line_names_the_gpu_by_pci_address_with_its_serial():
    line = "xid: XID 79 (reset class, GPU has fallen off the bus) on 0000:3b:00: GPU gone"
    found = suspected_component([line], FACTS)
    assert found == {"name": "GPU 3", "pci_address": "00000000:3B:00.0", "serial": "1650923007581"}


def test_a_smi_line_carries_its_own_serial_when_the_facts_do_not_know_the_gpu():
    line = "nvidia-smi: GPU 00000000:5E:00.0 (serial 1650923004444, GPU-abc): 12 uncorrected ECC"
    found = suspected_component([line], {})
    assert found == {
        "name": "GPU 00000000:5E:00.0",
        "pci_address": "00000000:5E:00.0",
        "serial": "1650923004444",
    }


def test_a_gpu_index_is_looked_up_in_the_facts():
    found = suspected_component(["gpu-burn: GPU 3: FAULTY"], FACTS)
    assert found["name"] == "GPU 3" and found["serial"] == "1650923007581"


def test_no_gpu_named_means_no_guess():
    assert suspected_component(["dcgm: PCIe replay count high on the node"], FACTS) == {}
