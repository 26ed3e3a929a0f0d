"""What a campaign does to each of its nodes: a registry its kinds fill at start-up.

A campaign paces one node action over many nodes (day2.campaigns). What that action is,
what it needs, which nodes it must leave out and what it would change on each are the
kind's to say; the pacing, the plan, the failure budget and the pages are day2's. Day 2
registers `reimage` (a recycle to an image); converge registers `converge` from its own
ready(), so day2 never imports the app above it (NetBox's registries, MAAS's actions).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError


@dataclass
class Assessment:
    """One node as a kind sees it before the campaign starts: left out (`skip`, why), or
    what the action would change there (`changes`: component, from, to) and how long it
    should take (`estimate_s`, None when nothing is known to guess from)."""

    skip: str = ""
    changes: list[dict[str, Any]] = field(default_factory=list)
    estimate_s: int | None = None


# (nodes, the campaign's image or None) -> node id -> its assessment. Reads only: facts,
# baselines, artifacts; never a BMC (a plan of a whole site must answer in a second).
Assess = Callable[[list[Any], Any], dict[int, Assessment]]


@dataclass(frozen=True)
class Kind:
    name: str  # what the API's `kind` takes
    label: str  # what the pages show
    action: str  # the node action each member runs (inventory/actions.py)
    assess: Assess
    needs_image: bool = False  # its action takes the campaign's image (a reimage)


KINDS: dict[str, Kind] = {}
# (name, label) of each kind, kept as they register: the API's `kind` choices, and the
# schema's CampaignKindEnum (fleet/settings_api.py names this list).
CHOICES: list[tuple[str, str]] = []


def register(kind: Kind) -> None:
    KINDS[kind.name] = kind
    CHOICES[:] = [(k.name, k.label) for k in KINDS.values()]


def get(name: str) -> Kind:
    """The kind called `name`, or a 400 naming the kinds there are."""
    found = KINDS.get(name)
    if found is None:
        raise ValidationError({"kind": f"No campaign kind {name!r}; one of: {', '.join(KINDS)}."})
    return found


def choices() -> list[tuple[str, str]]:
    return list(CHOICES)


def params(kind: Kind, image_id: int | None) -> dict[str, Any]:
    """The parameters each member's action is started with."""
    return {"image": image_id} if kind.needs_image else {}
