"""Helpers of the fault tests: act through the production web server, wait for work."""

import time

import requests

from inventory.models import Node, Operation


def act(corral_web: str, token: str, node: Node, action: str) -> int:
    resp = requests.post(
        f"{corral_web}/api/v1/nodes/{node.pk}/actions/{action}/",
        json={},
        headers={"Authorization": f"Token {token}"},
        timeout=30,
    )
    assert resp.status_code == 202, resp.text
    return resp.json()["id"]


def wait_running(op_id: int, timeout: float = 30) -> Operation:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        op = Operation.objects.get(pk=op_id)
        if op.status == "running" and op.progress >= 30:
            return op
        time.sleep(0.1)
    raise AssertionError(f"operation {op_id} never got going: {op.status} {op.message}")


def assert_invariants(*workers) -> None:
    """What must hold after any fault, once the dust has settled (issue #15): no node in a
    transitional state without a deadline, no operation active without a way to end, no
    lock held for an operation that ended, no lifecycle event lost, the workers alive."""
    from datetime import timedelta

    from django.utils import timezone

    from inventory.choices import FINISHED_OPERATION_STATUSES, TRANSITIONAL_STATES

    stuck = Node.objects.filter(state__in=TRANSITIONAL_STATES, deadline__isnull=True)
    assert not stuck.exists(), list(stuck)
    # Work a worker accepted in its last commit is sent by that commit's hook a moment
    # later (an admission after passing gates): the dust settles once it is.
    taskless = Operation.objects.filter(status="pending", task_id="", parent__isnull=True).exclude(
        task_name=""
    )
    deadline = time.monotonic() + 10
    while taskless.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not taskless.exists(), list(taskless)
    # The workers of these tests beat every 0.5 s: a run silent for 10 s is gone unnoticed.
    silent = Operation.objects.filter(
        status="running", heartbeat__lt=timezone.now() - timedelta(seconds=10)
    ).exclude(worker="")
    assert not silent.exists(), list(silent)
    held = Node.objects.filter(lock_operation__status__in=list(FINISHED_OPERATION_STATUSES))
    assert not held.exists(), list(held)
    for node in Node.objects.all():
        last = node.events.order_by("-pk").first()
        assert last is None or last.to_state == node.state, (node, node.state, last)
    for worker in workers:
        assert worker.process.poll() is None, worker.output()[-3000:]
