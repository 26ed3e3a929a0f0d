"""PostgreSQL connections cut mid-transaction (`pg_terminate_backend`, as a failover or an
operator would): an operation in flight ends with a reason, requests get an answer that
is true (accepted, refused, or 503 with Retry-After, never a 500), nothing accepted is
lost and the worker keeps working."""

import threading
import time

import pytest
import requests
from django.db import connection

from inventory.choices import TRANSITIONAL_STATES
from inventory.models import Node, Operation
from tests.factories import NodeFactory, RackFactory, SiteFactory, api_token
from tests.faults.helpers import act, assert_invariants, wait_running
from tests.workers import start_worker, stop_worker, wait_operation

pytestmark = [pytest.mark.slow, pytest.mark.postgresql, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def corral_web_clean_log() -> bool:
    return False  # connections are cut under it on purpose: it logs what it lost


def cut_corral_connections() -> int:
    """Terminate every session of the web server and the workers (not the test's own)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() "
            "AND application_name IN ('corral-web', 'corral-worker')"
        )
        return cursor.fetchone()[0]


def test_connections_cut_mid_operation_end_it_with_a_reason_and_work_goes_on(
    corral_web, users, slow_bmc_node, worker_env, faulty_redfish, tmp_path
):
    token = api_token(users["technician"])
    worker = start_worker(worker_env, tmp_path / "worker.log")
    try:
        op_id = act(corral_web, token, slow_bmc_node, "inspect")
        wait_running(op_id)
        assert cut_corral_connections() >= 1
        op = wait_operation(op_id, timeout=60)
        row = Node.objects.get(pk=slow_bmc_node.pk)
        if op.status == "succeeded":
            assert row.state == "ready"
        else:
            assert op.error and row.state == "failed" and row.failure_reason == op.error
        assert (row.reservation, row.lock_operation_id) == (None, None)
        assert worker.process.poll() is None

        power = wait_operation(act(corral_web, token, slow_bmc_node, "power_on"), timeout=60)
        assert power.status == "succeeded", f"{power.error}\n{worker.output()[-3000:]}"
        assert_invariants(worker)
    finally:
        stop_worker(worker)
    assert "Unrecoverable error" not in worker.output()


def test_requests_while_connections_are_cut_get_true_answers(
    corral_web, users, worker_env, sushy_emulator_factory, tmp_path
):
    emulator = sushy_emulator_factory(systems=4)
    rack = RackFactory(site=SiteFactory(slug="dc1", name="DC one"))
    nodes = [
        NodeFactory(
            rack=rack,
            bmc__address=emulator.address,
            bmc__system_id=system.uuid,
            bmc__username="admin",
            bmc__password="pw",
            bmc__verify_tls=False,
        )
        for system in emulator.systems
    ]
    token = api_token(users["technician"])
    answers: list[tuple[int, int, dict]] = []
    stop = threading.Event()
    cut: list[int] = []

    def cutter() -> None:
        """Two failovers while the clicks go on: each ends every session the server holds."""
        for pause in (0.5, 1.5):
            if stop.wait(pause):
                break
            cut.append(cut_corral_connections())
        connection.close()

    def clicks(node: Node) -> None:
        """A technician clicking "power on" again and again while the database flaps: a
        503 says try again (with Retry-After), a 409 that it is already under way."""
        with requests.Session() as http:
            for _ in range(15):
                resp = http.post(
                    f"{corral_web}/api/v1/nodes/{node.pk}/actions/power_on/",
                    json={},
                    headers={"Authorization": f"Token {token}"},
                    timeout=60,
                )
                json_body = resp.headers.get("content-type", "").startswith("application/json")
                answers.append((node.pk, resp.status_code, resp.json() if json_body else {}))
                if resp.status_code == 503:
                    assert resp.headers.get("Retry-After"), resp.headers
                time.sleep(0.25)

    threads = [threading.Thread(target=cutter)] + [
        threading.Thread(target=clicks, args=(n,)) for n in nodes
    ]
    for t in threads:
        t.start()
    for t in threads[1:]:
        t.join()
    stop.set()
    threads[0].join()

    assert sum(cut) > 0, "no session was cut: the test proved nothing"
    assert {code for _, code, _ in answers} <= {202, 409, 503}, answers
    accepted = [body["id"] for _, code, body in answers if code == 202]
    # Each accepted action is on record, once per node: the node stays held by its
    # pending operation, so every later click was refused (or told to retry).
    assert sorted(accepted) == sorted(Operation.objects.values_list("pk", flat=True))
    assert len({n for n, code, _ in answers if code == 202}) == len(accepted)

    worker = start_worker({**worker_env}, tmp_path / "worker.log", "-B")
    try:
        for op_id in accepted:  # everything accepted runs or ends with its reason
            op = wait_operation(op_id, timeout=90)
            assert op.status == "succeeded" or op.error, op
        assert_invariants(worker)
    finally:
        stop_worker(worker)
    assert not Operation.objects.filter(status__in=["pending", "running"]).exists()
    stuck = Node.objects.filter(state__in=TRANSITIONAL_STATES, deadline__isnull=True)
    assert not stuck.exists()
    assert not Node.objects.filter(reservation__isnull=False).exists()
