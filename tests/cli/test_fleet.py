"""`corral fleet` against a real Corral, as a pipeline uses it: plan (exit 2 with changes,
0 without), apply exactly the plan shown, export files that plan as no change; problems
named at their file and line; a plan made stale while the prompt waits is refused; the
BMC password read on the client and never printed; a prune is destructive until allowed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fleetfile.models import FleetApply
from inventory.models import Node
from tests.fleetfile.fleet import NODES, RACKS, SITES, objects_in

from .conftest import Terminal

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "vault-value-7f3e9"


@pytest.fixture
def fleet(tmp_path, monkeypatch):
    folder = tmp_path / "fleet"
    folder.mkdir()
    (folder / "sites.yaml").write_text(SITES)
    (folder / "racks.yaml").write_text(RACKS)
    (folder / "nodes.yaml").write_text(NODES)
    monkeypatch.chdir(tmp_path)  # the files are named fleet/…, as in a checkout
    return folder


def test_problems_plan_apply_plan_stale_export_and_prune(corral, fleet, users):
    from tests.conftest import token_for

    run = lambda *argv, **kw: corral(*argv, BMC_PASSWORD=SECRET, **kw)  # noqa: E731

    # Problems: named at their file and line, nothing written.
    (fleet / "racks.yaml").write_text(RACKS.replace("row: A", "colour: red"))
    bad = run("fleet", "plan", "-f", "fleet")
    assert bad.code == 1
    head, problem = bad.err.splitlines()
    assert head == "The fleet files have 1 problem; nothing was written."
    assert problem.startswith("fleet/racks.yaml:4 racks[0].colour: unknown key")
    (fleet / "racks.yaml").write_text(RACKS)
    (fleet / "nodes.yaml").write_text(NODES.replace("unit: 5", "unit: 3"))
    overlap = run("fleet", "apply", "-f", "fleet", "--yes")
    assert overlap.code == 1
    assert overlap.err.splitlines() == [
        "The fleet files have 1 problem; nothing was written.",
        "fleet/nodes.yaml:24 nodes[1].unit: U3-U6 overlaps gx-001 at U1-U4 in rack r01.",
    ]
    (fleet / "nodes.yaml").write_text(NODES)
    manager = run("fleet", "plan", "-f", "fleet", CORRAL_TOKEN=token_for(users["manager"]))
    assert manager.code == 1
    assert "Your role does not allow this" in manager.err
    assert not Node.objects.exists()

    planned = run("fleet", "plan", "-f", "fleet/")
    assert planned.code == 2, planned.text
    lines = planned.out.splitlines()
    assert "+ node SN-0001 (gx-001)  (fleet/nodes.yaml:2)" in lines
    assert "+ site dc1  (fleet/sites.yaml:2)" in lines
    assert lines[-1].startswith("Plan: 6 to create, 0 to update, 0 to delete, 0 to decommission")

    no_tty = run("fleet", "apply", "-f", "fleet")
    assert no_tty.code == 1
    assert "no terminal to ask on; review the plan and add --yes" in no_tty.err
    said_no = run("fleet", "apply", "-f", "fleet", stdin=Terminal("n\n"))
    assert said_no.code == 1
    assert "Apply? [y/N]" in said_no.err and "Nothing was applied." in said_no.err
    assert not Node.objects.exists()

    done = run("fleet", "apply", "-f", "fleet", "--yes", "--commit", "9f2c1ab", "--path", "fleet/")
    assert done.code == 0, done.text
    assert "Applied: 6 to create, 0 to update" in done.out
    assert Node.objects.get(serial="SN-0001").bmc.password == SECRET  # read here, sent
    record = FleetApply.objects.get()
    assert (record.commit, record.path, record.actor) == ("9f2c1ab", "fleet/", "token:admin-user")
    again = run("fleet", "plan", "-f", "fleet")
    assert again.code == 0, again.text
    assert again.out.startswith("Plan: 0 to create, 0 to update, 0 to delete")

    (fleet / "nodes.yaml").write_text(NODES.replace("gpu_count: 8", "gpu_count: 4"))
    changed = run("fleet", "plan", "-f", "fleet", "--json")
    assert changed.code == 2
    body = json.loads(changed.out)
    assert body["summary"]["update"] == 1
    assert body["changes"][0]["fields"] == [{"name": "gpu_count", "old": 8, "new": 4}]

    unreviewed = run("fleet", "apply", "-f", "fleet", "--yes", "--revision", "0123456789abcdef")
    assert unreviewed.code == 1
    assert f"the plan is now revision {body['revision']}, not 0123456789abcdef" in unreviewed.err

    def someone_else_changes_the_fleet():  # while the prompt waits
        Node.objects.filter(serial="SN-0002").update(model="racked by hand")

    stale = run(
        "fleet", "apply", "-f", "fleet", stdin=Terminal("y\n", someone_else_changes_the_fleet)
    )
    assert stale.code == 1
    assert stale.out.splitlines()[:2] == [
        "~ node SN-0001 (gx-001)  (fleet/nodes.yaml:2)", "    gpu_count: 8 -> 4"
    ]  # fmt: skip
    assert "The fleet or the files changed since plan" in stale.err
    assert "(nothing was applied)" in stale.err
    assert Node.objects.get(serial="SN-0001").gpu_count == 8
    assert FleetApply.objects.count() == 1

    exported = run("fleet", "export", "exported")
    assert exported.code == 0, exported.text
    assert sorted(exported.out.split()) == [
        "exported/baselines.yaml", "exported/gate_profiles.yaml", "exported/health_policy.yaml",
        "exported/images.yaml",
        "exported/nodes.yaml", "exported/racks.yaml", "exported/sites.yaml",
        "exported/webhooks.yaml",
    ]  # fmt: skip
    from_export = run("fleet", "plan", "-f", "exported")
    assert from_export.code == 0, from_export.text
    listed = objects_in(p.read_text() for p in Path("exported").iterdir())
    assert f"0 to delete, 0 to decommission, {listed} unchanged" in from_export.out

    (fleet / "nodes.yaml").write_text(NODES[: NODES.index("  - serial: SN-0003")])
    pruning = run("fleet", "apply", "-f", "fleet", "--prune", "--yes")
    assert pruning.code == 1
    assert "- node SN-0003 (head-01)" in pruning.out.splitlines()
    assert "! destructive: delete node SN-0003 (head-01)" in pruning.out.splitlines()
    assert "review it, add --allow-destructive" in pruning.err
    pruned = run("fleet", "apply", "-f", "fleet", "--prune", "--yes", "--allow-destructive")
    assert pruned.code == 0, pruned.text
    assert "Applied: 0 to create, 0 to update, 1 to delete" in pruned.out
    assert not Node.objects.filter(serial="SN-0003").exists()

    results = [bad, overlap, planned, no_tty, said_no, done, again, changed, unreviewed, stale]
    for result in [*results, exported, from_export, pruning, pruned]:
        assert SECRET not in result.text


def test_the_plan_prints_what_the_apply_starts_and_what_waits(corral, tmp_path, monkeypatch):
    from tests.factories import DraftImageFactory, ImageFactory, NodeFactory

    ImageFactory(name="rocky-gpu", version="9.4")
    DraftImageFactory(name="rocky-gpu", version="9.5")
    for n in (1, 2):
        NodeFactory(serial=f"GX-{n}", hostname=f"gx-{n}")
    (tmp_path / "fleet").mkdir()
    (tmp_path / "fleet" / "nodes.yaml").write_text(
        "nodes:\n"
        "  - {serial: GX-1, hostname: gx-1, image: 'rocky-gpu:9.4'}\n"
        "  - {serial: GX-2, hostname: gx-2, image: 'rocky-gpu:9.5'}\n"
    )
    monkeypatch.chdir(tmp_path)
    planned = corral("fleet", "plan", "-f", "fleet")
    assert planned.code == 2, planned.text
    lines = planned.out.splitlines()
    assert "> starts: reimage campaign to rocky-gpu:9.4: gx-1" in lines
    assert (
        "> waits: 1 node(s) wait for image rocky-gpu:9.5 (a draft) to be published; apply "
        "again once it is: gx-2"
    ) in lines
