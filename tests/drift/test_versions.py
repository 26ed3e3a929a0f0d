"""Version comparison on the forms real BMCs write (each pair is taken from the corpus
tree named beside it: tests/corpus/redfish/<tree>)."""

from __future__ import annotations

import pytest

from drift.versions import compare, older, same

OLDER_THEN_NEWER = [
    # nvidia-dgx-h100 / nvidia-gh200: GPU VBIOS, hex bytes (0x89 < 0xA6).
    ("96.00.89.00.01", "96.00.A6.00.01"),
    ("96.00.61.00.01", "96.00.89.00.01"),
    # hpe-proliant-dl325-gen10plus: the same ROM family A43, v2.40 then v2.52.
    ("A43 v2.40 (02/23/2021)", "A43 v2.52 (10/29/2021)"),
    # hpe-apollo-xl675d-gen10plus-a40 / hpe-proliant-dl385-gen10plus-v2: iLO 5 builds.
    ("2.55 Oct 01 2021", "2.72 Sep 04 2022"),
    # supermicro-sys-821ge-tnhr: AMI BIOS, the "Ver" part.
    ("BIOS Date: 05/04/2023 Ver 1.3", "BIOS Date: 08/04/2023 Ver 1.4"),
    # nvidia-dgx-h100: HGX firmware release candidates.
    ("HGX-22.10-1-rc34", "HGX-22.10-1-rc57"),
    # Mellanox ConnectX firmware (several trees): numbers, not strings ("9" < "10").
    ("24.40.1000", "24.41.1000"),
    ("2.9", "2.10"),
    ("1.0.0-rc1", "1.0.0"),
]


@pytest.mark.parametrize(("old", "new"), OLDER_THEN_NEWER)
def test_the_older_of_two_vendor_versions_is_told_apart(old, new):
    assert compare(old, new) == -1 and compare(new, old) == 1
    assert older(old, new) and not older(new, old)


def test_the_same_version_written_apart_is_the_same_and_padding_is_not_a_version():
    assert same("96.00.A6.00.01  ", "96.00.a6.00.01")  # nvidia-gh200 pads with spaces
    assert same("01.02.04        ", "1.2.4")
    assert not same("1.45", "1.45.0")


def test_two_rom_families_cannot_be_ordered():
    """A47 and A43 are different HPE system ROMs (hpe-proliant-dl325-gen10plus holds
    both): a baseline naming one is neither older nor newer than the other."""
    assert compare("A47 v2.58 (05/19/2022)", "A43 v2.52 (10/29/2021)") is None
    assert not older("A47 v2.58 (05/19/2022)", "A43 v2.52 (10/29/2021)")
