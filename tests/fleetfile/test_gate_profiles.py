"""Gate profiles in the fleet files: checked by the gates' own validator at file and line,
saved through the model, the default mark moved, kept by a prune once they judged a node,
exported. The profile is the shipped HGX one (validation/profiles/hgx_h100_h200.json), as
an operator would copy it into Git; the database starts with it as `hgx-h100-h200`, the
default (its data migration)."""

from __future__ import annotations

import json

import pytest
import yaml

from fleetfile import apply as applying
from fleetfile import export
from fleetfile import plan as planning
from fleetfile.loading import FleetFileError, read_texts
from tests.factories import GateRunFactory
from validation.models import GateProfile
from validation.verdicts.profile import DEFAULT_PROFILE

from .fleet import SECRETS

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def shipped(db):
    """The shipped profile as its data migration leaves it (a transactional test's flush
    before this one may have taken it)."""
    GateProfile.objects.update_or_create(
        name="hgx-h100-h200", defaults={"spec": SHIPPED, "is_default": True}
    )


SHIPPED = json.loads(DEFAULT_PROFILE.read_text())


def profiles_file(*entries: dict) -> str:
    return yaml.safe_dump({"gate_profiles": list(entries)}, sort_keys=False)


def files(text: str):
    return read_texts([("fleet/gate_profiles.yaml", text)])


def apply(text: str, **kwargs):
    return applying.apply(files(text), SECRETS, actor="user:alice", **kwargs)


def test_a_profile_is_created_changed_and_made_the_default_taking_the_mark():
    text = profiles_file({"name": "hgx", "spec": SHIPPED, "default": True})
    plan = planning.make(files(text), SECRETS)
    assert [c.label for c in plan.changes] == ["gate profile hgx"]
    apply(text, revision=plan.revision)
    assert dict(GateProfile.objects.values_list("name", "is_default")) == {
        "hgx": True,
        "hgx-h100-h200": False,
    }
    assert planning.make(files(text), SECRETS).changes == []

    longer = json.loads(json.dumps(SHIPPED))
    longer["phases"][0]["checks"][0]["timeout_s"] = 600
    changed = profiles_file({"name": "hgx", "spec": longer, "default": True})
    plan = planning.make(files(changed), SECRETS)
    assert [f.name for f in plan.changes[0].fields] == ["spec"]
    apply(changed)
    assert GateProfile.objects.get(name="hgx").spec["phases"][0]["checks"][0]["timeout_s"] == 600


def test_a_bad_threshold_and_a_second_default_are_named_where_they_are():
    broken = json.loads(json.dumps(SHIPPED))
    broken["phases"][0]["checks"][0]["thresholds"] = {"min_gpus_typo": 8}
    text = profiles_file(
        {"name": "hgx", "spec": broken, "default": True},
        {"name": "lab", "spec": SHIPPED, "default": True},
    )
    with pytest.raises(FleetFileError) as caught:
        planning.make(files(text), SECRETS)
    found = {p.path: str(p) for p in caught.value.problems}
    assert "min_gpus_typo" in found["gate_profiles[0].spec"]
    first, second = (i for i, line in enumerate(text.splitlines(), 1) if "default: true" in line)
    assert found["gate_profiles[1].default"] == (
        f"fleet/gate_profiles.yaml:{second} gate_profiles[1].default: default: true is also "
        f"given at fleet/gate_profiles.yaml:{first}"
    )
    assert not GateProfile.objects.filter(name__in=["hgx", "lab"]).exists()


def test_a_prune_deletes_an_unlisted_profile_and_keeps_one_that_judged_a_node():
    GateProfile.objects.create(name="scratch", spec=SHIPPED)
    text = profiles_file({"name": "hgx", "spec": SHIPPED, "default": True})
    plan = planning.make(files(text), SECRETS, prune=True)
    assert sorted((c.label, c.action) for c in plan.changes) == [
        ("gate profile hgx", "create"),
        ("gate profile hgx-h100-h200", "delete"),
        ("gate profile scratch", "delete"),
    ]
    apply(text, prune=True, allow_destructive=True)
    assert list(GateProfile.objects.values_list("name", flat=True)) == ["hgx"]

    GateRunFactory(profile=GateProfile.objects.create(name="used", spec=SHIPPED))
    plan = planning.make(files(text), SECRETS, prune=True)
    assert "gate profile used judged nodes: its runs are evidence" in plan.kept
    assert not [c for c in plan.changes if c.kind == "gate_profile"]


def test_export_writes_the_profiles_and_a_plan_of_it_changes_nothing():
    GateProfile.objects.create(name="lab", spec={**SHIPPED, "title": "Lab"})
    texts = export.texts()
    listed = yaml.safe_load(texts["gate_profiles.yaml"])["gate_profiles"]
    assert [(p["name"], p.get("default"), p["spec"]["title"]) for p in listed] == [
        ("hgx-h100-h200", True, "HGX H100/H200 acceptance"),
        ("lab", False, "Lab"),
    ]
    plan = planning.make(read_texts(list(texts.items())), SECRETS)
    assert plan.changes == []
