"""The evidence bundle of a case: one tar.gz a vendor's RMA desk accepts without asking
twice. `manifest.json` names the case, the node (identity, location, hardware and firmware
facts) and every other file with its sha256, so what was sent can be proven later."""

from __future__ import annotations

import hashlib
import io
import json
import re
import tarfile
from typing import Any

from django.utils import timezone

from consoles import selectors as consoles
from inventory.models import LifecycleEvent
from inventory.notify import node_data
from validation.models import CheckResult, GateRun

from . import notify, selectors
from .models import Case, CaseEvent


def filename(case: Case) -> str:
    return f"rma-{case.pk}-{case.node.hostname}-evidence.tar.gz"


def _json(value: Any) -> bytes:
    return (json.dumps(value, indent=2, sort_keys=True, default=str) + "\n").encode()


def _slug(*parts: object) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", "-".join(str(p) for p in parts)).strip("-")


def files(case: Case) -> dict[str, bytes]:
    """Every file of the bundle but the manifest, by path."""
    out: dict[str, bytes] = {}
    run, _ = selectors.evidence_run(case)
    if run is not None:
        results = list(run.results.order_by("created", "id"))
        out["gate-run/summary.json"] = _json(_run_summary(run, results))
        for result in results:
            if result.status != selectors.FAILED:
                continue
            base = "gate-run/failing/" + _slug(result.phase, result.check_name, result.iteration)
            out[f"{base}/command.txt"] = (result.command + "\n").encode()
            out[f"{base}/stdout.txt"] = result.stdout.encode()
            out[f"{base}/stderr.txt"] = result.stderr.encode()
            out[f"{base}/verdict.json"] = _json(_verdict(result))
        xids = selectors.xid_lines([r.stdout for r in results])
        out["xid-lines.txt"] = "".join(f"{line}\n" for line in xids).encode()
    events = LifecycleEvent.objects.filter(node_id=case.node_id).order_by("created", "id")
    out["node/lifecycle.json"] = _json(
        [
            {
                "at": e.created,
                "from": e.from_state,
                "to": e.to_state,
                "event": e.event,
                "actor": e.actor,
                "reason": e.reason,
            }
            for e in events
        ]
    )
    out.update(_consoles(case))
    history = CaseEvent.objects.filter(case=case).order_by("created", "id")
    out["case/history.json"] = _json(
        [
            {
                "at": e.created,
                "kind": e.kind,
                "actor": e.actor,
                "from": e.from_status,
                "to": e.to_status,
                "note": e.note,
                "changes": e.changes,
            }
            for e in history
        ]
    )
    return out


def _consoles(case: Case) -> dict[str, bytes]:
    """The node's recorded consoles (its last deploys and gate runs), as the machine wrote
    them, and an index saying when each was recorded, why it ended and what scrolled away."""
    out: dict[str, bytes] = {}
    index = []
    for log in consoles.logs_of(case.node_id):
        path = "console/" + _slug(log.started.strftime("%Y%m%dT%H%M%SZ"), log.state, log.pk)
        out[f"{path}.log"] = consoles.output(log)
        index.append(
            {
                "file": f"{path}.log",
                "state": log.state,
                "operation": log.operation_id,
                "started": log.started,
                "ended": log.ended,
                "end_reason": log.end_reason,
                "bytes_written": log.total_bytes,
                "bytes_not_kept": log.dropped_bytes,
            }
        )
    if index:
        out["console/index.json"] = _json(index)
    return out


def _run_summary(run: GateRun, results: list[CheckResult]) -> dict[str, Any]:
    return {
        "id": run.pk,
        "profile": run.profile.name,
        "status": run.status,
        "reason": run.outcome_reason,
        "findings": run.evidence,
        "started": run.started,
        "finished": run.finished,
        "checks": [
            {
                "phase": r.phase,
                "check": r.check_name,
                "tool": r.tool,
                "iteration": r.iteration,
                "status": r.status,
                "reason": r.reason,
                "exit_code": r.exit_code,
                "duration_s": r.duration_s,
                "hardware_fault": r.hardware_fault,
            }
            for r in results
        ],
    }


def _verdict(result: CheckResult) -> dict[str, Any]:
    return {
        "check": result.check_name,
        "tool": result.tool,
        "status": result.status,
        "reason": result.reason,
        "hardware_fault": result.hardware_fault,
        "exit_code": result.exit_code,
        "metrics": result.metrics,
        "evidence": result.evidence,
        "facts": result.facts,
    }


def manifest(case: Case, contents: dict[str, bytes]) -> dict[str, Any]:
    """The case and its node as the webhooks describe them (one description of each), plus
    what only a vendor needs: the node's model and facts, and a checksum per file."""
    node = case.node
    return {
        "generated": timezone.now(),
        "case": notify.case_data(case),
        "node": {
            **node_data(node),
            "model": node.model,
            "gpu_model": node.gpu_model,
            "gpu_count": node.gpu_count,
            "hardware_facts": node.hardware_facts,
            "firmware_facts": node.firmware_facts,
            "observed_facts": node.observed_facts,
        },
        "files": [
            {"path": path, "sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
            for path, data in sorted(contents.items())
        ],
    }


def bundle(case: Case) -> bytes:
    contents = files(case)
    entries = {"manifest.json": _json(manifest(case, contents)), **contents}
    buffer = io.BytesIO()
    now = int(timezone.now().timestamp())
    top = _slug("rma", case.pk)
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path, data in entries.items():
            info = tarfile.TarInfo(f"{top}/{path}")
            info.size, info.mtime, info.mode = len(data), now, 0o644
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()
