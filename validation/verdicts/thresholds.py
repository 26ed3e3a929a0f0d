"""Threshold trees: resolution per GPU model and fabric, and load-time validation.

The scheme is described in the package docstring; in short, each threshold key maps to
either a plain value (the same everywhere) or a rule node::

    {"default": 300,
     "fabric": {"tcpxo": 300},
     "gpu_model": {"H100-SXM": {"default": 430, "fabric": {"ib-400g": 430}}},
     "source": "where these numbers came from"}

and the most specific scope present wins: gpu_model+fabric > gpu_model > fabric >
default. Any value may be written ``{"value": 430, "source": "..."}`` so the reason for
a number sits next to it. ``null`` at the winning scope means "not applied here".
"""

from __future__ import annotations

import dataclasses
import difflib
import math
from typing import Any

NODE_KEYS = ("default", "gpu_model", "fabric", "source")
MODEL_NODE_KEYS = ("default", "fabric", "source")
LEAF_KEYS = ("value", "source")
KINDS = ("number", "int", "bool", "str", "str_list")

_MISSING = object()


@dataclasses.dataclass(frozen=True)
class KeySpec:
    """One threshold a judge understands.

    ``required`` keys must resolve to a value for the node being judged, otherwise the
    verdict is a fail (a missing floor must never read as "no floor, pass"); optional
    keys fall back to ``default`` (None: the rule is off).
    """

    kind: str
    doc: str
    required: bool = False
    default: Any = None
    choices: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"threshold kind must be one of {KINDS}, not {self.kind!r}")


def _is_leaf_wrapper(value: Any) -> bool:
    return isinstance(value, dict) and "value" in value


def _unwrap(value: Any) -> Any:
    return value["value"] if _is_leaf_wrapper(value) else value


def _lookup(mapping: Any, name: str | None) -> Any:
    """Case-insensitive scope lookup ("h100-sxm" matches "H100-SXM")."""
    if not isinstance(mapping, dict) or not name:
        return _MISSING
    wanted = name.casefold()
    for key, value in mapping.items():
        if str(key).casefold() == wanted:
            return value
    return _MISSING


def resolve_one(tree: Any, gpu_model: str | None, fabric: str | None) -> Any:
    """The value of one threshold for this node, or ``_MISSING`` if no scope applies."""
    if not isinstance(tree, dict) or _is_leaf_wrapper(tree):
        return _unwrap(tree)
    model = _lookup(tree.get("gpu_model"), gpu_model)
    if model is not _MISSING:
        if isinstance(model, dict) and not _is_leaf_wrapper(model):
            per_fabric = _lookup(model.get("fabric"), fabric)
            if per_fabric is not _MISSING:
                return _unwrap(per_fabric)
            if "default" in model:
                return _unwrap(model["default"])
        else:
            return _unwrap(model)
    per_fabric = _lookup(tree.get("fabric"), fabric)
    if per_fabric is not _MISSING:
        return _unwrap(per_fabric)
    if "default" in tree:
        return _unwrap(tree["default"])
    return _MISSING


def resolve_thresholds(
    thresholds: dict[str, Any],
    gpu_model: str | None,
    fabric: str | None,
    *,
    keep_null: bool = False,
) -> dict[str, Any]:
    """Flatten a check's threshold trees to plain values for one GPU model and fabric.

    Keys with no applicable scope, or whose winning scope is ``null``, are left out, so
    ``key in resolved`` always means "this rule is on for this node". ``keep_null``
    keeps the explicit nulls (as None) so a caller can tell "switched off here" from
    "not mentioned" before filling in defaults.
    """
    resolved = {}
    for key, tree in thresholds.items():
        value = resolve_one(tree, gpu_model, fabric)
        if value is not _MISSING and (value is not None or keep_null):
            resolved[key] = value
    return resolved


def _check_value(value: Any, spec: KeySpec, where: str) -> list[str]:
    if value is None:
        return []
    kind = spec.kind
    if kind in ("number", "int"):
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if kind == "int":
            ok = ok and float(value).is_integer()
        if not ok:
            return [
                f"{where}: expected {'an integer' if kind == 'int' else 'a number'}, got {value!r}"
            ]
        if not math.isfinite(value) or value < 0:
            return [f"{where}: expected a finite, non-negative value, got {value!r}"]
        return []
    if kind == "bool":
        return [] if isinstance(value, bool) else [f"{where}: expected true/false, got {value!r}"]
    if kind == "str":
        if not isinstance(value, str) or not value:
            return [f"{where}: expected a non-empty string, got {value!r}"]
        items = [value]
    else:
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            return [f"{where}: expected a list of non-empty strings, got {value!r}"]
        items = value
    if spec.choices is not None:
        bad = [v for v in items if v not in spec.choices]
        if bad:
            return [f"{where}: {bad} not among {list(spec.choices)}"]
    return []


def _check_leaf(value: Any, spec: KeySpec, where: str) -> list[str]:
    if isinstance(value, dict):
        if "value" not in value:
            return [
                f'{where}: expected a value or {{"value": ..., "source": ...}}, '
                f"got keys {sorted(value)}"
            ]
        errors = [
            f"{where}: unknown key {k!r} (allowed: value, source)"
            for k in value
            if k not in LEAF_KEYS
        ]
        errors += _check_source(value, where)
        return errors + _check_value(value["value"], spec, f"{where}.value")
    return _check_value(value, spec, where)


def _check_source(node: dict[str, Any], where: str) -> list[str]:
    if "source" in node and not (isinstance(node["source"], str) and node["source"].strip()):
        return [f"{where}.source: expected a non-empty string"]
    return []


def _check_scope_names(
    mapping: Any, declared: tuple[str, ...] | None, scope: str, where: str
) -> list[str]:
    if not isinstance(mapping, dict) or not mapping:
        return [f"{where}: expected a non-empty object of {scope} -> value"]
    errors = []
    seen: set[str] = set()
    for name in mapping:
        if name.casefold() in seen:
            errors.append(
                f"{where}: {scope} {name!r} listed twice (names match case-insensitively)"
            )
        seen.add(name.casefold())
        if declared is not None and name.casefold() not in {d.casefold() for d in declared}:
            hint = difflib.get_close_matches(name, declared, n=1)
            errors.append(
                f"{where}: {scope} {name!r} is not declared in the profile's {scope}s "
                f"{list(declared)}" + (f" (did you mean {hint[0]!r}?)" if hint else "")
            )
    return errors


def _check_fabric_map(
    mapping: Any, spec: KeySpec, fabrics: tuple[str, ...] | None, where: str
) -> list[str]:
    errors = _check_scope_names(mapping, fabrics, "fabric", where)
    if isinstance(mapping, dict):
        for name, value in mapping.items():
            errors += _check_leaf(value, spec, f"{where}.{name}")
    return errors


def validate_tree(
    tree: Any,
    spec: KeySpec,
    where: str,
    gpu_models: tuple[str, ...] | None = None,
    fabrics: tuple[str, ...] | None = None,
) -> list[str]:
    """Every problem in one key's threshold tree, each naming its path; [] if valid.

    Scope names are checked against the profile's declared GPU models and fabrics,
    because a misspelt model ("H100-SMX") would otherwise never match and silently
    fall back to a weaker default.
    """
    if not isinstance(tree, dict) or _is_leaf_wrapper(tree):
        return _check_leaf(tree, spec, where)
    errors = [
        f"{where}: unknown key {k!r} (allowed: {', '.join(NODE_KEYS)})"
        for k in tree
        if k not in NODE_KEYS
    ]
    if not any(k in tree for k in ("default", "gpu_model", "fabric")):
        errors.append(f"{where}: expected at least one of default, gpu_model, fabric")
    errors += _check_source(tree, where)
    if "default" in tree:
        errors += _check_leaf(tree["default"], spec, f"{where}.default")
    if "fabric" in tree:
        errors += _check_fabric_map(tree["fabric"], spec, fabrics, f"{where}.fabric")
    if "gpu_model" in tree:
        models = tree["gpu_model"]
        errors += _check_scope_names(models, gpu_models, "gpu_model", f"{where}.gpu_model")
        for name, node in models.items() if isinstance(models, dict) else ():
            here = f"{where}.gpu_model.{name}"
            if not isinstance(node, dict) or _is_leaf_wrapper(node):
                errors += _check_leaf(node, spec, here)
                continue
            errors += [
                f"{here}: unknown key {k!r} (allowed: {', '.join(MODEL_NODE_KEYS)})"
                for k in node
                if k not in MODEL_NODE_KEYS
            ]
            if not any(k in node for k in ("default", "fabric")):
                errors.append(f"{here}: expected default and/or fabric")
            errors += _check_source(node, here)
            if "default" in node:
                errors += _check_leaf(node["default"], spec, f"{here}.default")
            if "fabric" in node:
                errors += _check_fabric_map(node["fabric"], spec, fabrics, f"{here}.fabric")
    return errors


def validate_thresholds(
    thresholds: Any,
    keys: dict[str, KeySpec],
    tool: str,
    where: str,
    gpu_models: tuple[str, ...] | None = None,
    fabrics: tuple[str, ...] | None = None,
) -> list[str]:
    """Unknown keys, malformed trees and missing required keys for one check.

    An unknown key is an error rather than ignored: a typo ("busbw_inplace_at_max_gbs")
    would otherwise switch a gate off without anyone noticing.
    """
    if not isinstance(thresholds, dict):
        return [f"{where}: expected an object, got {type(thresholds).__name__}"]
    errors = []
    for key, tree in thresholds.items():
        if key not in keys:
            hint = difflib.get_close_matches(key, list(keys), n=1)
            errors.append(
                f"{where}: unknown threshold key {key!r} for tool {tool!r}"
                + (f" (did you mean {hint[0]!r}?)" if hint else "")
                + f"; known keys: {', '.join(sorted(keys))}"
            )
            continue
        errors += validate_tree(tree, keys[key], f"{where}.{key}", gpu_models, fabrics)
    for key, spec in keys.items():
        if spec.required and key not in thresholds:
            errors.append(f"{where}: missing required threshold key {key!r} for tool {tool!r}")
    return errors
