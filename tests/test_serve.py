"""The production web server as Docker runs it (`python -m fleet.serve`: granian on
fleet.asgi), over real HTTP, on the test database."""

import os
import signal
import urllib.error
import urllib.parse
import urllib.request
from datetime import timedelta

import pytest
from django.utils import timezone

from inventory.models import NetworkInterface, Node
from provisioning.boot import render_ipxe_unknown
from provisioning.models import BootRequest
from tests.factories import ImageFactory, NodeFactory, start_deploy
from tests.peers.util import wait_until
from tests.peers.web import start_web, stop_web

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def corral_web_env():
    # No full reload of the node copy during a test: what the server finds, its refresh
    # of changed nodes or its look-up of MACs it answered unknown found.
    return {"CORRAL_BOOT_CACHE_FULL_SECONDS": "3600"}


@pytest.fixture
def server(corral_web):
    return corral_web


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310  (loopback)
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_boot_scripts_and_the_dashboard_through_the_production_server(node, server):
    mac = node.interfaces.get().mac
    status, body = get(f"{server}/boot/ipxe?mac={mac}&arch=x86_64")
    assert status == 200 and f"{node.hostname} is not deploying" in body

    token = "tok-" + "d" * 40
    start_deploy(node, ImageFactory(), token)
    # Within one refresh of the node copy the deploying node gets its kernel and token.
    wait_until(
        lambda: token in get(f"{server}/boot/ipxe?mac={mac}")[1],
        timeout=10,
        what="deploy script served",
    )
    status, body = get(f"{server}/boot/ipxe?mac=52:54:00:de:ad:02")
    assert status == 200 and "not enrolled in Corral" in body

    wait_until(
        lambda: (
            BootRequest.objects.filter(node=node, answer="deploy").exists()
            and BootRequest.objects.filter(answer="unknown").exists()
        ),
        timeout=10,
        what="boot records written by the server's flush thread",
    )
    assert get(f"{server}/healthz")[0] == 200


def boot(server: str, mac: str) -> str:
    status, body = get(f"{server}/boot/ipxe?mac={mac}&arch=x86_64")
    assert status == 200, body
    return body


def test_machines_enrolled_while_the_server_runs_are_soon_answered_as_themselves(node, server):
    """Unknown MACs are answered from the server's node copy, not the database; a node
    enrolled meanwhile is found by the next refresh (every 0.2 s here), however it was
    enrolled. (tests/test_asgi.py pins "the next refresh" down, refresh by refresh.)"""
    assert f"{node.hostname} is not deploying" in boot(server, node.interfaces.get().mac)

    newcomer = NodeFactory(rack=node.rack, rack_unit=10, u_height=4)
    mac = newcomer.interfaces.get().mac
    wait_until(
        lambda: f"{newcomer.hostname} is not deploying" in boot(server, mac),
        timeout=5,
        what="a node enrolled a moment ago answered as itself",
    )

    # A NIC added on its own to a node last changed long ago: no re-read of changed nodes
    # sees it. Its first request is answered unknown, from memory (the database knew it);
    # the look-up that answer triggers finds it.
    Node.objects.filter(pk=node.pk).update(updated=timezone.now() - timedelta(minutes=5))
    added = NetworkInterface.objects.create(node=node, mac="52:54:00:aa:bb:cc", name="eno2")
    assert boot(server, added.mac) == render_ipxe_unknown()
    wait_until(
        lambda: f"{node.hostname} is not deploying" in boot(server, added.mac),
        timeout=5,
        what="a NIC added on its own answered as its node",
    )
    wait_until(
        lambda: BootRequest.objects.filter(mac=added.mac, answer="local").exists(),
        timeout=10,
        what="boot records written by the server's flush thread",
    )
    first = BootRequest.objects.filter(mac=added.mac).order_by("created").first()
    assert (first.node_id, first.state, first.answer) == (None, "", "unknown")


def test_a_worker_killed_mid_storm_is_respawned_and_serves_from_its_copy(node, corral_web_server):
    """The server respawns a worker that died (OOM killer, crash); the new worker loads
    its node copy before it listens, then answers as its sibling did."""
    server, mac = corral_web_server, node.interfaces.get().mac
    assert f"{node.hostname} is not deploying" in boot(server.url, mac)
    [worker] = server.workers()
    os.kill(worker, signal.SIGKILL)
    wait_until(lambda: len(server.workers() - {worker}) == 1, timeout=30, what="a respawned worker")
    # Refused until the new worker listens: this server has no other worker.
    wait_until(lambda: answers(server.url, mac), timeout=30, what="the new worker answering")
    assert f"{node.hostname} is not deploying" in boot(server.url, mac)
    assert boot(server.url, "52:54:00:de:ad:04") == render_ipxe_unknown()


def answers(server: str, mac: str) -> bool:
    try:
        return get(f"{server}/boot/ipxe?mac={mac}")[0] == 200
    except urllib.error.URLError:
        return False


@pytest.mark.service  # starts the production web server itself
def test_the_server_stops_when_asked_while_its_worker_is_still_starting(tmp_path, transactional_db):
    """A worker that gets its SIGTERM while it is still importing the app misses it (the
    handler it inherited from granian's main process is not its own yet) and would serve
    for ever, with the main process waiting for it for ever: a deploy or `docker stop`
    while a worker restarts. The server now kills a worker that has not stopped within
    GRANIAN_WORKERS_KILL_TIMEOUT (fleet.serve's default: 10 s)."""
    server = start_web(tmp_path / "web.log", {"GRANIAN_WORKERS_KILL_TIMEOUT": None})
    try:
        wait_until(server.workers, timeout=30, interval=0.01, what="a worker spawned")
        workers = server.workers()
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(timeout=30)
        assert not [pid for pid in workers if os.path.exists(f"/proc/{pid}")], server.output()
    finally:
        stop_web(server)


def test_a_technician_logs_in_and_an_integrator_posts_through_the_production_server(
    server, node, users, settings
):
    """Request bodies reach Django (form login with CSRF, a JSON API action)."""
    import http.cookiejar
    import json
    import re

    from tests.factories import api_token

    jar = http.cookiejar.CookieJar()
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    page = browser.open(f"{server}/login/", timeout=10).read().decode()
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    # Hashed as the server (production settings) can check it, not with the tests' MD5.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    users["technician"].set_password("s3cret-pass")
    users["technician"].save()
    form = urllib.parse.urlencode(
        {
            "csrfmiddlewaretoken": csrf,
            "password": "s3cret-pass",
            "username": users["technician"].username,
        }
    ).encode()
    request = urllib.request.Request(
        f"{server}/login/", data=form, headers={"Referer": f"{server}/login/"}
    )
    with browser.open(request, timeout=10) as response:
        assert response.status == 200 and response.url == f"{server}/fleet/"
    nodes_page = browser.open(f"{server}/nodes/", timeout=10).read().decode()
    assert node.hostname in nodes_page

    token = api_token(users["integration"])
    request = urllib.request.Request(
        f"{server}/api/v1/nodes/{node.pk}/actions/drain/",
        method="POST",
        data=json.dumps({"reason": "kernel update"}).encode(),
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
    )
    try:
        urllib.request.urlopen(request, timeout=10)  # noqa: S310  (loopback)
    except urllib.error.HTTPError as exc:  # enrolled nodes cannot drain: a 409 that says so
        reply = json.loads(exc.read())
        assert exc.code == 409 and "allowed" in reply, reply
    else:
        raise AssertionError("draining an enrolled node should be refused")


def test_the_entry_point_keeps_the_operators_granian_settings(monkeypatch):
    import os
    import sys

    from fleet import serve as entry

    calls = []
    monkeypatch.setattr(os, "environ", {"GRANIAN_WORKERS": "6"})
    monkeypatch.setattr(os, "execv", lambda path, argv: calls.append(argv))
    monkeypatch.setattr(sys, "argv", ["fleet.serve", "--port", "9000"])
    entry.main()
    assert calls[0][0].endswith("granian")
    assert calls[0][1:] == ["--port", "9000", "fleet.asgi:application"]
    assert os.environ["GRANIAN_WORKERS"] == "6"  # the operator's, not one per core
    assert os.environ["GRANIAN_INTERFACE"] == "asgi"
    assert os.environ["GRANIAN_WORKERS_KILL_TIMEOUT"] == "10"  # never waited for for ever
    assert os.environ["DJANGO_SETTINGS_MODULE"] == "fleet.settings"


def test_the_entry_point_serves_the_image_store_as_static_files(monkeypatch, tmp_path):
    """Published images' artifacts are answered by granian's static files (Rust), at the
    URL boot scripts give (provisioning.imagestore.ROUTE), when a store is set."""
    import os
    import sys

    from fleet import serve as entry
    from provisioning import imagestore

    store = tmp_path / "images"
    monkeypatch.setattr(os, "environ", {"CORRAL_IMAGE_STORE": str(store)})
    monkeypatch.setattr(os, "execv", lambda path, argv: None)
    monkeypatch.setattr(sys, "argv", ["fleet.serve"])
    entry.main()
    assert os.environ["GRANIAN_STATIC_PATH_ROUTE"] == imagestore.ROUTE == "/boot/images"
    assert os.environ["GRANIAN_STATIC_PATH_MOUNT"] == str(store) and store.is_dir()

    monkeypatch.setattr(os, "environ", {"CORRAL_ENV_FILE": str(tmp_path / "none.env")})
    entry.main()
    assert "GRANIAN_STATIC_PATH_MOUNT" not in os.environ  # no store: nothing served
