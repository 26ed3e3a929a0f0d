"""A Redfish BMC's serial console over the SSH its ComputerSystem names
(provisioning/drivers/redfish/console.py): real vendor trees (tests/corpus/redfish) served
by sushy-static, their `SerialConsole.SSH` as captured but for the port, which names the
test's SSH console (tests/peers/bmc_ssh.py) on a free loopback port."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from provisioning.drivers import BMCAuthError, BMCUnsupportedError, get_driver
from provisioning.drivers.settings import BMCSettings
from tests.consoles.helpers import Screen
from tests.peers.bmc_ssh import BMCConsoleSSH
from tests.peers.util import wait_until

CORPUS = Path(__file__).resolve().parents[2] / "corpus" / "redfish"


def tree_of(vendor: str, system: str, tmp_path: Path, ssh_port: int | None = None) -> Path:
    """The vendor's captured tree; its SerialConsole.SSH.Port set to `ssh_port`, if given."""
    tree = tmp_path / vendor
    shutil.copytree(CORPUS / vendor / "redfish" / "v1", tree)
    if ssh_port is not None:
        doc = tree / "Systems" / system / "index.json"
        data = json.loads(doc.read_text())
        data["SerialConsole"]["SSH"]["Port"] = ssh_port
        doc.write_text(json.dumps(data))
    return tree


def settings(peer, username: str, password: str) -> BMCSettings:
    return BMCSettings(
        protocol="redfish",
        address=peer.url,
        username=username,
        password=password,
        system_id=peer.system_id,
        timeout=5.0,
    )


def test_an_openbmc_console_is_its_own_ssh_port(sushy_static_tree, tmp_path):
    ssh = BMCConsoleSSH(username="root", password="0penBmc", echo=True)
    try:
        peer = sushy_static_tree(tree_of("openbmc-stock", "system", tmp_path, ssh.port), "system")
        screen = Screen()
        with get_driver(settings(peer, "root", "0penBmc")) as driver:
            with driver.console.attach(screen) as link:
                wait_until(ssh.attached, what="the SSH console session")
                ssh.write(b"gpu-017 login: ")
                wait_until(lambda: screen.shows("gpu-017 login: "), what="the prompt")
                link.send(b"root\r")
                wait_until(lambda: screen.shows("you typed: root"), what="the echo")
                assert link.alive
            assert not link.alive and link.why_closed == "closed by Corral"
        assert bytes(ssh.typed) == b"root\r"
    finally:
        ssh.close()


def test_a_supermicro_console_is_entered_from_the_bmc_command_line(sushy_static_tree, tmp_path):
    # SharedWithManagerCLI: the console starts with its ConsoleEntryCommand, as captured.
    ssh = BMCConsoleSSH(username="ADMIN", password="pw", entry="cd system1/sol1; start")
    try:
        tree = tree_of("supermicro-sys-821ge-tnhr", "1", tmp_path, ssh.port)
        peer = sushy_static_tree(tree, "1")
        screen = Screen()
        driver = get_driver(settings(peer, "ADMIN", "pw"))
        with driver, driver.console.attach(screen) as link:
            wait_until(ssh.attached, what="the console entered")
            ssh.write(b"[  OK  ] Reached target Multi-User System.\r\n")
            wait_until(lambda: screen.shows("Reached target"), what="the machine's output")
            assert screen.shows("the system console is starting")
            assert not screen.shows("COMMAND NOT RECOGNIZED")
            link.send(b"\r")
            wait_until(lambda: ssh.typed == b"\r", what="a key after the entry")
    finally:
        ssh.close()


def test_wrong_credentials_are_named(sushy_static_tree, tmp_path):
    ssh = BMCConsoleSSH(username="root", password="right")
    try:
        peer = sushy_static_tree(tree_of("openbmc-stock", "system", tmp_path, ssh.port), "system")
        driver = get_driver(settings(peer, "root", "wrong"))
        with driver, pytest.raises(BMCAuthError) as refused:
            driver.console.attach(Screen())
        assert "refused the credentials of user 'root' for its SSH console" in str(refused.value)
        assert "wrong" not in str(refused.value)
    finally:
        ssh.close()


def test_a_bmc_whose_ssh_console_is_off_or_absent_says_so(
    sushy_static_tree, sushy_static, tmp_path
):
    # The GB200 switch tray's capture: SerialConsole.SSH with ServiceEnabled false.
    tray = sushy_static_tree(
        tree_of("nvidia-gb200-nvl-switch-tray", "System_0", tmp_path), "System_0"
    )
    with get_driver(settings(tray, "u", "p")) as driver, pytest.raises(BMCUnsupportedError) as off:
        driver.console.attach(Screen())
    assert (
        "offers no serial console over SSH (its ComputerSystem's SerialConsole.SSH is disabled)"
        in str(off.value)
    )
    # The DMTF mockup's system has no SerialConsole at all.
    driver = get_driver(settings(sushy_static, "u", "p"))
    with driver, pytest.raises(BMCUnsupportedError) as absent:
        driver.console.attach(Screen())
    assert "SerialConsole.SSH is not offered" in str(absent.value)
