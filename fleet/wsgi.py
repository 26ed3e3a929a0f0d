"""WSGI entry point, with a fast path for GET /boot/ipxe.

A hall of machines network-booting at once asks /boot/ipxe thousands of times a second;
iPXE sends no cookies and needs no session, CSRF, auth or messages, so that one path is
answered by provisioning.bootserver.serve directly, with Django's host validation and
database connection handling, but without the middleware stack. Every other path is plain
Django.
"""

import os
import time

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fleet.settings")
django_application = get_wsgi_application()

from django.db import close_old_connections  # noqa: E402  (after Django is set up)

from fleet import bootfront  # noqa: E402
from inventory.macs import is_mac  # noqa: E402
from provisioning.bootserver import serve  # noqa: E402
from provisioning.metrics import BOOT_ANSWER_SECONDS  # noqa: E402


def boot_ipxe_script(
    mac: str, arch: str, base_url: str, client: str, remote_addr: str | None
) -> str:
    """serve.ipxe_script with the connection handling Django's handler would do."""
    try:
        return serve.ipxe_script(mac, arch, base_url, client, remote_addr)
    finally:
        close_old_connections()


def boot_ipxe(environ, start_response):
    host = environ.get("HTTP_HOST") or environ.get("SERVER_NAME", "")
    if not bootfront.host_allowed(host):
        start_response("400 Bad Request", bootfront.HEADERS)
        return [bootfront.BAD_HOST]
    mac, arch = bootfront.parse(environ.get("QUERY_STRING", ""))
    if not is_mac(mac):
        start_response("400 Bad Request", bootfront.HEADERS)
        return [bootfront.BAD_MAC]
    start = time.perf_counter()
    script = boot_ipxe_script(
        mac,
        arch,
        serve.base_url_for(environ.get("wsgi.url_scheme", "http"), host),
        environ.get("HTTP_USER_AGENT", ""),
        environ.get("REMOTE_ADDR") or None,
    )
    body = script.encode()
    start_response("200 OK", [*bootfront.HEADERS, ("Content-Length", str(len(body)))])
    BOOT_ANSWER_SECONDS.labels("database").observe(time.perf_counter() - start)
    return [body]


def application(environ, start_response):
    if environ.get("PATH_INFO") == bootfront.PATH and environ.get("REQUEST_METHOD") == "GET":
        return boot_ipxe(environ, start_response)
    return django_application(environ, start_response)
