"""The production front door (fleet.asgi): /boot/ipxe from memory, everything else Django.

Called in-process with real ASGI messages; tests/test_serve.py runs the same app under the
real server.
"""

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.utils import timezone

from inventory.lifecycle import transition
from provisioning.bootserver import cache as boot_cache
from provisioning.bootserver import records
from provisioning.deployments import phone_home
from provisioning.models import BootRequest
from tests.factories import ImageFactory, start_deploy

pytestmark = pytest.mark.django_db(transaction=True)


def serve(coroutine) -> None:
    """Run on a thread of its own, as a server's event loop does (and because the browser
    tests leave Playwright's loop set on the main thread)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(asyncio.run, coroutine).result()


def call(path: str, query: str = "", host: str = "127.0.0.1", method: str = "GET"):
    """(status, headers, body) as a client of the ASGI app would see them."""
    from fleet.asgi import application

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [(b"host", host.encode()), (b"user-agent", b"iPXE/1.21.1")],
        "client": ("10.1.2.3", 50000),
        "server": ("127.0.0.1", 8000),
    }
    sent: list[dict] = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    serve(application(scope, receive, send))
    start = sent[0]
    body = b"".join(m.get("body", b"") for m in sent[1:])
    return start["status"], dict(start["headers"]), body


@pytest.fixture
def storm_mode(boot_copy):
    return boot_copy


@pytest.fixture
def image(db):
    return ImageFactory()


def test_an_enrolled_node_is_answered_from_memory_and_recorded(client, node, storm_mode):
    mac = node.interfaces.get().mac
    storm_mode.refresh()
    status, headers, body = call("/boot/ipxe", f"mac={mac.upper()}&arch=x86_64")
    assert status == 200 and headers[b"content-type"].startswith(b"text/plain")
    assert int(headers[b"content-length"]) == len(body)
    assert body.decode() == client.get("/boot/ipxe", {"mac": mac}).content.decode()
    assert b"booting from local disk" in body
    records.flush()
    record = BootRequest.objects.filter(remote_addr="10.1.2.3").get()
    assert (record.node_id, record.mac, record.answer) == (node.pk, mac, "local")
    assert record.client == "iPXE/1.21.1"


def test_a_node_the_copy_does_not_know_yet_is_looked_up_in_the_database(node, storm_mode):
    storm_mode.refresh()
    from tests.factories import NodeFactory

    newcomer = NodeFactory(rack=node.rack, rack_unit=10, u_height=4)
    _, _, body = call("/boot/ipxe", f"mac={newcomer.interfaces.get().mac}")
    assert f"{newcomer.hostname} is not deploying".encode() in body
    _, _, body = call("/boot/ipxe", "mac=52:54:00:de:ad:01")
    assert b"not enrolled in Corral" in body and node.hostname.encode() not in body


def test_a_deploying_node_gets_its_token_from_memory_until_the_deploy_ends(node, image, storm_mode):
    token = "tok-" + "a" * 40
    start_deploy(node, image, token)
    storm_mode.refresh()
    mac = node.interfaces.get().mac
    assert storm_mode.deployment(node.pk).token == token
    _, _, body = call("/boot/ipxe", f"mac={mac}")
    assert token.encode() in body and b"kernel" in body

    time_before = timezone.now()
    transition(node, "fail", "system", "no phone-home within 30 min")
    storm_mode.refresh()
    assert storm_mode.deployment(node.pk) is None
    _, _, body = call("/boot/ipxe", f"mac={mac}")
    assert token.encode() not in body and b"booting from local disk" in body
    assert BootRequest.objects.count() == 0  # still buffered: written by the flush thread
    records.flush()
    answers = list(BootRequest.objects.order_by("created").values_list("answer", "created"))
    assert [a for a, _ in answers] == ["deploy", "local"]
    assert answers[1][1] >= time_before  # stamped when answered, not when written


def test_a_deploy_that_fails_closes_its_deployment(node, image):
    """Its token must not boot or phone home after a later re-deploy begins."""
    token = "tok-" + "b" * 40
    deployment = start_deploy(node, image, token)
    transition(node, "fail", "system", "BMC refused the power cycle")
    deployment.refresh_from_db()
    assert deployment.status == "failed"
    assert deployment.error == "node left deploying: BMC refused the power cycle"
    transition(node, "deploy", "user:alice")  # the re-deploy's task has not run yet
    from provisioning.deployments import CallbackRefused

    with pytest.raises(CallbackRefused, match="token already failed"):
        phone_home(token, {"hostname": node.hostname}, "10.0.0.9")
    node.refresh_from_db()
    assert node.state == "deploying"


def test_the_host_header_is_checked_like_django_does(node):
    status, _, body = call("/boot/ipxe", "mac=52:54:00:00:00:01", host="evil.example")
    assert status == 400 and b"ALLOWED_HOSTS" in body


def test_every_other_path_is_django(users):
    status, _, body = call("/healthz")
    assert status == 200
    status, _, body = call("/api/v1/nodes/")
    assert status == 401 and b"credentials" in body.lower()
    status, headers, _ = call("/nodes/")
    assert status == 302 and headers[b"location"].startswith(b"/login/?next=/nodes/")


def lifespan() -> list[str]:
    from fleet.asgi import application

    messages = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])
    sent: list[str] = []

    async def receive():
        return next(messages)

    async def send(message):
        sent.append(message["type"])

    serve(application({"type": "lifespan"}, receive, send))
    return sent


def test_startup_begins_loading_the_node_copy(node, settings):
    settings.CORRAL_BOOT_CACHE_SECONDS = 3600
    boot_cache._cache = None
    try:
        assert lifespan() == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
        copy = boot_cache._cache
        assert copy is not None and copy.ready.wait(10)
        assert copy.get(node.interfaces.get().mac).hostname == node.hostname
    finally:
        boot_cache._cache = None


def test_shutdown_writes_the_buffered_boot_records(node, storm_mode):
    storm_mode.refresh()
    call("/boot/ipxe", f"mac={node.interfaces.get().mac}")
    assert lifespan() == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
    assert BootRequest.objects.filter(node=node, answer="local").count() == 1


@pytest.mark.parametrize("bad", ["%00", "52:54:00:zz:00:01", "", "52%3A54%3A00%00"])
def test_a_mac_that_is_not_one_is_refused_and_the_batch_keeps_the_good_records(
    node, storm_mode, bad
):
    """Before, `mac=%00` was answered as unknown and its record made the database refuse
    the whole batch: every good record answered in the same interval was lost."""
    storm_mode.refresh()
    mac = node.interfaces.get().mac
    assert call("/boot/ipxe", f"mac={mac}")[0] == 200
    status, _, body = call("/boot/ipxe", f"mac={bad}")
    assert status == 400 and b"mac must be a MAC address" in body
    assert call("/boot/ipxe", "mac=52:54:00:de:ad:01")[0] == 200  # unknown, but a MAC
    records.flush()
    assert sorted(BootRequest.objects.values_list("mac", "answer")) == sorted(
        [("52:54:00:de:ad:01", "unknown"), (mac, "local")]
    )
