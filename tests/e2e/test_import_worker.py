"""Large CSV imports carried out by a real Celery worker on the real broker, followed by
another client polling the operation as an integration would."""

import time

import pytest
from celery import current_app
from django.core.files.uploadedfile import SimpleUploadedFile

from devtools.bench_import import rack_names, synthetic_csv
from inventory import import_operations
from inventory.models import BMC, ImportUpload, Label, NetworkInterface, Node
from tests.factories import RackFactory, SiteFactory

pytestmark = pytest.mark.django_db(transaction=True)
ROWS = 10_000


@pytest.fixture
def fleet_racks(db):
    site = SiteFactory(slug="dc1", name="DC one")
    return [RackFactory(site=site, name=name) for name in rack_names(ROWS)]


def post(api, text: str):
    upload = SimpleUploadedFile("fleet.csv", text.encode(), content_type="text/csv")
    return api("integration").post("/api/v1/nodes/import/", {"file": upload}, format="multipart")


def follow(client, location: str, timeout: float = 180) -> tuple[dict, list[tuple]]:
    """Poll the operation until it ends; returns it and every (status, progress, message)
    seen on the way."""
    seen: list[tuple] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        op = client.get(location).data
        if not seen or seen[-1] != (op["status"], op["progress"], op["message"]):
            seen.append((op["status"], op["progress"], op["message"]))
        if op["status"] in ("succeeded", "failed", "cancelled"):
            return op, seen
        time.sleep(0.05)
    raise AssertionError(f"import still running after {timeout} s: {seen[-3:]}")


def test_ten_thousand_rows_run_on_the_worker_with_progress(api, fleet_racks, celery_worker):
    resp = post(api, synthetic_csv("dc1", ROWS))
    assert resp.status_code == 202, resp.content
    # Described after its task was sent: the worker may have started it already.
    assert resp.data["status"] in ("pending", "running") and resp.data["progress"] < 90
    op, seen = follow(api("manager"), resp["Location"])

    assert op["status"] == "succeeded", op["error"]
    assert op["result"] == {"rows": ROWS, "created": ROWS}
    assert (op["progress"], op["message"]) == (100, "imported 10,000 nodes")
    validating = [s for s in seen if s[0] == "running" and s[2].startswith("validated ")]
    assert any(0 < progress < 90 for _, progress, _ in validating), seen
    assert any(" of 10,000 rows" in message for _, _, message in validating), seen
    progresses = [progress for _, progress, _ in seen]
    assert progresses == sorted(progresses), seen
    assert Node.objects.count() == ROWS and NetworkInterface.objects.count() == ROWS
    assert BMC.objects.get(node__hostname="gpu009999").password == "pw-9999"
    assert not ImportUpload.objects.exists()
    assert f"inventory.tasks.import_nodes[{op['task_id']}]" in celery_worker.output()


def test_a_bad_row_deep_in_the_file_fails_the_import_with_nothing_written(
    api, fleet_racks, celery_worker
):
    bad = {9_876: {"boot_mac": "52:54:zz:00:00:01"}, 9_990: {"serial": "SN-BENCH-000007"}}
    resp = post(api, synthetic_csv("dc1", ROWS, bad))
    assert resp.status_code == 202, resp.content
    op, seen = follow(api("manager"), resp["Location"])

    assert op["status"] == "failed"
    assert op["result"]["errors"] == [
        {
            "line": 9_878,
            "field": "boot_mac",
            "message": "'52:54:zz:00:00:01' is not a MAC address; use six hex pairs such as "
            "52:54:00:ab:cd:ef.",
        },
        {"line": 9_992, "field": "serial", "message": "Node with this Serial already exists."},
    ]
    assert op["error"].startswith("2 problems in 2 of 10,000 rows; nothing was imported.")
    assert any(s[2].startswith("validated ") for s in seen), seen
    assert not Node.objects.exists() and not BMC.objects.exists()
    assert not NetworkInterface.objects.exists() and not Label.objects.exists()
    assert not ImportUpload.objects.exists()


def test_a_task_delivered_twice_imports_once(api, fleet_racks, celery_worker):
    rows = 3_000
    start = len(celery_worker.output())
    resp = post(api, synthetic_csv("dc1", rows))
    # A second delivery of the same task (as a broker redelivers an unacknowledged one),
    # while the first is running: the worker runs both at once.
    current_app.send_task(import_operations.TASK, args=[resp.data["id"]], queue="corral")
    op, _ = follow(api("manager"), resp["Location"])

    assert op["status"] == "succeeded", op["error"]
    assert op["result"] == {"rows": rows, "created": rows}
    assert Node.objects.count() == rows
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        log = celery_worker.output()[start:]
        if log.count("inventory.tasks.import_nodes[") >= 4:  # both received and ended
            break
        time.sleep(0.2)
    assert log.count("inventory.tasks.import_nodes[") == 4, log
    assert "Traceback" not in log and "ERROR/" not in log, log
    # One delivery wrote; the other found the operation held by that live run, or ended.
    assert log.count("succeeded in") == 2 and log.count(": 'succeeded'") == 1, log
    assert log.count(": 'duplicate'") + log.count(": 'skipped'") == 1, log
    assert Node.objects.count() == rows
