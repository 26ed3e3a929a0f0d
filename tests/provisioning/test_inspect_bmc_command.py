"""``manage.py inspect_bmc`` against real peers: what a technician sees before enrolling.

No test here has database access (pytest-django refuses any query without the ``db``
fixture), which proves the command enrols nothing and reads no row.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import contextmanager
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from tests.peers.util import free_port


@pytest.fixture(scope="module")
def own_ipmi(ipmi_sim_factory):
    """A BMC of this module's own. pyghmi sessions are kept per process and per BMC, and
    the shared ``ipmi_sim`` session belongs to the driver tests: a session of ours left
    idle on it for minutes (pytest-django runs database tests first) made theirs hang."""
    bmc = ipmi_sim_factory(password="own-Test-pw", name="insp-cmd")
    bmc.reset()
    return bmc


def _run(*args: str, password: str = "pw") -> dict:
    out = StringIO()
    with mock_env(BMC_PASSWORD=password):
        call_command("inspect_bmc", *args, stdout=out)
    return json.loads(out.getvalue())


@contextmanager
def mock_env(**values: str):
    """The command's environment for one call (not a mock of anything it talks to)."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def test_redfish_tower_prints_hardware_firmware_power_and_unavailable(sushy_static_tower):
    report = _run(
        "--protocol=redfish",
        f"--address={sushy_static_tower.address}",
        "--username=admin",
        f"--system-id={sushy_static_tower.system_id}",
    )
    assert set(report) == {"hardware", "firmware", "power", "unavailable"}
    hw = report["hardware"]
    assert [g["model"] for g in hw["gpus"]] == ["Nvidia(R) TU102"] * 2
    assert (hw["cpu_count"], len(hw["drives"]), hw["serial"]) == (8, 10, "437XR1238R2")
    assert [c["id"] for c in report["firmware"]] == ["BMC", "BIOS"]
    assert report["power"] == "on"
    assert report["unavailable"] == {}


def test_expected_gpus_are_checked_when_given(sushy_static):
    report = _run(
        "--protocol=redfish",
        f"--address={sushy_static.address}",
        "--username=admin",
        "--gpu-count=8",
        "--gpu-model=H100-SXM",
    )
    assert report["mismatch"] == "expected 8 × H100-SXM, BMC reports 0 GPUs"


@pytest.mark.slow  # 5 s on its own (docs/testing.md: Markers)
def test_ipmi_prints_identity_and_what_ipmi_cannot_list(own_ipmi):
    report = _run(
        "--protocol=ipmi",
        f"--address={own_ipmi.host}",
        f"--port={own_ipmi.port}",
        f"--username={own_ipmi.username}",
        password=own_ipmi.password,
    )
    assert report["hardware"]["serial"] == own_ipmi.fru.serial
    assert report["hardware"]["gpus"] == []
    assert "IPMI has no standard command that lists GPUs" in report["unavailable"]["gpus"]
    assert [c["id"] for c in report["firmware"]] == ["BMC"]
    assert report["power"] == "off"


def test_a_bmc_with_several_systems_asks_for_one(sushy_static_bladed):
    with pytest.raises(CommandError, match="manages 4 systems .* set system_id"):
        _run(
            "--protocol=redfish",
            f"--address={sushy_static_bladed.address}",
            "--username=admin",
        )


def test_unreachable_bmc_exits_1_with_the_reason_on_stderr():
    # A real process, as a technician runs it: exit status and stderr are the interface.
    port = free_port()
    done = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "inspect_bmc",
            "--protocol=redfish",
            f"--address=http://127.0.0.1:{port}",
            "--username=admin",
            "--timeout=2",
        ],  # fmt: skip
        env={**os.environ, "BMC_PASSWORD": "Secr3t-pw"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert f"Could not reach the BMC at 127.0.0.1:{port} while connecting: no Redfish answer" in (
        done.stderr
    )
    assert "Secr3t-pw" not in done.stderr


@pytest.mark.slow  # 4 s on its own (docs/testing.md: Markers)
def test_wrong_ipmi_password_is_named(own_ipmi):
    with pytest.raises(CommandError) as raised:
        _run(
            "--protocol=ipmi",
            f"--address={own_ipmi.host}",
            f"--port={own_ipmi.port}",
            f"--username={own_ipmi.username}",
            password="not-the-password",
        )
    assert "rejected the credentials of user 'admin'" in str(raised.value)
    assert "not-the-password" not in str(raised.value)


def test_bad_settings_are_refused_before_any_network_io():
    with pytest.raises(CommandError, match="Invalid BMC settings.*timeout"):
        _run(
            "--protocol=redfish",
            "--address=http://127.0.0.1:9",
            "--username=a",
            "--timeout=900",
        )


BARE = ("--protocol=ipmi", "--address=h", "--username=u")


def test_the_password_is_never_a_command_line_argument():
    """Arguments are visible to every user of the machine (ps) and kept in shell history."""
    with pytest.raises(CommandError, match="unrecognized arguments: --password"):
        call_command(
            "inspect_bmc", "--protocol=ipmi", "--address=h", "--username=u", "--password=x"
        )
    done = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "inspect_bmc",
            "--protocol=ipmi",
            "--address=h",
            "--username=u",
        ],
        env={k: v for k, v in os.environ.items() if k != "BMC_PASSWORD"},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "Give the BMC password in BMC_PASSWORD" in done.stderr


def test_explain_says_where_each_gpu_candidate_was_found_and_why_it_counts():
    """A Dell R750 with one H100 (tests/corpus/redfish): the GPU is a Processor and a PCIe
    device under both Systems and Chassis, the onboard Matrox G200 twice; one GPU counts."""
    from pathlib import Path

    from tests.peers.redfish import run_sushy_static

    tree = Path(__file__).resolve().parents[1] / "corpus/redfish/dell-poweredge-r750/redfish/v1"
    with run_sushy_static(tree) as bmc:
        report = _run(
            "--protocol=redfish",
            f"--address={bmc.url}",
            "--username=root",
            "--system-id=System.Embedded.1",
            "--gpu-count=1",
            "--gpu-model=H100",
            "--explain",
        )
    assert report["mismatch"] is None
    assert report["explain"]["profiles"] == ["Dell iDRAC"]
    by_path = {c["resource"]: c for c in report["explain"]["gpu_candidates"]}
    gpu = by_path["/redfish/v1/Systems/System.Embedded.1/Processors/Video.Slot.2-1"]
    assert gpu["verdict"] == "GPU"
    for view in ("Systems", "Chassis"):
        same = by_path[f"/redfish/v1/{view}/System.Embedded.1/PCIeDevices/23-0"]
        assert same["verdict"] == "same GPU"
        vga = by_path[f"/redfish/v1/{view}/System.Embedded.1/PCIeDevices/3-0"]
        assert vga["verdict"] == "not a GPU"
        assert "Matrox" in vga["why"]
    assert [g["model"] for g in report["hardware"]["gpus"]] == ["NVIDIA H100 PCIe"]
