"""Webhook subscriptions in the fleet files: created and changed through webhooks' own
services (audited under the caller), the receiver's secret given as a reference and never
shown, a URL's credential never shown, two subscriptions on one URL refused, pruned only
when listed, exported without the secret. Expected values are the files' own."""

from __future__ import annotations

import json

import pytest
import yaml

from core.ids import new_secret
from fleetfile import apply as applying
from fleetfile import export
from fleetfile import plan as planning
from fleetfile.loading import FleetFileError, read_texts
from fleetfile.secrets import Local
from webhooks.models import WebhookAudit, WebhookSubscription

pytestmark = pytest.mark.django_db

SECRET = new_secret()
HOOKS = """\
webhooks:
  - url: https://tickets.example.net/corral?token=s3cr3t-in-url
    events: [node.state_changed, rma.opened]
    description: the ticketing system
    secret: env:TICKETS_SECRET
"""


def files(text: str):
    return read_texts([("fleet/webhooks.yaml", text)])


def secrets(value: str = SECRET) -> Local:
    return Local({"TICKETS_SECRET": value})


def test_a_subscription_is_created_with_the_receiver_s_secret_and_changed_in_place():
    plan = planning.make(files(HOOKS), secrets())
    shown = json.dumps(plan.as_api()) + plan.text()
    assert "s3cr3t-in-url" not in shown and SECRET not in shown
    [change] = plan.changes
    assert ("secret", None, "(given)") in [(f.name, f.old, f.new) for f in change.fields]
    applying.apply(files(HOOKS), secrets(), actor="user:alice", revision=plan.revision)
    sub = WebhookSubscription.objects.get()
    assert (sub.url, sub.events, sub.secret) == (
        "https://tickets.example.net/corral?token=s3cr3t-in-url",
        ["node.state_changed", "rma.opened"],
        SECRET,
    )
    assert planning.make(files(HOOKS), secrets()).changes == []

    rotated = new_secret()
    fewer = HOOKS.replace("[node.state_changed, rma.opened]", "[rma.opened]")
    plan = planning.make(files(fewer), secrets(rotated))
    assert [(f.name, f.old, f.new) for f in plan.changes[0].fields] == [
        ("events", ["node.state_changed", "rma.opened"], ["rma.opened"]),
        ("secret", "(stored)", "(changed)"),
    ]
    applying.apply(files(fewer), secrets(rotated), actor="user:alice")
    sub.refresh_from_db()
    assert (sub.events, sub.secret) == (["rma.opened"], rotated)
    trail = list(WebhookAudit.objects.order_by("pk").values_list("action", "actor"))
    assert trail == [
        ("created", "user:alice"),
        ("secret_set", "user:alice"),
        ("updated", "user:alice"),
        ("secret_set", "user:alice"),
    ]


def test_a_missing_secret_a_bad_one_and_an_unknown_event_are_named_where_they_are():
    no_secret = HOOKS.replace("    secret: env:TICKETS_SECRET\n", "")
    bad = HOOKS.replace("rma.opened", "rma.exploded")
    with pytest.raises(FleetFileError) as caught:
        planning.make(files(no_secret), secrets())
    assert [p.message for p in caught.value.problems] == [
        "a new subscription needs the receiver's signing secret: secret: env:NAME (or file:/path)"
    ]
    with pytest.raises(FleetFileError) as caught:
        planning.make(files(HOOKS), secrets("not-a-signing-secret"))
    assert [(p.path, p.message) for p in caught.value.problems] == [
        (
            "webhooks[0].secret",
            "Not a signing secret (whsec_ and base64 of at least 24 bytes); the value is "
            "not repeated here.",
        )
    ]
    with pytest.raises(FleetFileError) as caught:
        read_texts([("fleet/webhooks.yaml", bad)])
    assert caught.value.problems[0].path == "webhooks[0].events[1]"
    literal = HOOKS.replace("env:TICKETS_SECRET", "whsec_" + "A" * 44)
    with pytest.raises(FleetFileError) as caught:
        read_texts([("fleet/webhooks.yaml", literal)])
    assert "never as its value" in caught.value.problems[0].message
    assert "AAAA" not in str(caught.value)
    assert not WebhookSubscription.objects.exists()


def test_two_subscriptions_on_one_url_are_refused_and_a_prune_deletes_unlisted_ones():
    for _ in range(2):
        WebhookSubscription.objects.create(
            url="https://tickets.example.net/corral?token=s3cr3t-in-url",
            events=["rma.opened"],
            secret=new_secret(),
            created_by="user:bob",
        )
    plan = planning.make(files(HOOKS), secrets())
    assert plan.refusals == [
        "webhook https://tickets.example.net/corral?token=…: more than one "
        "subscription sends to it, so the files cannot say which; delete all but one on the "
        "webhooks page"
    ]
    WebhookSubscription.objects.filter(pk=WebhookSubscription.objects.first().pk).delete()
    other = WebhookSubscription.objects.create(
        url="https://old.example.net/hook", events=["rma.opened"], secret=new_secret()
    )
    plan = planning.make(files(HOOKS), secrets(), prune=True)
    assert [(c.label, c.action) for c in plan.changes if c.kind == "webhook"][-1] == (
        "webhook https://old.example.net/hook",
        "delete",
    )
    applying.apply(files(HOOKS), secrets(), actor="user:alice", prune=True, allow_destructive=True)
    assert not WebhookSubscription.objects.filter(pk=other.pk).exists()


def test_export_writes_each_subscription_without_its_secret_and_plans_as_no_change():
    applying.apply(files(HOOKS), secrets(), actor="user:alice")
    texts = export.texts()
    assert SECRET not in "".join(texts.values())
    listed = yaml.safe_load(texts["webhooks.yaml"])["webhooks"]
    assert [(w["url"], w["events"]) for w in listed] == [
        (
            "https://tickets.example.net/corral?token=s3cr3t-in-url",
            ["node.state_changed", "rma.opened"],
        )
    ]
    plan = planning.make(read_texts(list(texts.items())), Local({}))
    assert plan.changes == []
