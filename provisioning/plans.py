"""A deploy operation's steps, as the API and the node page show a flow's steps
(engine.plans): the one-time network boot, the power-on, and the phone-home that ends the
deployment after the operation itself has succeeded (its gates start there). They are read
from the operation and its Deployment row, which record each as it happens."""

from __future__ import annotations

from typing import Any

from engine.choices import FINISHED_OPERATION_STATUSES
from engine.plans import StepView

from .deployments import PXE_SET
from .models import Deployment, DeploymentStatus

ENDS = {
    "network boot": "the BMC took the one-time PXE boot",
    "power on": "the BMC reports the node on",
    "phone-home": "the booted image calls back with its token",
}


def deploy_steps(ops: list[Any]) -> dict[int, list[StepView]]:
    """Each deploy operation's steps, from its latest deployment: a list in one query."""
    latest: dict[int, Deployment] = {}
    for row in Deployment.objects.filter(operation_id__in=[op.pk for op in ops]).order_by("pk"):
        latest[row.operation_id or 0] = row
    return {op.pk: _steps(op, latest.get(op.pk)) for op in ops}


def _steps(op: Any, deployment: Deployment | None) -> list[StepView]:
    powered = deployment is not None and deployment.boot_started is not None
    booted = powered or op.progress >= PXE_SET  # the deploy reports this once PXE is set
    states = [
        _bmc_step(op, done=booted, started=True),
        _bmc_step(op, done=powered, started=booted),
        _phone_home(op, deployment, powered),
    ]
    return [
        StepView(name, status, message, None, None, None, ENDS[name], "")
        for name, (status, message) in zip(ENDS, states, strict=True)
    ]


def _bmc_step(op: Any, done: bool, started: bool) -> tuple[str, str]:
    if done:
        return "succeeded", ""
    if op.status in FINISHED_OPERATION_STATUSES:
        return (op.status, op.error) if started else ("not run", "")
    return ("running", op.message) if started else ("planned", "")


def _phone_home(op: Any, deployment: Deployment | None, powered: bool) -> tuple[str, str]:
    if deployment is None or not powered:
        return ("not run", "") if op.status in FINISHED_OPERATION_STATUSES else ("planned", "")
    if deployment.status == DeploymentStatus.SUCCEEDED:
        return "succeeded", f"phoned home at {deployment.phoned_home:%H:%M:%S} UTC"
    if deployment.status == DeploymentStatus.WAITING:
        return "running", f"waiting until {deployment.deadline:%H:%M} UTC"
    return "failed", deployment.error or str(deployment.status)
