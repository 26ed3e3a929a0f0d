"""Acceptance profiles as data: loading and strict validation.

A profile is JSON (see ``validation/profiles/hgx_h100_h200.json``)::

    {"name": ..., "title": ..., "version": 1, "description": ...,
     "gpu_models": ["H100-SXM", ...], "fabrics": ["ib-400g", ...],
     "phases": [{"name": "preflight", "description": ...,
                 "soak": {"duration_s": 120, "repeat": 15},      # soak phases only
                 "checks": [{"name", "tool", "command", "timeout_s", "required",
                             "hardware_evidence", "thresholds", "notes"}]}]}

Validation is strict because a profile mistake otherwise turns a gate off quietly:
unknown keys anywhere, an unknown tool, a threshold key the tool's judge does not read,
a GPU model or fabric name not declared at the top, a declared model/fabric pair with
no value for a required floor, and a non-positive timeout are all refused. Every
problem is reported at once, each naming its phase, check and key.

Soak semantics: the runner executes the phase's checks ``repeat`` times back to back;
each iteration runs for ``duration_s`` and is judged on its own, and the phase passes
only if every iteration does (an intermittent fault shows up as one bad iteration).
Each check's ``timeout_s`` must therefore be at least ``duration_s``.
"""

from __future__ import annotations

import copy
import difflib
import itertools
import json
import math
from pathlib import Path
from typing import Any, TypeGuard

from .model import CheckSpec, PhaseSpec, ProfileSpec
from .registry import JUDGES, effective_thresholds
from .thresholds import validate_thresholds

DEFAULT_PROFILE = Path(__file__).resolve().parent.parent / "profiles" / "hgx_h100_h200.json"

_TOP = {
    "name",
    "title",
    "version",
    "description",
    "gpu_models",
    "fabrics",
    "phases",
    "after_reboot",
}
AFTER_REBOOT = ("run", "skip")
_PHASE = {"name", "description", "soak", "checks"}
_CHECK = {
    "name",
    "tool",
    "command",
    "timeout_s",
    "required",
    "hardware_evidence",
    "thresholds",
    "notes",
}
_SOAK = {"duration_s", "repeat"}


class ProfileError(ValueError):
    """The profile is invalid; ``problems`` lists every finding, one per line."""

    def __init__(self, origin: str, problems: list[str]):
        self.origin = origin
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(
            f"invalid acceptance profile {origin}: {len(problems)} problem(s)\n{lines}"
        )


def _unknown(data: dict[str, Any], allowed: set[str], where: str) -> list[str]:
    problems = []
    for key in data:
        if key not in allowed:
            hint = difflib.get_close_matches(key, sorted(allowed), n=1)
            problems.append(
                f"{where}: unknown key {key!r}" + (f" (did you mean {hint[0]!r}?)" if hint else "")
            )
    return problems


def _name_list(data: dict[str, Any], key: str) -> tuple[list[str], tuple[str, ...]]:
    value = data.get(key)
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        return [f"profile.{key}: expected a non-empty list of names"], ()
    return [], tuple(value)


def _positive(value: Any) -> TypeGuard[int | float]:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )


def _check(
    raw: Any,
    where: str,
    models: tuple[str, ...],
    fabrics: tuple[str, ...],
    soak: dict[str, Any] | None,
) -> tuple[list[str], CheckSpec | None]:
    if not isinstance(raw, dict):
        return [f"{where}: expected an object"], None
    problems = _unknown(raw, _CHECK, where)
    for key in ("name", "tool", "command"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            problems.append(f"{where}: {key!r} must be a non-empty string")
    for key in ("required", "hardware_evidence"):
        if key in raw and not isinstance(raw[key], bool):
            problems.append(f"{where}: {key!r} must be true or false, got {raw[key]!r}")
    timeout = raw.get("timeout_s")
    if not _positive(timeout):
        problems.append(
            f"{where}: 'timeout_s' must be a positive number of seconds, got {timeout!r}"
        )
    elif soak and _positive(soak.get("duration_s")) and timeout < soak["duration_s"]:
        problems.append(
            f"{where}: timeout_s {timeout} is shorter than the soak duration_s {soak['duration_s']}"
        )
    tool = raw.get("tool")
    if isinstance(tool, str) and tool not in JUDGES:
        hint = difflib.get_close_matches(tool, sorted(JUDGES), n=1)
        problems.append(
            f"{where}: unknown tool {tool!r}"
            + (f" (did you mean {hint[0]!r}?)" if hint else "")
            + f"; tools with a judge: {', '.join(sorted(JUDGES))}"
        )
    if not isinstance(tool, str) or tool not in JUDGES:
        return problems, None
    thresholds = raw.get("thresholds", {})
    judge = JUDGES[tool]
    where_th = f"{where} thresholds"
    problems += validate_thresholds(thresholds, judge.keys, tool, where_th, models, fabrics)
    if validate_thresholds(thresholds, judge.keys, tool, where_th):
        return problems, None  # malformed trees: resolving them would only add noise
    spec = CheckSpec(
        name=str(raw.get("name", "")),
        tool=tool,
        command=raw["command"] if isinstance(raw.get("command"), str) else "",
        thresholds=copy.deepcopy(thresholds),
        timeout_s=float(timeout) if _positive(timeout) else 0.0,
        required=raw.get("required", True),
        hardware_evidence=raw.get("hardware_evidence", False),
        notes=str(raw.get("notes", "")),
    )
    for model, fabric in itertools.product(models, fabrics):
        resolved = effective_thresholds(spec, model, fabric)
        for key, key_spec in judge.keys.items():
            if key_spec.required and key not in resolved:
                problems.append(f"{where_th}.{key}: no value for {model} on {fabric}")
        if judge.validate:
            problems += [
                f"{where} ({model} on {fabric}): {p}" for p in judge.validate(spec, resolved)
            ]
    problems = list(dict.fromkeys(problems))
    return problems, (None if problems else spec)


def _phase(
    raw: Any, where: str, models: tuple[str, ...], fabrics: tuple[str, ...]
) -> tuple[list[str], PhaseSpec | None]:
    if not isinstance(raw, dict):
        return [f"{where}: expected an object"], None
    problems = _unknown(raw, _PHASE, where)
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        problems.append(f"{where}: 'name' must be a non-empty string")
    else:
        where = f"phase {name!r}"
    soak = raw.get("soak")
    if soak is not None:
        if not isinstance(soak, dict):
            problems.append(f"{where}.soak: expected an object with duration_s and repeat")
            soak = None
        else:
            problems += _unknown(soak, _SOAK, f"{where}.soak")
            if not _positive(soak.get("duration_s")):
                problems.append(f"{where}.soak.duration_s: must be a positive number of seconds")
            repeat = soak.get("repeat")
            if not isinstance(repeat, int) or isinstance(repeat, bool) or repeat < 1:
                problems.append(f"{where}.soak.repeat: must be an integer >= 1, got {repeat!r}")
    checks_raw = raw.get("checks")
    if not isinstance(checks_raw, list) or not checks_raw:
        return problems + [f"{where}: 'checks' must be a non-empty list"], None
    checks = []
    for index, item in enumerate(checks_raw):
        label = item.get("name") if isinstance(item, dict) else None
        here = f"{where} check {label!r}" if isinstance(label, str) else f"{where} check #{index}"
        found, spec = _check(item, here, models, fabrics, soak)
        problems += found
        if spec:
            checks.append(spec)
    if problems:
        return problems, None
    return [], PhaseSpec(
        name=str(name),  # a str: anything else was reported above
        checks=tuple(checks),
        description=str(raw.get("description", "")),
        soak=soak is not None,
        duration_s=int(soak["duration_s"]) if soak else None,
        repeat=soak["repeat"] if soak else 1,
    )


def parse_profile(data: Any, origin: str = "<profile>") -> ProfileSpec:
    """Validate a decoded profile and build the ProfileSpec; raises ProfileError."""
    if not isinstance(data, dict):
        raise ProfileError(origin, [f"expected a JSON object, got {type(data).__name__}"])
    problems = _unknown(data, _TOP, "profile")
    for key in ("name", "title"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            problems.append(f"profile.{key}: must be a non-empty string")
    version = data.get("version", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        problems.append(f"profile.version: must be an integer >= 1, got {version!r}")
    after_reboot = data.get("after_reboot", "run")
    if after_reboot not in AFTER_REBOOT:
        problems.append(
            f"profile.after_reboot: must be 'run' (a stateless node's reboot runs the gates) "
            f"or 'skip' (it returns to service once it phoned home), got {after_reboot!r}"
        )
    found, models = _name_list(data, "gpu_models")
    problems += found
    found, fabrics = _name_list(data, "fabrics")
    problems += found
    phases_raw = data.get("phases")
    if not isinstance(phases_raw, list) or not phases_raw:
        raise ProfileError(origin, problems + ["profile.phases: must be a non-empty list"])
    phases = []
    for index, raw in enumerate(phases_raw):
        found, phase = _phase(raw, f"phase #{index}", models, fabrics)
        problems += found
        if phase:
            phases.append(phase)
    for what, names in (
        ("phase", [p.name for p in phases]),
        ("check", [c.name for p in phases for c in p.checks]),
    ):
        problems += [
            f"{what} name {n!r} is used more than once"
            for n in sorted({n for n in names if names.count(n) > 1})
        ]
    if problems:
        raise ProfileError(origin, problems)
    return ProfileSpec(
        name=data["name"],
        title=data["title"],
        phases=tuple(phases),
        gpu_models=models,
        fabrics=fabrics,
        description=str(data.get("description", "")),
        version=version,
        after_reboot=after_reboot,
    )


def load_profile(path: str | Path = DEFAULT_PROFILE) -> ProfileSpec:
    """Read and validate a profile file; every problem is in the ProfileError message."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ProfileError(str(path), [f"cannot read the file: {exc.strerror or exc}"])
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProfileError(
            str(path), [f"not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"]
        )
    return parse_profile(data, path.name)
