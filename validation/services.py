"""Gate runs: phases of checks executed on the node over SSH, judged, and turned into a
lifecycle verdict (admit, fail, or RMA with evidence).

A run advances one step per Celery task (a phase, or one soak iteration) and enqueues
the next step itself, so an hours-long burn-in never needs a long ETA; a step sent twice
(the sweep resending one whose message was lost) is recognised by its step number and
skipped.
"""

from __future__ import annotations

import logging
from dataclasses import asdict
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from inventory import facts as observed
from inventory import operations
from inventory import services as inventory
from inventory.choices import NodeState, OperationStatus
from inventory.lifecycle import IllegalTransition, transition
from inventory.models import LifecycleEvent, Node, Operation
from inventory.notify import absolute_url, node_data
from provisioning import draining
from provisioning.models import DeploymentStatus
from provisioning.selectors import latest_deployment
from webhooks import outbox

from . import attest, metrics, ssh, steps
from .models import CheckResult, GateProfile, GateRun, NodeHostKey, RunStatus
from .verdicts import NodeContext, Verdict, classify_run, judge_output, parse_profile
from .verdicts.model import FAIL, RUN_PASS, RUN_RMA, CheckSpec, PhaseSpec, ProfileSpec
from .verdicts.registry import verdict_for_error

log = logging.getLogger(__name__)
# A step saves only what it advances: a full save() would overwrite a cancel request
# written by the API while the step was running.
PROGRESS_FIELDS = [
    "steps_done",
    "phase_index",
    "iteration",
    "soak_started",
    "soak_until",
    "soak_failures",
]


class NoProfile(Exception):
    pass


def default_profile() -> GateProfile:
    profile = GateProfile.objects.filter(is_default=True).first()
    if profile is None:
        raise NoProfile("no default gate profile; mark one is_default in the admin or API")
    return profile


def node_context(node: Node) -> NodeContext:
    deployment = latest_deployment(node)
    baseline = (
        deployment.image.baseline
        if deployment is not None and deployment.status == DeploymentStatus.SUCCEEDED
        else {}
    )
    return NodeContext(
        hostname=node.hostname,
        gpu_model=node.gpu_model,
        gpu_count=node.gpu_count,
        fabric=node.effective_fabric,
        expected={k: str(v) for k, v in baseline.items() if isinstance(v, str | int | float)},
    )


def cordon_for_burn_in(op: Operation) -> None:
    """validate on an in-service node (a burn-in without reimage): cordon it in the
    scheduler first, so no new job lands on it while the gates run."""
    if op.node is None:
        return  # nothing to cordon (start_gate never sends one without a node)
    started = LifecycleEvent.objects.filter(operation=op, event="validate").first()
    if started is not None and started.from_state == NodeState.IN_SERVICE:
        draining.cordon_for_burn_in(op.node, f"burn-in: {op.message or 'gates re-run'}")
    elif (op.params or {}).get("after") == "reboot":
        # A stateless node that rebooted out of service: its scheduler may take it back
        # as soon as it boots (slurmd's ReturnToService); not before its gates (reboots.py).
        rebooted = (
            LifecycleEvent.objects.filter(node=op.node, event="rebooted").order_by("-pk").first()
        )
        if rebooted is not None and rebooted.from_state == NodeState.IN_SERVICE:
            draining.cordon_for_burn_in(op.node, "rebooted on its own: its gates run again")


def start_gate_run(node: Node, op: Operation, profile: GateProfile | None = None) -> GateRun:
    """Begin a run for a node that is `validating` (called in a task under the node lock)."""
    profile = profile or default_profile()
    context = node_context(node)
    with transaction.atomic():
        GateRun.objects.filter(node=node, status=RunStatus.RUNNING).update(
            status=RunStatus.CANCELLED,
            finished=timezone.now(),
            outcome_reason="superseded by a new gate run",
        )
        run = GateRun.objects.create(
            node=node,
            profile=profile,
            spec=attest.with_attestation(profile.spec, node),
            context=asdict(context),
            operation=op,
        )
        steps.queue_step(run, 0)
    return run


def ssh_target(node: Node) -> ssh.SSHTarget:
    nic = node.interfaces.filter(boot=True).first() or node.interfaces.first()
    host = (nic.ip if nic and nic.ip else None) or node.hostname
    known = NodeHostKey.objects.filter(node=node).values_list("key", flat=True).first()
    return ssh.SSHTarget(
        host=host,
        port=settings.CORRAL_SSH_PORT,
        username=settings.CORRAL_SSH_USER,
        key=settings.CORRAL_SSH_KEY_PATH,
        known_host_key=known,
        connect_timeout=settings.CORRAL_SSH_CONNECT_TIMEOUT,
    )


def _cap(text: str) -> str:
    cap = settings.CORRAL_GATE_OUTPUT_CAP
    return text if len(text) <= cap else text[:cap] + f"\n[corral: stored first {cap} chars]"


def _run_phase(run: GateRun, node: Node, phase: PhaseSpec, context: NodeContext) -> list[Verdict]:
    verdicts: list[Verdict] = []
    for check in phase.checks:
        if check.tool in attest.LOCAL_TOOLS:  # judged from evidence already here
            verdict = attest.run_check(check, node)
            _store(run, phase.name, check, verdict, None)
            verdicts.append(verdict)
    remote = [c for c in phase.checks if c.tool not in attest.LOCAL_TOOLS]
    if not remote:
        return verdicts
    target = ssh_target(node)
    try:
        with ssh.Session(target) as session:
            if target.known_host_key is None:
                NodeHostKey.objects.get_or_create(node=node, defaults={"key": session.host_key})
            for check in remote:
                command, missing = _command_for(check.command, node, target)
                if missing:
                    verdict = verdict_for_error(check, missing)
                    _store(run, phase.name, check, verdict, None)
                    verdicts.append(verdict)
                    continue
                result = session.run(command, timeout_s=check.timeout_s)
                if result.timed_out:
                    verdict = verdict_for_error(check, f"timed out after {check.timeout_s:g} s")
                elif result.exit_code not in (0, None) and not result.stdout.strip():
                    verdict = verdict_for_error(check, result.reason or "no output")
                else:
                    verdict = judge_output(
                        check, result.stdout, context, result.stderr, result.exit_code
                    )
                _store(run, phase.name, check, verdict, result)
                verdicts.append(verdict)
    except ssh.SSHError as exc:
        # No connection, or the node's host key changed: every check of the phase fails
        # with that reason, none is run.
        for check in remote:
            verdict = verdict_for_error(check, str(exc))
            _store(run, phase.name, check, verdict, None)
            verdicts.append(verdict)
    return verdicts


def _command_for(command: str, node: Node, target: ssh.SSHTarget) -> tuple[str, str]:
    """Fill {node} and {peer}; a peer comes from the node's `peer=<hostname>` label."""
    peer = next(
        (lb.name.split("=", 1)[1] for lb in node.labels.all() if lb.name.startswith("peer=")), None
    )
    if "{peer}" in command and not peer:
        return command, "needs a peer node: give this node a label peer=<hostname>"
    return command.replace("{node}", target.host).replace("{peer}", peer or ""), ""


def _store(
    run: GateRun, phase: str, check: CheckSpec, verdict: Verdict, result: ssh.RunResult | None
) -> None:
    CheckResult.objects.create(
        run=run,
        phase=phase,
        check_name=check.name,
        tool=check.tool,
        iteration=run.iteration,
        command=check.command,
        exit_code=result.exit_code if result else None,
        stdout=_cap(result.stdout) if result else "",
        stderr=_cap(result.stderr) if result else "",
        duration_s=result.duration_s if result else 0.0,
        status=verdict.status,
        reason=verdict.reason,
        required=check.required,
        hardware_fault=verdict.hardware_fault,
        metrics=verdict.metrics,
        evidence=verdict.evidence,
        facts=verdict.facts,
    )


def _all_verdicts(run: GateRun) -> list[Verdict]:
    return [
        Verdict(
            status=r.status,
            reason=r.reason,
            metrics=r.metrics,
            hardware_fault=r.hardware_fault,
            evidence=r.evidence,
            facts=r.facts,
            check=r.check_name,
            required=r.required,
        )
        for r in run.results.all()
    ]


def gate_step(run_id: int, step: int) -> str:
    """Run one step of a gate run; enqueue the next or finish the run."""
    run = GateRun.objects.select_related("node__rack", "operation").filter(pk=run_id).first()
    if run is None or run.status != RunStatus.RUNNING or run.steps_done != step:
        return "skipped"
    steps.step_started(run_id, step)
    node = run.node
    if run.cancel_requested:
        return _finish(run, RunStatus.CANCELLED, f"cancelled by {run.cancel_requested}")
    spec = parse_profile(run.spec)
    phase = spec.phases[run.phase_index]
    context = NodeContext(**run.context)
    if phase.soak and run.soak_started is None:
        now = timezone.now()
        # Planned end, for the progress bar: `repeat` back-to-back iterations.
        planned = (phase.duration_s or 0) * phase.repeat
        run.soak_started, run.soak_until = now, now + timedelta(seconds=planned)
    if run.operation is not None:  # loaded with the run (select_related): no query
        operations.report_progress(
            run.operation,
            progress(run, spec),
            f"{phase.name} (iteration {run.iteration + 1})" if phase.soak else phase.name,
        )
    verdicts = _run_phase(run, node, phase, context)
    failed = [v for v in verdicts if v.status == FAIL and (v.required or v.hardware_fault)]
    run.steps_done += 1
    if failed:
        run.soak_failures += int(phase.soak)
        run.save(update_fields=PROGRESS_FIELDS)
        return _conclude(run)
    if phase.soak and run.iteration + 1 < phase.repeat:
        run.iteration += 1
    else:
        run.phase_index += 1
        run.iteration = 0
        if run.phase_index >= len(spec.phases):
            run.save(update_fields=PROGRESS_FIELDS)
            return _conclude(run)
    run.save(update_fields=PROGRESS_FIELDS)
    steps.queue_step(run, run.steps_done)
    return "next"


def progress(run: GateRun, spec: ProfileSpec | None = None) -> int:
    spec = spec or parse_profile(run.spec)
    phases = len(spec.phases) or 1
    done: float = run.phase_index  # phases done, plus the part of a soak under way
    if run.soak_until and run.soak_started and run.phase_index < phases:
        total = (run.soak_until - run.soak_started).total_seconds() or 1
        elapsed = (timezone.now() - run.soak_started).total_seconds()
        done += min(1.0, elapsed / total)
    return int(100 * done / phases)


def _conclude(run: GateRun) -> str:
    outcome = classify_run(_all_verdicts(run))
    run.evidence = outcome.hardware_evidence + outcome.notes
    status = {RUN_PASS: RunStatus.PASSED, RUN_RMA: RunStatus.RMA}.get(
        outcome.status, RunStatus.FAILED
    )
    return _finish(run, status, outcome.reason)


def _finish(run: GateRun, status: str, reason: str) -> str:
    node = run.node
    now = timezone.now()
    gate_facts: dict[str, Any] = {}
    checks = []
    for result in run.results.all():
        gate_facts.update(result.facts or {})
        checks.append((result.tool, result.status))
    facts = {**(node.observed_facts or {}), **gate_facts}
    with transaction.atomic():
        GateRun.objects.filter(pk=run.pk).update(
            status=status,
            outcome_reason=reason,
            finished=now,
            evidence=run.evidence,
            steps_done=run.steps_done,
            phase_index=run.phase_index,
            iteration=run.iteration,
            soak_failures=run.soak_failures,
        )
        Node.objects.filter(pk=node.pk).update(observed_facts=facts, observed_at=now)
        observed.record(node, "gate", observed.lenient(gate_facts), at=now)
        transaction.on_commit(lambda: metrics.run_ended(status, run.started, now, checks))
        node.refresh_from_db()
        try:
            if status == RunStatus.PASSED:
                transition(
                    node, "admit", "system", f"gates passed: {reason}", operation=run.operation
                )
                # Only now, in service, may the scheduler run jobs on it: the admission
                # commits with the transition and resumes the node in the scheduler.
                draining.request_admission(
                    node,
                    parent_id=run.operation.parent_id if run.operation is not None else None,
                    take_from=f"gate run {run.pk} step ",
                )
            elif status == RunStatus.RMA:
                transition(node, "hardware_fault", "system", reason, operation=run.operation)
                # Opens the RMA case; it reads this run (committed with it) as its evidence.
                inventory.apply_effect("rma", node, actor="system", reason=reason)
            elif node.state == NodeState.VALIDATING:
                transition(
                    node, "fail", "system", f"gate {status}: {reason}", operation=run.operation
                )
        except IllegalTransition as exc:
            log.warning("gate run %s finished but node moved on: %s", run.pk, exc)
        if run.operation is not None:
            operations.finish_operation(
                run.operation,
                OperationStatus.SUCCEEDED if status == RunStatus.PASSED else OperationStatus.FAILED,
                error="" if status == RunStatus.PASSED else reason,
                result={"gate_run": run.pk, "status": status},
            )
        outbox.emit(
            "gate.finished",
            lambda: {
                "gate_run": run.pk,
                "status": status,
                "reason": reason,
                "profile": run.profile.name,
                "node": node_data(node),
                "url": absolute_url(reverse("api:gaterun-detail", args=[run.pk])),
            },
        )
    return status


def abort_run(run_id: int, reason: str) -> None:
    """A step died (time limit, bug): the run ends failed with the reason, never hangs."""
    run = (
        GateRun.objects.select_related("node", "operation")
        .filter(pk=run_id, status=RunStatus.RUNNING)
        .first()
    )
    if run is not None:
        _finish(run, RunStatus.FAILED, reason)


def request_cancel(run: GateRun, actor: str) -> None:
    GateRun.objects.filter(pk=run.pk, status=RunStatus.RUNNING).update(cancel_requested=actor)
