"""BIOS attributes observed as facts, their registry kept per model, and baselines that
expect BIOS attributes checked against it, through a real sushy-emulator.

Expected values come from sushy-tools' source: its libvirt driver's default attributes
(ProcTurboMode Enabled, EmbeddedSata Raid, SysPassword "") and its registry template
(EmbeddedSata one of Ata/Ahci/Raid/Off; SysPassword of type Password; NumCores
read-only).
"""

from __future__ import annotations

import pytest

from drift import baselines
from drift.models import DriftCell
from drift.services import recompute
from inventory.models import Fact
from provisioning import bios, firmware
from provisioning.models import BiosRegistry
from tests.factories import NodeFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def bmc(sushy_emulator_factory):
    return sushy_emulator_factory(systems=1, bios=True)


@pytest.fixture
def node(bmc):
    return NodeFactory(
        model="PowerEdge XE9680",
        state="in_service",
        bmc__address=bmc.address,
        bmc__system_id=bmc.systems[0].uuid,
        bmc__verify_tls=False,
    )


def facts(node) -> dict[str, str]:
    rows = Fact.objects.filter(node=node, key__startswith="bios.")
    return dict(rows.values_list("key", "value"))


def test_the_firmware_reread_records_bios_attributes_and_the_registry_once(node):
    firmware.refresh_firmware(node)
    seen = facts(node)
    assert seen["bios.ProcTurboMode"] == "Enabled" and seen["bios.EmbeddedSata"] == "Raid"
    assert "bios.SysPassword" not in seen  # a Password attribute is never stored
    [registry] = BiosRegistry.objects.all()
    assert (registry.node_model, registry.name) == (
        "PowerEdge XE9680",
        "BiosAttributeRegistryP89.v1_0_0",
    )
    assert registry.attributes["EmbeddedSata"]["values"] == ["Ata", "Ahci", "Raid", "Off"]
    firmware.refresh_firmware(node)
    assert BiosRegistry.objects.count() == 1


def test_a_baseline_expecting_a_bios_attribute_shows_its_drift(node):
    firmware.refresh_firmware(node)
    baselines.save(
        {
            "name": "xe9680",
            "node_model": "PowerEdge XE9680",
            "components": {"bios.ProcTurboMode": "Disabled", "bios.EmbeddedSata": "Raid"},
        },
        "user:admin",
    )
    recompute([node.pk])
    cells = dict(DriftCell.objects.filter(node=node).values_list("component", "status"))
    assert cells == {"bios.ProcTurboMode": "drift", "bios.EmbeddedSata": "ok"}


def test_a_bios_attribute_the_registry_refuses_is_refused_naming_it(node, api):
    firmware.refresh_firmware(node)
    resp = api("admin").post(
        "/api/v1/baselines/",
        {
            "name": "xe9680",
            "node_model": "PowerEdge XE9680",
            "components": {
                "bios.EmbeddedSata": "Fast",
                "bios.SriovEnable": "Enabled",
                "bios.NumCores": "12",
            },
        },
        format="json",
    )
    assert resp.status_code == 400, resp.content
    errors = resp.json()
    assert "'Fast' is not one of EmbeddedSata's values: Ata, Ahci, Raid, Off" in str(
        errors["components.bios.EmbeddedSata"]
    )
    assert "no attribute 'SriovEnable'" in str(errors["components.bios.SriovEnable"])
    assert "read-only" in str(errors["components.bios.NumCores"])
    assert not baselines.Baseline.objects.exists()


def test_a_bios_attribute_for_a_model_never_inspected_says_what_to_do(node):
    firmware.refresh_firmware(node)
    with pytest.raises(baselines.BaselineError) as e:
        baselines.save(
            {"name": "r750", "node_model": "PowerEdge R750", "components": {"bios.X": "1"}},
            "user:admin",
        )
    assert e.value.errors == {
        "components.bios.X": "no BIOS attribute registry read yet for model 'PowerEdge R750'; "
        "inspect a node of it first"
    }


def test_checking_many_bios_values_reads_the_registry_once(node, django_assert_num_queries):
    """A baseline of many attributes, each with several accepted values, is checked with
    one read of the registries (it was one read per value)."""
    firmware.refresh_firmware(node)
    wanted = {"EmbeddedSata": ["Ata", "Ahci", "Fast"], "ProcTurboMode": ["Enabled", "Disabled"]}
    with django_assert_num_queries(1):
        errors = bios.check("PowerEdge XE9680", wanted)
    assert list(errors) == ["bios.EmbeddedSata"] and "'Fast'" in errors["bios.EmbeddedSata"]
