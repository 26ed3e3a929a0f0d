"""How a firmware image reaches a BMC: pulled through SimpleUpdate where the BMC offers it
over the image's protocol, else pushed to its MultipartHttpPushUri. The route is read
from real vendors' UpdateService documents (tests/corpus/redfish; the expected route is
written from each document: its Actions and MultipartHttpPushUri), and a push is made
against the updating test BMC in its GB200 shape (push only)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from provisioning.drivers import BMCFatalError, BMCUnsupportedError, get_driver
from provisioning.drivers.redfish.updates import PULL, PUSH, route
from tests.peers.updating_bmc import INVENTORY, PUSH_URI

CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "redfish"
IMAGE = "http://127.0.0.1:8000/artifacts/firmware/gpu-tray.bin"


def service(tree: str) -> dict:
    return json.loads((CORPUS / tree / "redfish/v1/UpdateService/index.json").read_text())


@pytest.mark.parametrize(
    ("tree", "scheme", "expected"),
    [
        # No SimpleUpdate at all; HttpPushUri and MultipartHttpPushUri.
        (
            "nvidia-gb200-nvl-compute-tray",
            "HTTP",
            (PUSH, "/redfish/v1/UpdateService/update-multipart"),
        ),
        ("nvidia-gh200", "HTTPS", (PUSH, "/redfish/v1/UpdateService/update-multipart")),
        ("openbmc-stock", "HTTP", (PUSH, "/redfish/v1/UpdateService/update")),
        # SimpleUpdate allowing HTTP, HTTPS among others.
        (
            "dell-poweredge-r750",
            "HTTP",
            (PULL, "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate"),
        ),
        (
            "lenovo-thinksystem-sr670-v2",
            "HTTPS",
            (PULL, "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate"),
        ),
        # Lenovo's SimpleUpdate allows TFTP, SFTP, HTTPS, HTTP: not FTP; it has /mfwupdate.
        ("lenovo-thinksystem-sr670-v2", "FTP", (PUSH, "/mfwupdate")),
        # SimpleUpdate whose protocols are in an ActionInfo the tree does not hold.
        ("nvidia-dgx-h100", "HTTP", (PULL, "/redfish/v1/UpdateService/Actions/SimpleUpdate")),
        (
            "supermicro-sys-821ge-tnhr",
            "HTTP",
            (PULL, "/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate"),
        ),
    ],
)
def test_the_route_each_real_bmc_offers(tree, scheme, expected):
    assert route(service(tree), scheme) == expected


def test_an_action_info_that_allows_only_scp_sends_an_http_image_by_push():
    doc = service("nvidia-dgx-h100")
    assert route(doc, "HTTP", protocols=["SCP"]) == (PUSH, "/redfish/v1/UpdateService/upload")


def test_a_service_with_neither_has_no_route():
    assert route({"Actions": {}}, "HTTP") is None


@pytest.fixture
def tray(updating_bmc, tmp_path):
    """The test BMC in its GB200 shape, and a package it accepts (known by its bytes)."""
    updating_bmc.push = True
    image = tmp_path / "0f1e2d"  # kept by its sha256, as the artifact store keeps it
    image.write_bytes(b"\x00GB200 tray bundle" * 4096)
    updating_bmc.images[hashlib.sha256(image.read_bytes()).hexdigest()] = ("BMC", "1.52.00")
    return updating_bmc, image


def test_a_push_sends_the_file_and_its_targets_and_is_followed_to_its_end(tray, redfish_settings):
    bmc, image = tray
    with get_driver(redfish_settings(bmc, "sys1")) as driver:
        task = driver.updates.start(IMAGE, [f"{INVENTORY}/BMC"], image)
        for _ in range(10):
            if driver.updates.progress(task).ended:
                break
        assert {c.id: c.version for c in driver.firmware.firmware()}["BMC"] == "1.52.00"
    [(_, parts)] = [(p, b) for p, b in bmc.sent("POST") if p == PUSH_URI]
    assert parts["UpdateFile"] == image.read_bytes()
    assert bmc.file_names == ["gpu-tray.bin"]  # the package's name, not the file's on disk
    assert json.loads(parts["UpdateParameters"]) == {"Targets": [f"{INVENTORY}/BMC"]}
    assert task.monitor == "/redfish/v1/TaskService/TaskMonitors/1"


def test_a_push_the_bmc_refuses_fails_with_its_message(tray, redfish_settings, tmp_path):
    bmc, _ = tray
    other = tmp_path / "not-a-package.bin"
    other.write_bytes(b"a text file renamed .bin")
    with get_driver(redfish_settings(bmc, "sys1")) as driver, pytest.raises(BMCFatalError) as e:
        driver.updates.start(IMAGE, [f"{INVENTORY}/BMC"], other)
    assert "The image is not a valid firmware package." in str(e.value)


def test_a_push_only_bmc_with_no_local_copy_says_so(tray, redfish_settings):
    bmc, _ = tray
    with (
        get_driver(redfish_settings(bmc, "sys1")) as driver,
        pytest.raises(BMCUnsupportedError) as e,
    ):
        driver.updates.start(IMAGE, [f"{INVENTORY}/BMC"])
    assert "takes firmware only pushed to it (/redfish/v1/UpdateService/update-multipart)" in str(
        e.value
    )


def test_a_push_only_bmc_whose_image_this_worker_lacks_says_where_it_looked(
    tray, redfish_settings, tmp_path
):
    bmc, _ = tray
    missing = tmp_path / "elsewhere" / "0f1e2d"
    with (
        get_driver(redfish_settings(bmc, "sys1")) as driver,
        pytest.raises(BMCUnsupportedError) as e,
    ):
        driver.updates.start(IMAGE, [f"{INVENTORY}/BMC"], missing)
    assert f"this worker has no copy of the image (none at {missing})" in str(e.value)
    assert bmc.tasks == {}
