"""Baselines in the fleet files: planned component by component, applied through drift's
own saves (a revision and a history entry naming the caller), refused where a save would
refuse them, exported and pruned. Expected values are the files' own."""

from __future__ import annotations

import pytest

from drift.models import Baseline, BaselineRevision
from fleetfile import apply as applying
from fleetfile import export
from fleetfile import plan as planning
from fleetfile.loading import FleetFileError, read_texts

from .fleet import SECRETS, objects_in

pytestmark = pytest.mark.django_db

BASELINES = """\
baselines:
  - name: gb200-2026q4
    description: GB200 trays, the Q4 firmware train
    node_model: GB200 NVL72
    gpu_model: B200
    components:
      firmware.BMC: "25.06"
      driver: ["570.124.06", "570.133.20"]
  - name: h100-any
    gpu_model: H100-SXM
    components:
      gpu.vbios: 96.00.89.00.01
"""


def files(text: str = BASELINES, name: str = "fleet/baselines.yaml"):
    return read_texts([(name, text)])


def apply(text: str = BASELINES, **kwargs):
    return applying.apply(files(text), SECRETS, actor="user:alice", **kwargs)


def test_baselines_are_created_as_the_files_say_with_drifts_history_then_left_unchanged():
    plan = planning.make(files(), SECRETS)
    assert [(c.action, c.label) for c in plan.changes] == [
        ("create", "baseline gb200-2026q4"),
        ("create", "baseline h100-any"),
    ]
    assert plan.changes[0].wanted.where == "fleet/baselines.yaml:2"

    apply(revision=plan.revision)
    gb200 = Baseline.objects.get(name="gb200-2026q4")
    assert (gb200.description, gb200.node_model, gb200.gpu_model) == (
        "GB200 trays, the Q4 firmware train",
        "GB200 NVL72",
        "B200",
    )
    assert gb200.components == {
        "firmware.BMC": "25.06",
        "driver": ["570.124.06", "570.133.20"],
    }
    h100 = Baseline.objects.get(name="h100-any")
    assert (h100.node_model, h100.gpu_model) == ("", "H100-SXM")
    assert h100.components == {"gpu.vbios": "96.00.89.00.01"}
    history = BaselineRevision.objects.get(name="gb200-2026q4")
    assert (history.action, history.actor, history.revision) == ("created", "user:alice", 1)

    again = planning.make(files(), SECRETS)
    assert again.summary()["unchanged"] == 2 and again.changes == []


def test_a_component_changed_in_the_file_is_one_line_old_to_new_and_a_new_revision():
    apply()
    changed = BASELINES.replace('firmware.BMC: "25.06"', 'firmware.BMC: "25.09"')
    plan = planning.make(files(changed), SECRETS)
    assert [(c.action, c.label) for c in plan.changes] == [("update", "baseline gb200-2026q4")]
    assert [(f.name, f.old, f.new) for f in plan.changes[0].fields] == [
        ("components.firmware.BMC", "25.06", "25.09")
    ]
    assert '    components.firmware.BMC: "25.06" -> "25.09"' in plan.text()

    apply(changed, revision=plan.revision)
    gb200 = Baseline.objects.get(name="gb200-2026q4")
    assert gb200.components["firmware.BMC"] == "25.09" and gb200.revision == 2
    latest = BaselineRevision.objects.filter(name="gb200-2026q4").latest("id")
    assert (latest.action, latest.actor) == ("updated", "user:alice")
    assert latest.changes["components"][1]["firmware.BMC"] == "25.09"


def test_what_a_save_would_refuse_is_named_where_it_is_and_nothing_is_written():
    bad = """\
baselines:
  - name: lab
    node_model: Lab-1
    components:
      bios.ProcTurboMode: Disabled
  - name: lab-again
    node_model: Lab-1
    components:
      "not a/ component!": "1.0"
  - name: lab
    components:
      driver: "570"
"""
    with pytest.raises(FleetFileError) as raised:
        apply(bad)
    assert [str(p) for p in raised.value.problems] == [
        "fleet/baselines.yaml:5 baselines[0].components.bios.ProcTurboMode: no BIOS attribute "
        "registry read yet for model 'Lab-1'; inspect a node of it first",
        "fleet/baselines.yaml:9 baselines[1].components: 'not a/ component!' is not a "
        "component name",
        "fleet/baselines.yaml:10 baselines[2].name: baseline 'lab' is also given at "
        "fleet/baselines.yaml:2",
    ]
    assert not Baseline.objects.exists()


def test_export_writes_the_baselines_and_a_plan_of_the_export_changes_nothing():
    apply()
    texts = export.texts()
    assert "gb200-2026q4" in texts["baselines.yaml"]
    plan = planning.make(read_texts(sorted(texts.items())), SECRETS)
    assert plan.changes == [] and plan.summary()["unchanged"] == objects_in(texts.values())


def test_prune_removes_baselines_only_when_the_files_list_them():
    apply()
    hall = read_texts([("fleet/sites.yaml", "sites:\n  - slug: dc9\n    name: Hall Nine\n")])
    untouched = planning.make(hall, SECRETS, prune=True)
    assert [c.kind for c in untouched.changes] == ["site"]  # baselines not managed here

    one = BASELINES.split("  - name: h100-any")[0]
    plan = planning.make(files(one), SECRETS, prune=True)
    assert [(c.action, c.label) for c in plan.changes] == [("delete", "baseline h100-any")]
    assert plan.destructive == ["delete baseline h100-any"]
    apply(one, prune=True, allow_destructive=True)
    assert list(Baseline.objects.values_list("name", flat=True)) == ["gb200-2026q4"]
    gone = BaselineRevision.objects.filter(name="h100-any").latest("id")
    assert (gone.action, gone.actor) == ("deleted", "user:alice")
