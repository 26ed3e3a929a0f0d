"""Two nodes behind one BMC (a multi-node chassis): their firmware updates take turns.
A waiting update keeps its node and is asked again each poll, for as long as an update may
take, not for the BMC's retries."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import transaction

from converge import firmware
from inventory import operations, services
from inventory.models import Operation
from provisioning.runner import Busy
from tests.converge.test_firmware_flow import artifact, node  # noqa: F401
from tests.factories import NodeFactory
from tests.peers.util import wait_until
from tests.workers import wait_operation

pytestmark = pytest.mark.django_db(transaction=True)


def running(target):
    """An update begun by a worker of the test's own: claimed before its message is sent
    (on commit), so the session's real worker never wins it first (it did, once, on a
    loaded machine)."""
    with transaction.atomic():
        op = services.start_action(target, "apply_firmware", actor="user:tech")
        assert operations.begin_operation(op, worker="celery@w pid 1")
    op.refresh_from_db()
    return op


@pytest.fixture
def sibling(node):  # noqa: F811
    """A second node of the same chassis: the same BMC address."""
    return NodeFactory(rack=node.rack, model="FX-1", state="ready", bmc__address=node.bmc.address)


@pytest.fixture
def images(updating_bmc, settings):
    settings.CORRAL_CONVERGE_POLL_SECONDS = 0.05  # the test BMC's tasks end in two polls
    bmc = artifact(updating_bmc, "BMC", "1.52.00", "immediate")
    artifact(updating_bmc, "GPU*", "96.00.A6.00.01", "reset", installs="GPU0")
    return bmc


@pytest.mark.slow  # 3 s on its own (docs/testing.md: Markers)
def test_an_update_waits_while_another_runs_through_the_same_bmc(
    updating_bmc,
    node,  # noqa: F811
    sibling,
    images,
):
    first, second = running(node), running(sibling)
    operations.report_progress(first, 5, "updating BMC to 1.52.00")  # it holds the BMC

    with pytest.raises(Busy) as waiting:
        firmware.apply(sibling, second)
    assert f"({node}, operation #{first.pk}); this one waits for it" in str(waiting.value)
    assert updating_bmc.tasks == {}  # nothing was sent to the BMC

    operations.finish_operation(first, "succeeded")
    done = until_done(sibling, second)
    assert done["updated"]["BMC"] == ["1.45.00", "1.52.00"]
    sent = [b["ImageURI"] for p, b in updating_bmc.sent("POST") if "SimpleUpdate" in p]
    assert sent[0] == images


def until_done(target, op) -> dict:
    """Run the step as the runner does: again each time it waits for the BMC's task."""
    for _ in range(50):
        try:
            return firmware.apply(target, op)
        except Busy as busy:
            assert "the BMC's task" in busy.message, busy.message
    raise AssertionError("the update did not end in 50 runs")


def behind_another(api, node, sibling):  # noqa: F811
    """An update runs through the BMC for `node`; one for its sibling is asked for through
    the API: (the first operation, the second's id)."""
    first = running(node)
    operations.report_progress(first, 5, "updating BMC to 1.52.00")  # it holds the BMC
    resp = api("technician").post(
        f"/api/v1/nodes/{sibling.pk}/actions/apply_firmware/", {}, format="json"
    )
    assert resp.status_code == 202, resp.content
    return first, resp.data["id"]


def test_a_waiting_update_outlasts_the_bmc_retries_and_runs_once_its_turn_comes(
    api,
    updating_bmc,
    node,  # noqa: F811
    sibling,
    images,
    celery_worker,
):
    first, second = behind_another(api, node, sibling)
    # It is sent again each poll while the other runs (each send stamps `sent`), and
    # stays waiting, its attempts uncounted: the worker's two BMC retries
    # (tests/workers.py) would be spent by the third.
    sends: set = set()

    def sent_again() -> bool:
        op = Operation.objects.get(pk=second)
        assert not op.is_finished, op.error
        if "waits for it" in op.message:
            assert op.status == "running" and op.attempts == 0
            sends.add(op.sent)
        return len(sends) >= 4

    wait_until(sent_again, timeout=30, what="the waiting update sent again")
    assert updating_bmc.tasks == {}

    operations.finish_operation(first, "succeeded")
    op = wait_operation(second, timeout=60)
    assert op.status == "succeeded", op.error
    assert op.result["updated"]["BMC"] == ["1.45.00", "1.52.00"]


def test_a_wait_past_its_patience_fails_naming_what_it_waited_for(
    api,
    updating_bmc,
    node,  # noqa: F811
    sibling,
    images,
    celery_worker,
):
    first, second = behind_another(api, node, sibling)
    wait_until(lambda: "waits for it" in Operation.objects.get(pk=second).message, timeout=30)
    # Five hours on: past CORRAL_CONVERGE_BMC_WAIT_SECONDS (4 h) at its next turn.
    started = Operation.objects.get(pk=second).started
    Operation.objects.filter(pk=second).update(started=started - timedelta(hours=5))
    op = wait_operation(second, timeout=60)
    assert op.status == "failed"
    assert f"another firmware update runs through this BMC ({node}, operation #{first.pk})" in (
        op.error
    )
    assert "gave up after waiting" in op.error
    assert updating_bmc.tasks == {}
    operations.finish_operation(first, "succeeded")  # the worker goes quiet at once
