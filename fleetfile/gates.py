"""Gate profiles in the fleet files: the phases, checks and thresholds every node is admitted
on (docs/gates.md), keyed by name (docs/fleet-as-code.md).

A profile's `spec` is checked by the gates' own validator (validation.verdicts, through the
model's clean(), as the API's save runs it), so a typo in a threshold is refused at its
file and line, never saved to silently disable a gate. `default: true` marks the profile
a gate run uses when none is named; one at most in the files, and an apply that makes a
profile the default takes the mark from the one that had it. A prune deletes profiles only
when the files list them (a `gate_profiles:` key); one that has judged a node is kept (its
runs are evidence), and the plan says so.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError

from validation.models import GateProfile

from .loading import Problem, Source, model_problems

if TYPE_CHECKING:
    from .desired import Wanted

FIELD = {"name": "name", "spec": "spec", "default": "is_default"}


def listed(sources: list[Source]) -> bool:
    """Whether any file lists gate profiles (then a prune manages them all)."""
    return any(isinstance(s.data, dict) and "gate_profiles" in s.data for s in sources)


def existing() -> dict[str, GateProfile]:
    return {p.name: p for p in GateProfile.objects.all()}


def form(profile: GateProfile) -> dict[str, Any]:
    """A profile as the files write it."""
    return {key: getattr(profile, name) for key, name in FIELD.items()}


def check(wanted: Wanted, current: dict[str, Any] | None, obj: Any = None) -> list[Problem]:
    """By the model's rules and the gates' validator, on the values it will have."""
    values = {**(current or {}), **wanted.values}
    profile = GateProfile(name=values["name"], spec=values.get("spec"))
    try:
        profile.full_clean(validate_unique=False, validate_constraints=False)
    except ValidationError as exc:
        return model_problems(wanted.item, exc)
    return []


def save(wanted: Wanted, obj: GateProfile | None, actor: str = "") -> GateProfile:
    values = wanted.values
    if values.get("default"):  # the mark moves here: one default at a time
        GateProfile.objects.filter(is_default=True).exclude(name=values["name"]).update(
            is_default=False
        )
    profile = obj or GateProfile(name=values["name"])
    for key, value in values.items():
        setattr(profile, FIELD[key], value)
    profile.full_clean(validate_constraints=False)
    profile.save()
    return profile


def judged() -> set[str]:
    """The profiles some gate run used: kept by a prune, as the runs' evidence."""
    return set(GateProfile.objects.filter(runs__isnull=False).values_list("name", flat=True))
