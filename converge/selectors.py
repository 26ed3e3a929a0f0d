"""Reads for converge's pages."""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Any

from drift.models import Baseline
from drift.versions import same

from . import pins
from .models import ArtifactState, BaselineArtifact, FirmwareArtifact


def firmware_choices(baseline: Baseline) -> list[dict[str, Any]]:
    """Per firmware component of the baseline: the versions it expects, the package it
    names (if any, with what is wrong with it now) and the packages it could name."""
    named = {
        c.component: c
        for c in BaselineArtifact.objects.filter(baseline=baseline).select_related("artifact")
    }
    usable = list(FirmwareArtifact.objects.exclude(state=ArtifactState.REFUSED))
    rows = []
    for component, value in sorted(baseline.components.items()):
        if not component.startswith(pins.FIRMWARE):
            continue
        versions = [str(v) for v in (value if isinstance(value, list) else [value])]
        member = component.removeprefix(pins.FIRMWARE)
        choice = named.get(component)
        rows.append(
            {
                "component": component,
                "versions": versions,
                "choice": choice,
                "problem": pins.problems(baseline, component, choice.artifact).get("artifact", "")
                if choice
                else "",
                "candidates": [
                    a
                    for a in usable
                    if fnmatchcase(member, a.component)
                    and any(same(a.version, v) for v in versions)
                    and not pins.problems(baseline, component, a)
                ],
            }
        )
    return rows
