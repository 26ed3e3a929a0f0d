"""Redfish virtual media against sushy-tools' emulator (its VirtualMedia resource fetches
the image the way a BMC does): a boot image inserted as the machine's CD from a URL, the
next boot set to it once, ejected; a URL the BMC cannot fetch refused with its answer;
an IPMI BMC says it has none (provisioning/drivers/redfish/vmedia.py)."""

from __future__ import annotations

import pytest
import requests

from provisioning.drivers import BMCError, BMCSettings, BMCUnsupportedError, get_driver
from tests.peers.http_answers import answering

ISO = b"CD001" + bytes(2043)  # a boot image's first bytes are the BMC's business only


@pytest.fixture(scope="module")
def bmc(sushy_emulator_factory):
    """An emulator of its own, so no other test sees what is in its CD."""
    return sushy_emulator_factory(systems=1)


@pytest.fixture
def system(bmc):
    return bmc.systems[0].uuid


def cd_of(bmc) -> dict:
    """The emulator's virtual CD as a BMC shows it (the VirtualMedia member of its system
    whose MediaTypes hold CD), read straight from it."""
    system = bmc.get_system(bmc.systems[0].uuid)
    media = requests.get(f"{bmc.url}{system['VirtualMedia']['@odata.id']}", timeout=5).json()
    for member in media["Members"]:
        cd = requests.get(f"{bmc.url}{member['@odata.id']}", timeout=5).json()
        if "CD" in cd["MediaTypes"]:
            return cd
    raise AssertionError("the emulator shows no virtual CD")


def test_an_image_is_inserted_booted_once_and_ejected(bmc, system, redfish_settings):
    with answering() as files:
        url = files.answer("/deploys/17/boot.iso", body=ISO)
        with get_driver(redfish_settings(bmc, system)) as driver:
            driver.media.insert(url)
            cd = cd_of(bmc)
            assert (cd["Inserted"], cd["Image"]) == (True, url)
            assert ("GET", "/deploys/17/boot.iso") in files.asked  # the BMC fetched it
            boot = bmc.get_system(system)["Boot"]
            assert boot["BootSourceOverrideTarget"] == "Cd"
            assert driver.media.inserted() == url

            driver.media.eject()
            assert cd_of(bmc)["Inserted"] is False
            assert driver.media.inserted() == ""
            driver.media.eject()  # nothing in: nothing to do


def test_an_image_the_bmc_cannot_fetch_is_refused_with_its_answer(bmc, system, redfish_settings):
    with answering() as files:
        url = files.answer("/deploys/18/boot.iso", status=404, body=b"no such image")
        driver = get_driver(redfish_settings(bmc, system))
        with driver, pytest.raises(BMCError) as refused:
            driver.media.insert(url)
    assert "inserting the boot image as its virtual CD" in str(refused.value)
    assert "got error 404 from the server" in str(refused.value)  # the BMC's own words
    assert cd_of(bmc)["Inserted"] is False


def test_an_ipmi_bmc_offers_no_virtual_media():
    settings = BMCSettings(
        protocol="ipmi", address="127.0.0.1", username="admin", password="pw", timeout=1
    )
    with get_driver(settings) as driver, pytest.raises(BMCUnsupportedError) as refused:
        driver.media.insert("http://127.0.0.1/boot.iso")
    assert "offers no virtual media over ipmi" in str(refused.value)
