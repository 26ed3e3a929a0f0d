"""The health policy in the fleet files: rows keyed by kind, match and GPU model, checked
by the model's rules (a watch row needs its count, window and escalation), changed in
place, a key two rows share refused, pruned only when listed, exported. Expected values
are the files' own."""

from __future__ import annotations

import pytest
import yaml

from fleetfile import apply as applying
from fleetfile import export
from fleetfile import plan as planning
from fleetfile.loading import FleetFileError, read_texts
from health.models import HealthPolicy

from .fleet import SECRETS

pytestmark = pytest.mark.django_db

POLICY = """\
health_policy:
  - {kind: xid, match: 79, gpu_model: H100-SXM, action: recycle, priority: 10,
     note: fallen off the bus}
  - {kind: ecc, match: uncorrectable, action: watch, count: 3, window_minutes: 1440,
     escalate_to: rma, priority: 20}
"""


@pytest.fixture(autouse=True)
def empty_policy(db):
    """The table as a fleet managing it from files starts (its data migration's rows, if a
    flush left them, are not these tests' subject)."""
    HealthPolicy.objects.all().delete()


def files(text: str):
    return read_texts([("fleet/health_policy.yaml", text)])


def apply(text: str, **kwargs):
    return applying.apply(files(text), SECRETS, actor="user:alice", **kwargs)


def test_rows_are_created_then_changed_in_place_by_their_key():
    plan = planning.make(files(POLICY), SECRETS)
    assert [c.label for c in plan.changes] == [
        "health rule xid 79 on H100-SXM",
        "health rule ecc uncorrectable",
    ]
    apply(POLICY, revision=plan.revision)
    rows = {(r.kind, r.match, r.gpu_model): r for r in HealthPolicy.objects.all()}
    assert rows[("xid", "79", "H100-SXM")].action == "recycle"
    assert rows[("ecc", "uncorrectable", "")].describe() == "watch: 3 in 24 h -> rma"
    assert planning.make(files(POLICY), SECRETS).changes == []

    stricter = POLICY.replace("action: recycle", "action: rma")
    plan = planning.make(files(stricter), SECRETS)
    assert [(c.label, [(f.name, f.old, f.new) for f in c.fields]) for c in plan.changes] == [
        ("health rule xid 79 on H100-SXM", [("action", "recycle", "rma")])
    ]
    apply(stricter)
    assert HealthPolicy.objects.get(kind="xid").action == "rma"
    assert HealthPolicy.objects.count() == 2


def test_a_watch_row_without_its_window_and_a_key_given_twice_are_named():
    bad = POLICY.replace(" window_minutes: 1440,", "") + (
        "  - {kind: xid, match: '79', gpu_model: H100-SXM, action: ignore}\n"
    )
    with pytest.raises(FleetFileError) as caught:
        planning.make(files(bad), SECRETS)
    assert sorted(str(p) for p in caught.value.problems) == [
        "fleet/health_policy.yaml:4 health_policy[1].window_minutes: A watch row needs it.",
        "fleet/health_policy.yaml:6 health_policy[2].match: health rule 'xid 79 on "
        "H100-SXM' is also given at fleet/health_policy.yaml:2",
    ]


def test_a_key_two_rows_share_is_refused_and_a_prune_deletes_unlisted_rows():
    for action in ("recycle", "rma"):
        HealthPolicy.objects.create(kind="xid", match="79", gpu_model="H100-SXM", action=action)
    plan = planning.make(files(POLICY), SECRETS)
    assert plan.refusals == [
        "health rule xid 79 on H100-SXM: more than one row of the policy matches it, so the "
        "files cannot say which; delete all but one (/api/v1/health-policies/ or the Django "
        "admin)"
    ]
    HealthPolicy.objects.filter(action="rma").delete()
    HealthPolicy.objects.create(kind="thermal", match="*", action="ignore")
    plan = planning.make(files(POLICY), SECRETS, prune=True)
    assert [(c.label, c.action) for c in plan.changes if c.kind == "health_rule"] == [
        ("health rule xid 79 on H100-SXM", "update"),  # its priority and note
        ("health rule ecc uncorrectable", "create"),
        ("health rule thermal *", "delete"),
    ]
    apply(POLICY, prune=True, allow_destructive=True)
    assert sorted(HealthPolicy.objects.values_list("kind", flat=True)) == ["ecc", "xid"]


def test_export_writes_the_policy_and_a_plan_of_it_changes_nothing():
    apply(POLICY)
    texts = export.texts()
    rows = yaml.safe_load(texts["health_policy.yaml"])["health_policy"]
    assert [(r["kind"], r["match"], r.get("gpu_model"), r["action"]) for r in rows] == [
        ("xid", "79", "H100-SXM", "recycle"),
        ("ecc", "uncorrectable", None, "watch"),
    ]
    assert planning.make(read_texts(list(texts.items())), SECRETS).changes == []


def test_the_same_rule_twice_is_one_rule_to_the_files():
    for _ in range(2):
        HealthPolicy.objects.create(kind="thermal", match="hw_slowdown", action="ignore")
    texts = export.texts()
    rows = yaml.safe_load(texts["health_policy.yaml"])["health_policy"]
    assert [(r["kind"], r["match"]) for r in rows] == [("thermal", "hw_slowdown")]
    assert planning.make(read_texts(list(texts.items())), SECRETS).changes == []
    watched = "health_policy:\n  - {kind: thermal, match: hw_slowdown, action: rma}\n"
    apply(watched)
    assert list(HealthPolicy.objects.values_list("action", flat=True)) == ["rma", "rma"]
