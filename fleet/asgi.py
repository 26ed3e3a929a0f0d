"""ASGI entry point, the one production serves (granian, started by fleet.serve).

Why ASGI for a sync Django project: a hall of GPU servers network-booting at once asks
/boot/ipxe thousands of times a second over hundreds of connections, and the cheapest
answer is one that never leaves the server's event loop. So:

- GET /boot/ipxe is answered on the event loop from the per-process node copy and the
  rendered scripts (provisioning.bootserver.serve.memory_script), for enrolled nodes and
  unknown MACs alike; the copy is loaded before the process accepts a connection. Anything
  that needs the database (a deployment the copy has not loaded yet, a copy whose last
  refresh failed, boot-storm caches switched off) goes to a small thread pool running the
  same code as fleet.wsgi, which ends in the same decision.
- A console socket (/ws/nodes/<id>/console) is served on the event loop by
  consoles.socket, asking Django first whether the caller may (`_authorize`, through the
  API's own endpoint, middleware and all); no other path takes a WebSocket.
- Every other path is Django's unchanged WSGI application run in a thread pool (a2wsgi),
  so views, middleware and database connections behave exactly as under a WSGI server,
  with real thread concurrency (Django's own ASGI handler would serialise sync views onto
  one thread per process).
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor

from a2wsgi import WSGIMiddleware
from a2wsgi.wsgi import build_environ

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fleet.settings")

from django.conf import settings  # noqa: E402
from django.db import connections  # noqa: E402

from consoles import socket as console_socket  # noqa: E402
from core.asgi import header  # noqa: E402
from fleet import bootfront  # noqa: E402
from fleet.wsgi import boot_ipxe_script, django_application  # noqa: E402
from inventory.macs import is_mac  # noqa: E402
from provisioning.bootserver import cache, records, serve  # noqa: E402
from provisioning.metrics import BOOT_ANSWER_SECONDS  # noqa: E402

django_app = WSGIMiddleware(django_application, workers=settings.CORRAL_WEB_THREADS)
_boot_pool = ThreadPoolExecutor(
    max_workers=settings.CORRAL_WEB_THREADS, thread_name_prefix="corral-boot"
)
# Console sockets' calls into Django (may they, their session rows, asking for a relay).
_console_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="corral-console")
_HEADERS = [(name.lower().encode(), value.encode()) for name, value in bootfront.HEADERS]


async def _respond(send, status: int, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*_HEADERS, (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def boot_ipxe(scope: dict, send) -> None:
    server = scope.get("server") or ("", None)
    host = header(scope, b"host") or server[0] or ""
    if not bootfront.host_allowed(host):
        await _respond(send, 400, bootfront.BAD_HOST)
        return
    mac, arch = bootfront.parse(scope.get("query_string", b"").decode("latin-1"))
    base_url = serve.base_url_for(scope.get("scheme", "http"), host)
    client = header(scope, b"user-agent")
    remote_addr = (scope.get("client") or (None,))[0]
    start, source = time.perf_counter(), "memory"
    script = serve.memory_script(mac, arch, base_url, client, remote_addr)
    if script is None:
        if not is_mac(mac):  # a MAC the copy knows was valid: no cost there
            await _respond(send, 400, bootfront.BAD_MAC)
            return
        source = "database"
        script = await asyncio.get_running_loop().run_in_executor(
            _boot_pool, boot_ipxe_script, mac, arch, base_url, client, remote_addr
        )
    await _respond(send, 200, script.encode())
    BOOT_ANSWER_SECONDS.labels(source).observe(time.perf_counter() - start)


def _authorize(scope: dict, node_id: int) -> tuple[int, dict]:
    """GET /api/v1/nodes/<id>/console/ through Django with the socket's own headers
    (cookie or token, origin, forwarded address): its status and JSON body."""
    path = f"/api/v1/nodes/{node_id}/console/"
    http = {
        **scope,
        "type": "http",
        "method": "GET",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "http_version": scope.get("http_version", "1.1"),
        "scheme": {"wss": "https", "ws": "http"}.get(scope.get("scheme", "ws"), "http"),
    }
    environ = build_environ(http, io.BytesIO(b""))  # type: ignore[arg-type]
    environ["HTTP_ACCEPT"] = "application/json"
    answered: list[str] = []
    body = b"".join(
        django_application(environ, lambda status, headers, *_: answered.append(status))
    )
    status = int(answered[0].split()[0]) if answered else 500
    try:
        return status, json.loads(body or b"{}")
    except ValueError:  # a redirect to the login page, an HTML error page
        return (403 if status < 400 else status), {"detail": "Log in to open a console."}


def _final_flush() -> None:
    try:
        records.flush()
    finally:
        connections.close_all()  # this thread's; the process is about to exit


async def _lifespan(receive, send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            # Load the node copy (and pre-render the scripts) before serving: granian
            # accepts this worker's first connection only once startup is complete, so a
            # worker restarted mid-storm answers from memory from its first request
            # instead of sending the storm to the database while it warms.
            if (copy := cache.cache()) is not None:
                await asyncio.get_running_loop().run_in_executor(
                    _boot_pool, copy.loaded.wait, cache.LOAD_WAIT_SECONDS
                )
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            # Batched boot records still in memory are written before the process exits.
            await asyncio.get_running_loop().run_in_executor(_boot_pool, _final_flush)
            await send({"type": "lifespan.shutdown.complete"})
            return


async def application(scope: dict, receive, send) -> None:
    if scope["type"] == "http" and scope["path"] == bootfront.PATH and scope["method"] == "GET":
        await boot_ipxe(scope, send)
    elif scope["type"] == "lifespan":
        await _lifespan(receive, send)
    elif scope["type"] == "websocket":
        if console_socket.PATH.match(scope["path"]):
            await console_socket.serve(scope, receive, send, _authorize, _console_pool)
        else:
            await receive()  # the connect
            await console_socket.refuse(scope, send, 404, "No WebSocket is served here.")
    else:
        if scope["type"] == "http" and _chunked(scope):
            framed = await _with_length(scope, receive, send)
            if framed is None:
                return
            scope, receive = framed
        await django_app(scope, _coroutine(receive), send)


def _chunked(scope: dict) -> bool:
    names = {key for key, _ in scope["headers"]}
    return b"content-length" not in names and b"transfer-encoding" in names


async def _with_length(scope: dict, receive, send):
    """A body sent chunked (no Content-Length) read whole and given its length. WSGI, and
    DRF after it, read a request without Content-Length as empty: a chunked PATCH answered
    200 and changed nothing (issue 36). Bodies past DATA_UPLOAD_MAX_MEMORY_SIZE are a 413
    (send those with a Content-Length); (new scope, receive) or None once answered."""
    from fleet.parsers import too_large_detail

    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        if limit and size > limit:
            body = json.dumps({"detail": too_large_detail()}).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 413,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode()),
                        (b"connection", b"close"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})
            await _drain(receive, message, limit)
            return None
        if not message.get("more_body"):
            break
    body = b"".join(chunks)
    headers = [(k, v) for k, v in scope["headers"] if k != b"transfer-encoding"]
    headers.append((b"content-length", str(len(body)).encode()))
    replayed = False

    async def replay() -> dict:
        nonlocal replayed
        if replayed:
            return await receive()  # a disconnect, in its time
        replayed = True
        return {"type": "http.request", "body": body, "more_body": False}

    return {**scope, "headers": headers}, replay


async def _drain(receive, message: dict, limit: int) -> None:
    """Read and drop what the client is still sending after its 413, up to as much again
    as the limit: closing on unread data makes the kernel reset the connection, and a
    client still writing then sees a broken pipe instead of the 413 it was sent."""
    dropped = 0
    while message.get("more_body") and dropped <= limit:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        dropped += len(message.get("body", b""))


def _coroutine(receive):
    """a2wsgi hands receive() to run_coroutine_threadsafe, which takes coroutines only;
    granian's receive() returns its own awaitable (a request body then fails with a
    TypeError), so it is wrapped in one."""

    async def receive_coroutine():
        return await receive()

    return receive_coroutine
