"""Writes of baselines: validated, versioned, audited, and followed by a recompute.

Every save and delete writes a BaselineRevision (who, when, what changed) in the same
transaction; the affected nodes are recomputed by a task enqueued on commit, and the
periodic sweep catches any node that task did not reach (broker down at commit).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from inventory.facts import KEY
from provisioning import bios

from .models import Baseline, BaselineRevision

FIELDS = ("name", "description", "node_model", "gpu_model", "components")
MAX_COMPONENTS = 200


class BaselineError(ValueError):
    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__("; ".join(f"{k}: {v}" for k, v in errors.items()))
        self.errors = errors


def clean_components(value: Any) -> dict[str, Any]:
    """{component: version | [versions]}; the error names the component to fix."""
    if not isinstance(value, dict) or not value:
        raise BaselineError({"components": 'give an object like {"firmware.BMC": "1.45"}'})
    if len(value) > MAX_COMPONENTS:
        raise BaselineError({"components": f"at most {MAX_COMPONENTS} components"})
    cleaned: dict[str, Any] = {}
    for key, version in value.items():
        if not isinstance(key, str) or not KEY.match(key):
            raise BaselineError({"components": f"{key!r} is not a component name"})
        items = version if isinstance(version, list) else [version]
        if not items or not all(
            isinstance(v, str | int | float) and not isinstance(v, bool) and str(v).strip()
            for v in items
        ):
            raise BaselineError(
                {"components": f"{key}: give a version string or a list of version strings"}
            )
        texts = [str(v).strip()[:100] for v in items]
        cleaned[key] = texts if isinstance(version, list) else texts[0]
    return cleaned


def _snapshot(b: Baseline) -> dict[str, Any]:
    return {f: getattr(b, f) for f in FIELDS}


def _revision(b: Baseline, action: str, actor: str, changes: dict[str, Any]) -> None:
    BaselineRevision.objects.create(
        baseline=b if action != "deleted" else None,
        name=b.name,
        revision=b.revision,
        action=action,
        node_model=b.node_model,
        gpu_model=b.gpu_model,
        components=b.components,
        changes=changes,
        actor=actor,
    )


def _enqueue_recompute() -> None:
    from .tasks import sweep

    transaction.on_commit(lambda: _send(sweep))


def _send(task: Any) -> None:
    try:
        task.delay()
    except Exception:  # noqa: BLE001  the beat sweep runs it anyway; a save never fails on it
        import logging

        logging.getLogger(__name__).warning("drift sweep not sent; the beat sweep will run it")


def _unique_match(data: dict[str, Any], baseline: Baseline | None) -> None:
    node_model = data.get("node_model", baseline.node_model if baseline else "")
    gpu_model = data.get("gpu_model", baseline.gpu_model if baseline else "")
    other = Baseline.objects.filter(node_model__iexact=node_model, gpu_model__iexact=gpu_model)
    if baseline is not None:
        other = other.exclude(pk=baseline.pk)
    clash = other.first()
    if clash is not None:
        raise BaselineError(
            {
                "node_model": f"baseline '{clash}' already covers model '{node_model or 'any'}' "
                f"with GPU model '{gpu_model or 'any'}'; change that one instead"
            }
        )


def _check_bios(data: dict[str, Any], baseline: Baseline | None) -> None:
    """`bios.*` components against the BIOS attribute registry of the baseline's model
    (provisioning.bios.check): a name or value the BMC would refuse is refused here."""
    components = data.get("components", baseline.components if baseline else {})
    node_model = data.get("node_model", baseline.node_model if baseline else "")
    wanted = {
        key.removeprefix(bios.PREFIX): values if isinstance(values, list) else [values]
        for key, values in components.items()
        if key.startswith(bios.PREFIX)
    }
    errors = bios.check(node_model, wanted)
    if errors:
        raise BaselineError({f"components.{key}": why for key, why in errors.items()})


def check(data: dict[str, Any], baseline: Baseline | None = None) -> dict[str, Any]:
    """`data` (for a new baseline, or changes to `baseline`) by the rules a save applies,
    writing nothing: the components in their clean form; BaselineError naming what to fix.
    The fleet files' plan checks with it, so a plan shows what an apply would refuse."""
    if "components" in data:
        data = {**data, "components": clean_components(data["components"])}
    _unique_match(data, baseline)
    _check_bios(data, baseline)
    return data


def save(data: dict[str, Any], actor: str, baseline: Baseline | None = None) -> Baseline:
    """Create (baseline None) or change a baseline; a change bumps the revision only when
    what it expects or matches changed (a description edit is not new drift)."""
    data = check(data, baseline)
    with transaction.atomic():
        if baseline is None:
            baseline = Baseline(**{k: v for k, v in data.items() if k in FIELDS})
            baseline.updated_by = actor
            baseline.save()
            _revision(baseline, "created", actor, {})
        else:
            baseline = Baseline.objects.select_for_update().get(pk=baseline.pk)
            before = _snapshot(baseline)
            for key, value in data.items():
                if key in FIELDS:
                    setattr(baseline, key, value)
            after = _snapshot(baseline)
            changes = {k: [before[k], after[k]] for k in FIELDS if before[k] != after[k]}
            if not changes:
                return baseline
            if set(changes) - {"name", "description"}:
                baseline.revision += 1
            baseline.updated_by = actor
            baseline.save()
            _revision(baseline, "updated", actor, changes)
        _enqueue_recompute()
    return baseline


def delete(baseline: Baseline, actor: str) -> None:
    with transaction.atomic():
        _revision(baseline, "deleted", actor, {})
        baseline.delete()
        _enqueue_recompute()


def load(data: Any, actor: str) -> tuple[Baseline, bool]:
    """A baseline from JSON (the load_baseline command): created, or updated by name."""
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        raise BaselineError({"name": "the file must be an object with a name"})
    unknown = set(data) - set(FIELDS)
    if unknown:
        raise BaselineError({"fields": f"unknown field(s) {sorted(unknown)}; use {FIELDS}"})
    existing = Baseline.objects.filter(name=data["name"]).first()
    return save(data, actor, existing), existing is None
