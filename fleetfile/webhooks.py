"""Webhook subscriptions in the fleet files, keyed by the URL events are sent to
(docs/fleet-as-code.md, docs/webhooks.md).

The signing secret is the receiver's, so the files give it as a reference (`secret:
env:NAME` or `file:/path`), resolved where apply runs, never as its value; a new
subscription needs one (a secret Corral made would be shown nowhere). A plan shows it only
as `(given)`, `(stored)` or `(changed)`. Every write goes through webhooks' own services
(the URL against the egress policy, the event types known, an audit row naming the
caller), and a URL is shown as those services show it (a credential in it redacted). Two
subscriptions of the fleet sending to the same URL cannot be told apart by the files: the
plan refuses to manage that URL until one is deleted on the webhooks page. A prune deletes
subscriptions only when the files list them (a `webhooks:` key).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError

from core.urlsafe import redact_url
from webhooks import services
from webhooks.models import WebhookSubscription
from webhooks.validators import check_events, check_secret, check_url

from .changes import CHANGED, GIVEN, STORED, UPDATE, Change, FieldChange, label_of
from .loading import Item, Problem, Source

if TYPE_CHECKING:
    from .desired import Wanted

KEYS = ("url", "events", "description", "enabled")


def listed(sources: list[Source]) -> bool:
    """Whether any file lists webhooks (then a prune manages them all)."""
    return any(isinstance(s.data, dict) and "webhooks" in s.data for s in sources)


def label(url: str) -> str:
    return f"webhook {redact_url(url)}"


def wanted_values(item: Item) -> dict[str, Any]:
    values = {k: item.data[k] for k in KEYS if k in item.data}
    if "events" in values:
        values["events"] = sorted(set(values["events"]))
    return values


def existing() -> tuple[dict[str, WebhookSubscription], set[str]]:
    """The subscriptions by URL, and the URLs more than one of them sends to."""
    subs = list(WebhookSubscription.objects.order_by("pk"))
    shared = {url for url, n in Counter(s.url for s in subs).items() if n > 1}
    return {s.url: s for s in subs if s.url not in shared}, shared


def every() -> list[WebhookSubscription]:
    """Each URL's first subscription (an export names each URL once)."""
    seen: dict[str, WebhookSubscription] = {}
    for sub in WebhookSubscription.objects.order_by("pk"):
        seen.setdefault(sub.url, sub)
    return list(seen.values())


def form(sub: WebhookSubscription) -> dict[str, Any]:
    """A subscription as the files write it (never its secret)."""
    return {
        "url": sub.url,
        "events": sorted(sub.events or []),
        "description": sub.description,
        "enabled": sub.enabled,
    }


def check(wanted: Wanted, current: dict[str, Any] | None, obj: Any = None) -> list[Problem]:
    """By webhooks' own validators; a new subscription needs its secret."""
    item, values = wanted.item, wanted.values
    found = []
    for key, validate in (("url", check_url), ("events", check_events)):
        if key in values:
            try:
                validate(values[key])
            except ValidationError as exc:
                found += [item.problem(m, key) for m in exc.messages]
    if obj is None and "secret" not in item.data:
        found.append(
            item.problem(
                "a new subscription needs the receiver's signing secret: secret: env:NAME "
                "(or file:/path)",
                "url",
            )
        )
    elif wanted.password:
        try:
            check_secret(wanted.password)
        except ValidationError as exc:
            found += [item.problem(m, "secret") for m in exc.messages]
    return found


def secret_change(wanted: Wanted, sub: WebhookSubscription | None) -> FieldChange | None:
    if not wanted.password:
        return None
    if sub is None:
        return FieldChange("secret", None, GIVEN)
    if sub.secret != wanted.password:
        return FieldChange("secret", STORED, CHANGED)
    return None


def with_secret(change: Change | None, wanted: Wanted, sub: Any) -> Change | None:
    """The plan's change of a subscription with its secret's line, the URL shown redacted."""
    found = secret_change(wanted, sub)
    if change is None and found is None:
        return None
    if change is None:
        change = Change("webhook", wanted.key, UPDATE, label_of("webhook", wanted.key, None))
        change.wanted, change.obj = wanted, sub
    for f in change.fields:
        if f.name == "url":
            f.new = redact_url(f.new) if f.new else f.new
    if found is not None:
        change.fields.append(found)
    return change


def shared_refusal(url: str) -> str:
    return (
        f"{label(url)}: more than one subscription sends to it, so the files cannot say "
        "which; delete all but one on the webhooks page"
    )


def save(wanted: Wanted, sub: WebhookSubscription | None, actor: str) -> WebhookSubscription:
    values = wanted.values
    if sub is None:
        sub, _ = services.create_subscription(
            values["url"],
            values.get("events", []),
            actor,
            description=values.get("description", ""),
            enabled=values.get("enabled", True),
        )
    else:
        sub = services.update_subscription(sub, dict(values), actor)
    if wanted.password and sub.secret != wanted.password:
        services.set_secret(sub, wanted.password, actor)
    return sub
