"""Plan and apply against the database: from nothing to a fleet, a second apply that
changes nothing, one field changed and shown old -> new, a stale plan refused, an apply
that fails part-way leaving nothing written. Expected values are the files' own."""

from __future__ import annotations

import pytest
from auditlog.models import LogEntry

from fleetfile import apply as applying
from fleetfile import plan as planning
from fleetfile.loading import FleetFileError
from fleetfile.models import FleetApply
from inventory.models import BMC, NetworkInterface, Node, Rack, Site

from .fleet import NODES, SECRETS, sources

pytestmark = pytest.mark.django_db


def apply(files=None, **kwargs):
    return applying.apply(files or sources(), SECRETS, actor="user:alice", **kwargs)


def test_a_fleet_from_nothing_is_planned_then_applied_as_the_files_say():
    plan = planning.make(sources(), SECRETS)
    assert plan.summary() == {
        "create": 6, "update": 0, "delete": 0, "decommission": 0, "unchanged": 0
    }  # fmt: skip
    assert [c.label for c in plan.changes] == [
        "site dc1",
        "rack dc1/r01",
        "rack dc1/r02",
        "node SN-0001 (gx-001)",
        "node SN-0002 (gx-002)",
        "node SN-0003 (head-01)",
    ]
    assert Node.objects.count() == 0  # a plan writes nothing

    applied, record = apply(revision=plan.revision, commit="9f2c1ab", path="fleet/")
    assert applied.revision == plan.revision
    site = Site.objects.get(slug="dc1")
    assert (site.name, site.attestation, site.bmc_networks) == (
        "Hall One", "allow_unattested", ["10.20.0.0/16"]
    )  # fmt: skip
    r01 = Rack.objects.get(site=site, name="r01")
    assert (r01.row, str(r01.power_budget_kw), r01.fabric, r01.delivered.isoformat()) == (
        "A", "120.00", "ib-400g", "2026-09-01T00:00:00+00:00"
    )  # fmt: skip
    assert Rack.objects.get(name="r02").u_height == 48
    gx1 = Node.objects.get(serial="SN-0001")
    assert (gx1.hostname, gx1.rack, gx1.rack_unit, gx1.u_height, gx1.gpu_count) == (
        "gx-001", r01, 1, 4, 8
    )  # fmt: skip
    assert sorted(gx1.labels.values_list("name", flat=True)) == ["ib", "pool-a"]
    assert (gx1.bmc.address, gx1.bmc.password) == ("https://10.20.0.11", "from-the-vault-1")
    nics = {n.mac: (n.name, n.boot, n.ip, n.fabric_rail) for n in gx1.interfaces.all()}
    assert nics == {
        "0c:42:a1:00:00:01": ("eno1", True, "10.30.0.11", None),
        "0c:42:a1:00:01:01": ("ib0", False, None, 0),
    }
    head = Node.objects.get(serial="SN-0003")
    assert (head.rack, head.role) == (None, "head")
    assert not BMC.objects.filter(node=head).exists()
    # The apply is on record, and each object in the trail under the caller's name.
    assert (record.actor, record.commit, record.path, record.revision) == (
        "user:alice", "9f2c1ab", "fleet/", plan.revision
    )  # fmt: skip
    assert record.summary["create"] == 6
    created = LogEntry.objects.filter(action=LogEntry.Action.CREATE)
    assert {e.additional_data["actor"] for e in created} == {"user:alice"}
    assert created.filter(object_repr="gx-001").exists()


def test_applying_the_same_files_again_changes_nothing():
    apply()
    plan, record = apply()
    assert record is None
    assert plan.changes == [] and plan.unchanged == 6
    assert FleetApply.objects.count() == 1


def test_a_changed_field_plans_as_old_to_new_and_the_password_is_never_shown():
    apply()
    nodes = NODES.replace("hostname: gx-002", "hostname: gx-102").replace("unit: 5", "unit: 9")
    secrets = type(SECRETS)({"BMC_PASSWORD": "rotated-2"})
    plan = planning.make(sources(nodes=nodes), secrets)
    changed = {c.label: [(f.name, f.old, f.new) for f in c.fields] for c in plan.changes}
    assert changed == {
        "node SN-0001 (gx-001)": [("bmc.password", "(stored)", "(changed)")],
        "node SN-0002 (gx-102)": [
            ("hostname", "gx-002", "gx-102"),
            ("unit", 5, 9),
            ("bmc.password", "(stored)", "(changed)"),
        ],
    }
    text = plan.text()
    assert '    hostname: "gx-002" -> "gx-102"' in text
    assert "rotated-2" not in text and "from-the-vault-1" not in text
    applying.apply(sources(nodes=nodes), secrets, actor="user:bob", revision=plan.revision)
    gx2 = Node.objects.get(serial="SN-0002")
    assert (gx2.hostname, gx2.rack_unit, gx2.bmc.password) == ("gx-102", 9, "rotated-2")


def test_a_plan_made_before_the_fleet_changed_is_refused():
    apply()
    nodes = NODES.replace("gpu_count: 8", "gpu_count: 4")
    plan = planning.make(sources(nodes=nodes), SECRETS)
    Node.objects.filter(serial="SN-0001").update(model="changed by hand")
    with pytest.raises(applying.StalePlan) as raised:
        apply(sources(nodes=nodes), revision=plan.revision)
    assert raised.value.payload()["revision"] == plan.revision
    assert Node.objects.get(serial="SN-0001").gpu_count == 8


def test_an_apply_that_fails_part_way_writes_nothing():
    # Both nodes ask for U1 of r01: the second is found only when the first is written.
    nodes = NODES.replace("unit: 5", "unit: 3")
    with pytest.raises(FleetFileError) as raised:
        apply(sources(nodes=nodes))
    assert [str(p) for p in raised.value.problems] == [
        "fleet/nodes.yaml:24 nodes[1].unit: U3-U6 overlaps gx-001 at U1-U4 in rack r01."
    ]
    assert not Site.objects.exists() and not Node.objects.exists()
    assert not NetworkInterface.objects.exists() and not FleetApply.objects.exists()


def test_what_the_files_get_wrong_against_the_fleet_is_named_where_it_is():
    nodes = NODES.replace("rack: r01\n    unit: 5", "rack: r09\n    unit: 5").replace(
        "hostname: head-01", "hostname: Head_01"
    )
    with pytest.raises(FleetFileError) as raised:
        planning.make(sources(nodes=nodes), SECRETS)
    assert [str(p) for p in raised.value.problems] == [
        "fleet/nodes.yaml:23 nodes[1].rack: no rack 'r09' in site 'dc1' in the files or the fleet",
        "fleet/nodes.yaml:30 nodes[2].hostname: Use a short hostname: lower-case letters, digits "
        "and hyphens (no dots, max 63).",
    ]


def test_a_serial_or_mac_given_twice_names_both_places():
    nodes = NODES + (
        "  - serial: SN-0001\n    hostname: gx-009\n"
        "  - serial: SN-0010\n    hostname: gx-010\n"
        "    interfaces: [{mac: '0c-42-A1-00-00-02'}]\n"
    )
    with pytest.raises(FleetFileError) as raised:
        planning.make(sources(nodes=nodes), SECRETS)
    assert [str(p) for p in raised.value.problems] == [
        "fleet/nodes.yaml:32 nodes[3].serial: serial 'SN-0001' is also given at fleet/nodes.yaml:2",
        "fleet/nodes.yaml:36 nodes[4].interfaces[0].mac: MAC 0c:42:a1:00:00:02 is also given "
        "at fleet/nodes.yaml:28",
    ]


def test_a_secret_with_no_value_here_is_named_not_guessed():
    with pytest.raises(FleetFileError) as raised:
        planning.make(sources(), type(SECRETS)({}))
    assert str(raised.value.problems[0]) == (
        "fleet/nodes.yaml:16 nodes[0].bmc.password: env:BMC_PASSWORD: the variable "
        "BMC_PASSWORD is not set (or is empty)"
    )
