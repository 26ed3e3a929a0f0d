"""Inspection of every real Redfish tree in tests/corpus/redfish, served by sushy-static.

Each tree's expected.json was written by reading its JSON (tests/corpus/redfish/README.md);
this test serves the tree with sushy-static, inspects each system once through the product's
Redfish driver, and compares. The comparison reads expected.json with the README's words
only: placeholders are unknown, strings are compared stripped, a host system beside a GPU
baseboard (`separate-gpu-system`) is one node with the baseboard's GPUs, and per-node
firmware of a multi-node BMC is named `NodeN.` (`multi-node-firmware`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from provisioning.drivers import BMCUnsupportedError
from provisioning.drivers.redfish import build_driver
from provisioning.drivers.settings import BMCSettings
from provisioning.inspection import gpu_mismatch
from tests.peers.redfish import run_sushy_static

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "redfish"
TREES = sorted(p.name for p in CORPUS.iterdir() if p.is_dir() and p.name != "LICENSES")
# The README's placeholder list, as a reader of the JSON would treat them: unknown.
PLACEHOLDER = {
    "",
    "n/a",
    "na",
    "not available",
    "not present",
    "to be filled by o.e.m.",
    "undefined",
}
BASEBOARD = re.compile(r"^HGX_Baseboard", re.IGNORECASE)
NODE_FIRMWARE = re.compile(r"^(Node\d+)\.")

_inspected: dict[str, dict[str, Any]] = {}  # tree -> system id -> what the product read


def expected(tree: str) -> dict[str, Any]:
    return json.loads((CORPUS / tree / "expected.json").read_text(encoding="utf-8"))


def inspected(tree: str) -> dict[str, Any]:
    """Every system of the tree inspected once per test session (one sushy-static each)."""
    if tree not in _inspected:
        read: dict[str, Any] = {}
        with run_sushy_static(CORPUS / tree / "redfish" / "v1") as bmc:
            for system in expected(tree)["systems"] or [{"id": None}]:
                settings = BMCSettings(
                    protocol="redfish",
                    address=bmc.url,
                    username="corpus",
                    password="corpus",
                    system_id=system["id"],
                )
                driver = build_driver(settings)
                try:
                    facts = driver.inspect.inspect()
                    firmware = driver.firmware.firmware()
                    read[system["id"]] = {"facts": facts, "firmware": firmware}
                except BMCUnsupportedError as exc:
                    read[system["id"]] = {"error": exc}
                finally:
                    driver.close()
        _inspected[tree] = read
    return _inspected[tree]


def known(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    value = value.strip()
    if value.lower() in PLACEHOLDER or set(value) <= {"0"}:
        return None
    return value


def node_gpus(tree: dict[str, Any], system: dict[str, Any]) -> list[dict[str, Any]]:
    """The GPUs of the node enrolled by this system, as the README says to read the tree."""
    if "separate-gpu-system" in tree["quirks"] and not BASEBOARD.match(system["id"]):
        boards = [s for s in tree["systems"] if BASEBOARD.match(s["id"])]
        return [g for board in boards for g in board["gpus"]["items"]]
    return system["gpus"]["items"]


def node_of(component: dict[str, Any]) -> str | None:
    found = NODE_FIRMWARE.match(component["id"])
    return found.group(1) if found else None


SYSTEMS = [(t, s["id"]) for t in TREES for s in expected(t)["systems"]]
WITH_INVENTORY = [
    (t, s)
    for t, s in SYSTEMS
    if "FirmwareInventory" in (expected(t)["firmware"]["inventory"] or "")
]


def _system(tree: str, system_id: str) -> dict[str, Any]:
    return next(s for s in expected(tree)["systems"] if s["id"] == system_id)


@pytest.mark.parametrize(("tree", "system_id"), SYSTEMS)
def test_inspection_finds_the_gpus_the_json_shows(tree, system_id):
    want = node_gpus(expected(tree), _system(tree, system_id))
    got = inspected(tree)[system_id]["facts"].gpus
    as_read = sorted(
        (str(known(g["model"])), str(known(g["serial"])), str(known(g["firmware_version"])))
        for g in want
    )
    as_found = sorted((str(g.model), str(g.serial), str(g.firmware_version)) for g in got)
    assert len(got) == len(want), [g.resource for g in got]
    assert as_found == as_read


@pytest.mark.parametrize(("tree", "system_id"), SYSTEMS)
def test_the_enrolled_gpu_check_passes_on_the_real_server(tree, system_id):
    want = node_gpus(expected(tree), _system(tree, system_id))
    facts = inspected(tree)[system_id]["facts"]
    model = next((m for g in want if (m := known(g["model"]))), "")
    assert gpu_mismatch(len(want), model, facts.to_dict()) is None


@pytest.mark.parametrize(("tree", "system_id"), WITH_INVENTORY)
def test_firmware_is_the_installed_images_of_this_node(tree, system_id):
    tree_doc = expected(tree)
    firmware = tree_doc["firmware"]
    got = inspected(tree)[system_id]["firmware"]

    def ours(items: list[dict[str, Any]]) -> set[str]:
        return {c["id"] for c in items if node_of(c) in (None, system_id)}

    if not firmware["installed"]:  # an empty inventory: the Manager's and system's versions
        system = _system(tree, system_id)
        fallback = {"BMC": tree_doc["bmc"]["firmware"], "BIOS": system["bios_version"]}
        assert {c.id: c.version for c in got}.items() <= fallback.items()
        return
    by_state: dict[str, set[str]] = {}
    for component in got:
        by_state.setdefault(component.state, set()).add(component.id)
    assert by_state.get("installed", set()) == ours(firmware["installed"])
    assert ours(firmware["not_installed"]) <= by_state.get("not_installed", set())
    assert ours(firmware["unreadable"]) <= by_state.get("unreadable", set())
    wrong = by_state.get("installed", set()) & (
        ours(firmware["not_installed"]) | ours(firmware["unreadable"])
    )
    assert not wrong


@pytest.mark.parametrize("tree", [t for t in TREES if not expected(t)["systems"]])
def test_a_bmc_without_systems_says_so(tree):
    error = inspected(tree)[None]["error"]
    assert "does not list any Systems" in str(error)


def test_drift_names_a_dell_component_the_same_across_versions():
    """iDRAC's Ids carry the version (`Current-159-1.8.2__BIOS.Setup.1-1`): a baseline
    naming them would break at the next update. Drift reads `firmware.BIOS.Setup.1-1`, from
    the running image only (the R750's `Previous-159-1.2.4__BIOS…` rollback is not it)."""
    from inventory.facts import firmware_rows

    firmware = inspected("dell-poweredge-r750")["System.Embedded.1"]["firmware"]
    rows = {key: value for key, _, value in firmware_rows([c.to_dict() for c in firmware])}
    assert rows["firmware.BIOS.Setup.1-1"] == "1.8.2"
    assert rows["firmware.iDRAC.Embedded.1-1"] == "6.00.30.00"
    assert not [k for k in rows if k.startswith(("firmware.Current-", "firmware.Previous-"))]


# The systems whose ComputerSystem has SerialConsole.SSH with "ServiceEnabled": true, read
# from their index.json (the GB200 switch tray's is false; every other system has none).
SSH_CONSOLES = {
    ("liteon-powershelf-pf-1333-7r", "system"),
    ("nvidia-bluefield3-bmc", "Bluefield"),
    ("nvidia-gb200-nvl-compute-tray", "System_0"),
    ("nvidia-gh200", "System_0"),
    ("openbmc-stock", "system"),
    ("supermicro-sys-510t-mr", "1"),
    ("supermicro-sys-821ge-tnhr", "1"),
}


@pytest.mark.parametrize(("tree", "system_id"), SYSTEMS)
def test_inspection_knows_whether_the_system_offers_its_console_over_ssh(tree, system_id):
    facts = inspected(tree)[system_id]["facts"]
    wanted = "ssh" if (tree, system_id) in SSH_CONSOLES else None
    assert facts.serial_console == wanted
