"""Reads for converge's pages."""

from __future__ import annotations

from typing import Any

from drift.engine import accepted
from drift.models import Baseline

from . import pins
from .models import BaselineArtifact, FirmwareArtifact


def firmware_choices(baseline: Baseline) -> list[dict[str, Any]]:
    """Per firmware component of the baseline: the versions it expects, the package it
    names (if any, with what is wrong with it now) and the packages it could name."""
    named = {
        c.component: c
        for c in BaselineArtifact.objects.filter(baseline=baseline).select_related("artifact")
    }
    every = list(FirmwareArtifact.objects.all())
    rows = []
    for component, value in sorted(baseline.components.items()):
        if not component.startswith(pins.FIRMWARE):
            continue
        choice = named.get(component)
        rows.append(
            {
                "component": component,
                "versions": accepted(value),
                "choice": choice,
                "problem": pins.problems(baseline, component, choice.artifact).get("artifact", "")
                if choice
                else "",
                # What it may name: the same checks as naming it (pins.problems).
                "candidates": [a for a in every if not pins.problems(baseline, component, a)],
            }
        )
    return rows
