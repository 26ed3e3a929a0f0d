"""CSV import as an Operation: a file that cannot be an import is a 400 before anything is
accepted; a small file is imported in the request; a large one is recorded, with its file
encrypted, for a worker (whose task body runs here; tests/e2e/test_import_worker.py runs
it on a real worker)."""

import json
import threading

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.urls import reverse

from devtools.bench_import import synthetic_csv
from inventory import import_operations, imports, operations, watchdog
from inventory.models import BMC, ImportUpload, Node, Operation
from tests.factories import RackFactory, SiteFactory

pytestmark = pytest.mark.django_db
URL = "/api/v1/nodes/import/"


@pytest.fixture
def racks(db):
    site = SiteFactory(slug="dc1", name="DC one")
    return [RackFactory(site=site, name=f"r{i:03d}") for i in range(3)]


def upload(text: str | bytes, name: str = "nodes.csv") -> SimpleUploadedFile:
    data = text.encode() if isinstance(text, str) else text
    return SimpleUploadedFile(name, data, content_type="text/csv")


def post(api, text, role="integration"):
    return api(role).post(URL, {"file": upload(text)}, format="multipart")


def test_small_file_is_imported_in_the_request(api, racks):
    resp = post(api, synthetic_csv("dc1", 5))
    assert resp.status_code == 202, resp.content
    assert resp.data["kind"] == "import_nodes" and resp.data["status"] == "succeeded"
    assert resp.data["result"] == {"rows": 5, "created": 5}
    assert resp.data["params"] == {"file": "nodes.csv", "rows": 5}
    assert resp.data["actor"] == "token:integration-user"
    assert resp["Location"] == f"http://testserver/api/v1/operations/{resp.data['id']}/"
    assert Node.objects.count() == 5
    assert BMC.objects.get(node__serial="SN-BENCH-000003").password == "pw-3"
    assert not ImportUpload.objects.exists()


def test_small_file_with_bad_rows_fails_with_every_row_named(api, racks):
    bad = {1: {"boot_mac": "nonsense"}, 3: {"rack": "r99", "gpu_count": "eight"}}
    resp = post(api, synthetic_csv("dc1", 5, bad))
    assert resp.status_code == 202
    op = api("manager").get(resp["Location"]).data
    assert op["status"] == "failed"
    assert op["result"]["errors"] == [
        {
            "line": 3,
            "field": "boot_mac",
            "message": (
                "'nonsense' is not a MAC address; use six hex pairs such as 52:54:00:ab:cd:ef."
            ),
        },
        {
            "line": 5,
            "field": "rack",
            "message": ("rack 'r99' does not exist in site 'dc1'; create the site and rack first."),
        },
    ]
    assert "2 problems in 2 of 5 rows; nothing was imported" in op["error"]
    assert not Node.objects.exists() and not BMC.objects.exists()


@pytest.mark.parametrize(
    ("data", "text"),
    [
        (b"site,rack,serial\ndc1,r000,SN1\n", "missing columns: rack_unit, hostname"),
        (synthetic_csv("dc1", 2).replace("HGX", "HGX\xe9").encode("latin-1"), "Not UTF-8"),
        (synthetic_csv("dc1", 0).encode(), "has a header but no rows"),
        (b"", "The submitted file is empty."),
        (synthetic_csv("dc1", 3).encode().replace(b"gpu000002", b"gpu\x00"), "NUL byte"),
    ],
    ids=["columns", "latin-1", "header-only", "empty", "nul"],
)
def test_a_file_that_cannot_be_an_import_is_a_400_and_nothing_is_accepted(api, racks, data, text):
    resp = post(api, data)
    assert resp.status_code == 400, resp.content
    assert text in json.dumps(resp.data["file"])
    assert not Operation.objects.exists() and not Node.objects.exists()
    no_file = api("integration").post(URL, {}, format="multipart")
    assert no_file.status_code == 400 and "file" in no_file.data


def test_a_file_over_20_mib_is_refused_unread(api, racks):
    head = synthetic_csv("dc1", 1).encode()
    resp = post(api, head + b"#" * (20 * 1024 * 1024 + 1 - len(head)))
    assert resp.status_code == 400
    assert resp.data["file"] == ["The file is larger than 20 MiB; split it."]
    assert not Operation.objects.exists()


def test_large_file_is_recorded_encrypted_for_a_worker(
    api, racks, settings, django_capture_on_commit_callbacks
):
    settings.CORRAL_IMPORT_SYNC_ROWS = 10
    with django_capture_on_commit_callbacks(execute=False) as sends:
        resp = post(api, synthetic_csv("dc1", 50))
    assert resp.status_code == 202
    assert (resp.data["status"], resp.data["progress"]) == ("pending", 0)
    assert resp.data["message"] == "50 rows waiting for a worker"
    assert len(sends) == 1  # sent once the operation and its file are committed
    op = Operation.objects.get(pk=resp.data["id"])
    assert op.task_name == "inventory.tasks.import_nodes"  # republish() can resend it
    assert not Node.objects.exists()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT content FROM inventory_importupload WHERE operation_id = %s", [op.pk]
        )
        (stored,) = cursor.fetchone()
    assert stored.startswith("gAAAAA") and "pw-7" not in stored and "SN-BENCH" not in stored
    assert "pw-7" in ImportUpload.objects.get(operation=op).content

    assert import_operations.run_import(op.pk) == "succeeded"
    op.refresh_from_db()
    assert op.result == {"rows": 50, "created": 50} and op.progress == 100
    assert op.message == "imported 50 nodes"
    assert Node.objects.count() == 50 and not ImportUpload.objects.exists()
    # A redelivered task finds the operation finished and imports nothing again.
    assert import_operations.run_import(op.pk) == "skipped"
    assert Node.objects.count() == 50
    body = json.dumps(api("admin").get(f"/api/v1/operations/{op.pk}/").data)
    assert "pw-" not in body


def test_large_file_with_a_bad_row_fails_in_the_task_with_nothing_written(api, racks, settings):
    settings.CORRAL_IMPORT_SYNC_ROWS = 10
    op = Operation.objects.get(
        pk=post(api, synthetic_csv("dc1", 60, {55: {"serial": ""}})).data["id"]
    )
    assert import_operations.run_import(op.pk) == "failed"
    op.refresh_from_db()
    assert op.result["errors"] == [
        {"line": 57, "field": "serial", "message": "This field cannot be blank."}
    ]
    assert op.message == "nothing was imported"
    assert not Node.objects.exists() and not ImportUpload.objects.exists()


def test_technicians_and_managers_cannot_import(api, racks):
    for role in ("technician", "manager"):
        assert post(api, synthetic_csv("dc1", 2), role=role).status_code == 403
    assert not Operation.objects.exists()


def test_dashboard_large_import_follows_its_operation(client, users, racks, settings):
    settings.CORRAL_IMPORT_SYNC_ROWS = 10
    client.force_login(users["integration"])
    resp = client.post(reverse("inventory:node_import"), {"file": upload(synthetic_csv("dc1", 30))})
    op = Operation.objects.get(kind="import_nodes")
    status_url = reverse("inventory:node_import_status", args=[op.pk])
    assert resp.status_code == 302 and resp.url == status_url
    page = client.get(status_url).content.decode()
    assert 'hx-trigger="every 1s"' in page and "30 rows waiting for a worker" in page
    import_operations.run_import(op.pk)
    partial = client.get(status_url, HTTP_HX_REQUEST="true").content.decode()
    assert partial.lstrip().startswith('<div id="import-progress"')
    assert "hx-trigger" not in partial  # finished: the partial stops polling
    assert "Imported 30 nodes" in partial
    listing = client.get(reverse("inventory:node_import")).content.decode()
    assert "nodes.csv" in listing and status_url in listing


def test_dashboard_shows_a_failed_background_import_row_by_row(client, users, racks, settings):
    settings.CORRAL_IMPORT_SYNC_ROWS = 10
    client.force_login(users["technician"])  # may follow an import, not start one
    bad = synthetic_csv("dc1", 30, {20: {"bmc_protocol": "snmp"}})
    op = import_operations.start_import(bad.encode(), actor="user:someone", filename="bad.csv")
    import_operations.run_import(op.pk)
    page = client.get(reverse("inventory:node_import_status", args=[op.pk])).content.decode()
    assert "Nothing was imported" in page and "<td>22</td><td>bmc_protocol</td>" in page
    assert client.post(reverse("inventory:node_import"), {}).status_code == 403


def test_dashboard_refuses_an_unreadable_file_on_the_form(client, users, racks):
    client.force_login(users["integration"])
    resp = client.post(reverse("inventory:node_import"), {"file": upload(b"a,b\n1,2\n")})
    assert resp.status_code == 200
    assert "missing columns: site, rack" in resp.content.decode()
    assert not Operation.objects.exists()


def test_a_delivery_while_another_worker_runs_it_does_nothing(api, racks, settings):
    settings.CORRAL_IMPORT_SYNC_ROWS = 10
    op = Operation.objects.get(pk=post(api, synthetic_csv("dc1", 20)).data["id"])
    assert operations.begin_operation(op, worker="w1 pid 1")  # the first run, still alive
    assert import_operations.run_import(op.pk, worker="w2 pid 2") == "duplicate"
    op.refresh_from_db()
    assert (op.status, op.worker) == ("running", "w1 pid 1")
    assert not Node.objects.exists() and ImportUpload.objects.filter(operation=op).exists()


def accepted(text: str) -> Operation:
    """An import accepted for a worker, as start_import records it, its task not sent (a
    transactional test's commit would send it to the session's worker)."""
    op = Operation.objects.create(
        kind=import_operations.KIND, actor="t", task_name=import_operations.TASK
    )
    ImportUpload.objects.create(operation=op, content=text)
    return op


class EndedWhileChecking(import_operations.OperationTracker):
    """The watchdog fails the operation while its rows are being checked."""

    def progress(self, done: int, total: int) -> None:
        watchdog.end_operation(self.op, "lost with its worker: w1 pid 1 stopped responding")
        super().progress(done, total)


class EndedBeforeWriting(import_operations.OperationTracker):
    """... or once they are checked, just before the write transaction claims it: the
    watchdog, on a connection of its own, commits its ending first."""

    def claim(self) -> None:
        def watchdog_run():
            try:
                watchdog.end_operation(self.op, "lost with its worker: w1 pid 1 stopped beating")
            finally:
                connection.close()

        thread = threading.Thread(target=watchdog_run)
        thread.start()
        thread.join()
        super().claim()


@pytest.mark.parametrize(
    "tracker",
    [
        EndedWhileChecking,
        # Two writers at once: SQLite makes the second wait for the first to commit.
        pytest.param(
            EndedBeforeWriting,
            marks=[pytest.mark.django_db(transaction=True), pytest.mark.postgresql],
        ),
    ],
)
def test_an_import_ended_elsewhere_midway_writes_nothing_and_its_file_goes(racks, tracker):
    op, other = accepted(synthetic_csv("dc1", 20)), accepted(synthetic_csv("dc1", 5))
    operations.begin_operation(op, worker="w1 pid 1")
    rows = imports.read_rows(ImportUpload.objects.get(operation=op).content)
    with pytest.raises(import_operations.ImportAbandoned):
        imports.import_rows(rows, tracker(op))
    op.refresh_from_db()
    assert op.status == "failed" and op.error.startswith("lost with its worker")
    assert not Node.objects.exists()
    # The beat's sweep deletes the file of an import that ended without its run.
    assert import_operations.purge_uploads() == 1
    assert list(ImportUpload.objects.values_list("operation", flat=True)) == [other.pk]
