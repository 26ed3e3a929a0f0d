"""fleet.wsgi: GET /boot/ipxe without the middleware stack, every other path Django."""

import io
from wsgiref.util import setup_testing_defaults

import pytest

from provisioning.models import BootRequest

pytestmark = pytest.mark.django_db(transaction=True)


def call_wsgi(path: str, query: str, host: str = "127.0.0.1") -> tuple[str, bytes]:
    from fleet.wsgi import application

    environ = {
        "PATH_INFO": path,
        "QUERY_STRING": query,
        "HTTP_HOST": host,
        "REQUEST_METHOD": "GET",
        "HTTP_USER_AGENT": "iPXE/1.0.0",
        "wsgi.input": io.BytesIO(),
    }
    setup_testing_defaults(environ)
    status = []
    body = b"".join(application(environ, lambda s, h: status.append(s)))
    return status[0], body


def test_wsgi_fast_path_answers_like_the_view(client, node):
    mac = node.interfaces.get().mac
    status, body = call_wsgi("/boot/ipxe", f"mac={mac}&arch=x86_64")
    assert status == "200 OK"
    assert (
        body.decode()
        == client.get(
            "/boot/ipxe", {"mac": mac, "arch": "x86_64"}, HTTP_HOST="127.0.0.1"
        ).content.decode()
    )
    assert BootRequest.objects.filter(node=node, answer="local").count() == 2


def test_wsgi_fast_path_checks_the_host_header(node):
    status, body = call_wsgi("/boot/ipxe", "mac=52:54:00:00:00:01", host="evil.example")
    assert status.startswith("400") and b"ALLOWED_HOSTS" in body


def test_every_other_path_is_django():
    status, _ = call_wsgi("/healthz", "")
    assert status.startswith("200")


def test_the_wsgi_front_door_refuses_a_mac_that_is_not_one():
    status, body = call_wsgi("/boot/ipxe", "mac=%00")
    assert status.startswith("400") and b"mac must be a MAC address" in body
