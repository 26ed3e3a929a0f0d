"""The production front door (fleet.asgi): /boot/ipxe from memory, everything else Django.

Called in-process with real ASGI messages; tests/test_serve.py runs the same app under the
real server.
"""

import asyncio
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest
from django.utils import timezone

from inventory.lifecycle import transition
from inventory.models import NetworkInterface, Node
from provisioning.boot import render_ipxe_unknown
from provisioning.bootserver import cache as boot_cache
from provisioning.bootserver import records
from provisioning.deployments import phone_home
from provisioning.models import BootRequest
from tests.factories import ImageFactory, NodeFactory, start_deploy

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


def answered(mac: str) -> str:
    status, _, body = call("/boot/ipxe", f"mac={mac}")
    assert status == 200
    return body.decode()


def test_an_unknown_mac_is_answered_from_memory_and_learns_nothing(client, node, storm_mode):
    storm_mode.refresh()
    stranger = "52:54:00:de:ad:01"
    body = answered(stranger.upper())
    assert body == render_ipxe_unknown()  # the one generic answer, whoever asks
    for fact in (node.hostname, node.serial, node.rack.site.slug, node.interfaces.get().mac):
        assert fact not in body
    # Nothing about the stranger is kept as if it were a node; it is recorded as unknown
    # (the boot log shows which machines asked), as the database path records it.
    storm_mode.refresh()
    assert storm_mode.get(stranger) is None
    records.flush()
    record = BootRequest.objects.get()
    assert (record.mac, record.node_id, record.state, record.answer) == (
        stranger,
        None,
        "",
        "unknown",
    )
    assert client.get("/boot/ipxe", {"mac": stranger}).content.decode() == body


def test_a_node_enrolled_after_the_copy_loaded_is_itself_from_the_next_refresh(node, storm_mode):
    storm_mode.refresh()
    newcomer = NodeFactory(rack=node.rack, rack_unit=10, u_height=4)
    mac = newcomer.interfaces.get().mac
    assert "not enrolled in Corral" in answered(mac)  # the copy has not seen it yet
    storm_mode.refresh()
    assert f"{newcomer.hostname} is not deploying" in answered(mac)
    records.flush()
    assert list(BootRequest.objects.order_by("created").values_list("node", "answer")) == [
        (None, "unknown"),
        (newcomer.pk, "local"),
    ]


def test_a_nic_the_refresh_cannot_see_is_found_once_it_is_answered_unknown(node, storm_mode):
    """A NIC added on its own leaves Node.updated alone (so does an enrolment whose
    transaction commits long after it wrote the node): the re-read of changed nodes misses
    it, and the MAC answered unknown is what makes the next refresh look it up."""
    Node.objects.filter(pk=node.pk).update(updated=timezone.now() - timedelta(minutes=5))
    storm_mode.refresh()
    added = NetworkInterface.objects.create(node=node, mac="52:54:00:aa:bb:cc", name="eno2")
    storm_mode.refresh()
    assert storm_mode.get(added.mac) is None  # not seen by the re-read of changed nodes
    assert "not enrolled in Corral" in answered(added.mac)
    storm_mode.refresh()
    assert f"{node.hostname} is not deploying" in answered(added.mac)


def test_until_its_copy_is_loaded_a_process_asks_the_database(node, storm_mode):
    newcomer = NodeFactory(rack=node.rack, rack_unit=10, u_height=4)
    assert f"{newcomer.hostname} is not deploying" in answered(newcomer.interfaces.get().mac)
    assert "not enrolled in Corral" in answered("52:54:00:de:ad:01")
    assert not storm_mode.ready.is_set()


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


def lifespan(on_startup=lambda: None) -> list[str]:
    """The message types the app sends through startup and shutdown; `on_startup` runs
    when the app says startup is complete (when granian would start accepting)."""
    from fleet.asgi import application

    messages = iter([{"type": "lifespan.startup"}, {"type": "lifespan.shutdown"}])
    sent: list[str] = []

    async def receive():
        return next(messages)

    async def send(message):
        if message["type"] == "lifespan.startup.complete":
            on_startup()
        sent.append(message["type"])

    serve(application({"type": "lifespan"}, receive, send))
    return sent


def test_startup_completes_once_the_node_copy_is_loaded(node, settings):
    """granian accepts a worker's first connection only after its startup: a worker
    restarted mid-storm must not answer the storm before its copy is loaded."""
    settings.CORRAL_BOOT_CACHE_SECONDS = 3600
    boot_cache._cache = None
    mac, seen = node.interfaces.get().mac, []

    def at_startup():
        copy = boot_cache._cache
        seen.append(copy.get(mac) if copy else None)

    try:
        assert lifespan(at_startup) == ["lifespan.startup.complete", "lifespan.shutdown.complete"]
        assert [subject.hostname for subject in seen] == [node.hostname]
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
