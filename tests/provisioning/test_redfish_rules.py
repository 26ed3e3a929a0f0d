"""provisioning/drivers/redfish/rules.py: each rule on the spellings real BMCs use.

The corpus (test_redfish_corpus.py) proves the rules on whole trees; these pin each
spelling one by one, so a change to a rule says which spelling it broke.
"""

from __future__ import annotations

import re

import pytest

from provisioning.drivers.redfish import rules


@pytest.mark.parametrize(
    ("raw", "read"),
    [
        ("96.00.A6.00.01  ", "96.00.A6.00.01"),
        ("N/A", None),
        ("NA", None),
        (" ", None),
        ("", None),
        ("To be filled by O.E.M.", None),
        ("undefined", None),
        ("null", None),
        ("0\x14", None),
        (None, None),
        (42, None),
        ("H100 80GB HBM3", "H100 80GB HBM3"),
    ],
)
def test_placeholders_are_unknown_and_strings_are_stripped(raw, read):
    assert rules.text(raw) == read


@pytest.mark.parametrize(
    ("raw", "read"),
    [
        ("00000000000000", None),
        ("01234567890123456789AB", None),
        ("                ", None),
        ("1652923003067", "1652923003067"),
    ],
)
def test_filler_serials_are_unknown(raw, read):
    assert rules.serial(raw) == read


def test_a_model_comes_from_a_name_only_when_the_name_names_a_product():
    assert rules.model({"Model": "N/A", "Name": "NVIDIA L40"}) == "NVIDIA L40"
    assert rules.model({"Name": "GPU 1"}) is None
    assert rules.model({"Name": "NVIDIA Corporation", "Manufacturer": "NVIDIA Corporation"}) is None
    assert rules.model({"Name": "00_1B_00", "Id": "00_1B_00"}) is None


@pytest.mark.parametrize(
    ("function", "base"),
    [
        ({"ClassCode": "0x030200"}, 0x03),
        ({"ClassCode": "0x000003"}, 0x03),  # Dell iDRAC: the base class in the low byte
        ({"ClassCode": 3}, 0x03),  # HPE: decimal
        ({"ClassCode": "0x120000"}, 0x12),
        ({"DeviceClass": "DisplayController"}, 0x03),
        ({"ClassCode": "0x020000"}, 0x02),
        ({}, None),
    ],
)
def test_pci_class_is_read_however_written(function, base):
    assert rules.base_class(function) == base


def test_the_boards_vga_is_never_a_gpu():
    matrox = [{"ClassCode": "0x030000", "VendorId": "0x102b"}]
    assert "Matrox" in rules.onboard_vga({}, matrox)
    assert rules.gpu_function(matrox) is None
    aspeed = [{"ClassCode": "0x030000", "VendorId": "0x1A03", "DeviceId": "0x2000"}]
    assert "ASPEED" in rules.onboard_vga({}, aspeed)
    assert rules.onboard_vga({"Name": "Embedded Video Controller"}, []) is not None
    assert rules.onboard_vga({"VendorID": 4139}, []) is not None  # HPE, decimal 0x102b


def test_display_and_accelerator_functions_of_gpu_vendors_are_gpus():
    assert rules.gpu_function([{"ClassCode": "0x030200", "VendorId": "0x10de"}])
    assert rules.gpu_function([{"ClassCode": "0x120000", "VendorId": "0x1002"}])
    assert rules.gpu_function([{"ClassCode": "0x030200", "VendorId": "0x0000"}])
    assert rules.gpu_function([{"ClassCode": "0x068000", "VendorId": "0x10de"}]) is None


PATTERNS = [(re.compile(r"^Previous-"), "rollback")]


@pytest.mark.parametrize(
    ("member", "state"),
    [
        ({"Id": "Current-159-1.8.2__BIOS.Setup.1-1", "Version": "1.8.2"}, rules.INSTALLED),
        ({"Id": "Previous-159-1.2.4__BIOS.Setup.1-1", "Version": "1.2.4"}, rules.NOT_INSTALLED),
        (
            {"Id": "HGX_FW_GPU_0", "Version": "97.00", "Status": {"State": "Absent"}},
            rules.NOT_INSTALLED,
        ),
        ({"Id": "Node0.ManagementEthernet", "Version": "undefined"}, rules.UNREADABLE),
        ({"Id": "mcu", "Version": "null"}, rules.UNREADABLE),
        ({"Id": "UEFI-Pending"}, rules.UNREADABLE),
    ],
)
def test_which_firmware_is_installed(member, state):
    assert rules.firmware_state(member, PATTERNS)[0] == state
