"""Acceptance judgement: parsed tool output + thresholds + node context -> verdicts.

Pure functions and dataclasses, no Django: the same code judges in a worker, in a
management command, or on a bare host, and it is tested from recorded outputs alone.

The pieces
==========

- ``CheckSpec``: one check as data (tool, command, thresholds, timeout, required,
  hardware_evidence). Profiles (``load_profile``) are lists of phases of checks.
- ``NodeContext``: the node as the control plane knows it (hostname, GPU model, GPU
  count, fabric, expected baseline versions such as ``{"driver": "550.90.07"}``).
- ``judge(spec, parsed_result, context) -> Verdict``: one judge per tool, chosen by
  ``spec.tool``. A verdict is ``pass``/``degraded``/``fail`` with ONE human reason
  line, metrics, full evidence lines, ``hardware_fault``, and ``facts`` (versions,
  UUIDs, serials, VBIOS: what the tool saw, for drift tracking).
- ``classify_run(verdicts) -> RunOutcome``: ``rma`` if any verdict convicts the
  hardware, else ``fail`` if a required check failed, else ``pass`` (degraded noted).

Threshold resolution
====================

Thresholds are plain JSON. Each key maps to either a value (the same for every node)
or a rule node with up to three scopes::

    "busbw_inplace_at_max_gbps": {
        "default": 300,                                   # any model, any fabric
        "fabric": {"tcpxo": 300},                         # any model on this fabric
        "gpu_model": {
            "H100-SXM": {"default": 430,                  # this model, any fabric
                         "fabric": {"ib-400g": 430, "tcpxo": 300}},  # model + fabric
            "H200-SXM": 430},                             # shorthand: model, any fabric
        "source": "why these numbers"}

For a node the most specific scope present wins::

    gpu_model + fabric  >  gpu_model (default)  >  fabric  >  default

Names match case-insensitively. Any value may be written ``{"value": 430, "source":
"..."}`` so each number carries where it came from; ``source`` is ignored by
resolution. ``null`` at the winning scope means "this rule is off here" (it does not
fall through to a less specific scope). A key with no applicable scope is left out
of the resolved dict; if the judge needs it (a floor), the verdict is a fail, never
a silent pass. Each judge lists the keys it reads; any other key is refused when the
profile loads, so a typo cannot disable a gate.

Hardware faults
===============

Only a tool that names a broken part convicts hardware: a missing GPU, uncorrectable
ECC, a pending/failed row remap, an XID in the reset/reboot/RMA classes, a DCGM
hardware test Fail, gpu-burn FAULTY. A number under a floor is a ``fail`` for a
human, not an RMA. And a judge's hardware finding only counts when the check is
marked ``hardware_evidence`` in its profile.
"""

from __future__ import annotations

from .judging import Findings, Judge
from .model import (
    DEGRADED,
    FAIL,
    PASS,
    RUN_FAIL,
    RUN_PASS,
    RUN_RMA,
    CheckSpec,
    NodeContext,
    PhaseSpec,
    ProfileSpec,
    RunOutcome,
    Verdict,
)
from .outcome import classify_run
from .profile import DEFAULT_PROFILE, ProfileError, load_profile, parse_profile
from .registry import (
    JUDGES,
    ThresholdError,
    effective_thresholds,
    judge,
    judge_for,
    judge_output,
    verdict_for_error,
)
from .thresholds import KeySpec, resolve_thresholds

__all__ = [
    "DEFAULT_PROFILE",
    "DEGRADED",
    "FAIL",
    "JUDGES",
    "PASS",
    "RUN_FAIL",
    "RUN_PASS",
    "RUN_RMA",
    "CheckSpec",
    "Findings",
    "Judge",
    "KeySpec",
    "NodeContext",
    "PhaseSpec",
    "ProfileError",
    "ProfileSpec",
    "RunOutcome",
    "ThresholdError",
    "Verdict",
    "classify_run",
    "effective_thresholds",
    "judge",
    "judge_for",
    "judge_output",
    "load_profile",
    "parse_profile",
    "resolve_thresholds",
    "verdict_for_error",
]
