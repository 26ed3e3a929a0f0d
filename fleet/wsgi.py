"""WSGI entry point, with a fast path for GET /boot/ipxe.

A hall of machines network-booting at once asks /boot/ipxe thousands of times a second;
iPXE sends no cookies and needs no session, CSRF, auth or messages, so that one path is
answered by provisioning.bootserve directly, with Django's host validation and database
connection handling, but without the middleware stack. Every other path is plain Django.
"""

import os
from urllib.parse import parse_qs

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fleet.settings")
django_application = get_wsgi_application()

from django.conf import settings  # noqa: E402  (after Django is set up)
from django.db import close_old_connections  # noqa: E402
from django.http.request import split_domain_port, validate_host  # noqa: E402

from provisioning import bootserve  # noqa: E402

TEXT = [("Content-Type", "text/plain; charset=utf-8"),
        ("Cache-Control", "max-age=0, no-cache, no-store, must-revalidate, private")]


def _allowed(host: str) -> bool:
    domain, _port = split_domain_port(host)
    allowed = settings.ALLOWED_HOSTS
    if settings.DEBUG and not allowed:
        allowed = [".localhost", "127.0.0.1", "[::1]"]
    return bool(domain) and validate_host(domain, allowed)


def boot_ipxe(environ, start_response):
    host = environ.get("HTTP_HOST") or environ.get("SERVER_NAME", "")
    if not _allowed(host):
        start_response("400 Bad Request", TEXT)
        return [b"Host not allowed; add it to ALLOWED_HOSTS.\n"]
    query = parse_qs(environ.get("QUERY_STRING", ""))
    try:
        script = bootserve.ipxe_script(
            query.get("mac", [""])[0], query.get("arch", ["x86_64"])[0],
            bootserve.base_url_for(environ.get("wsgi.url_scheme", "http"), host),
            environ.get("HTTP_USER_AGENT", ""), environ.get("REMOTE_ADDR") or None)
    finally:
        close_old_connections()
    body = script.encode()
    start_response("200 OK", [*TEXT, ("Content-Length", str(len(body)))])
    return [body]


def application(environ, start_response):
    if environ.get("PATH_INFO") == "/boot/ipxe" and environ.get("REQUEST_METHOD") == "GET":
        return boot_ipxe(environ, start_response)
    return django_application(environ, start_response)
