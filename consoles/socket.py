"""The live console over a WebSocket: `/ws/nodes/<id>/console`, served on the production
server's event loop (fleet/asgi.py), for the browser's terminal and `corral console`.

Before anything is opened, the request is asked of Django (`authorize`: the API's
console endpoint with the socket's own cookie or token, so its middleware, roles and site
scope decide exactly as for any page): a refusal closes the socket before it is accepted
(a 403, or the endpoint's own status), and no session, relay or BMC is touched. The
socket's Origin must be the server it speaks to (a page of another site cannot open a
technician's console with their cookie).

Accepted, it is a ConsoleSession (live.open_session) and a viewer on the bus; the first
session to come holds the keyboard, the others watch read-only and are told who holds it
(and get it when it is free). What the console shows comes as binary frames; what this
side needs to know as text frames of JSON (`hello`, `status`, `keyboard`, `closed`).
Binary frames from the keyboard's holder are keys; a text frame `{"take": true}` asks for
the keyboard. A session is closed after CORRAL_CONSOLE_IDLE_SECONDS without a key.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import time
from collections.abc import Callable
from concurrent.futures import Executor
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from django.conf import settings

from core.asgi import header

from . import bus

if TYPE_CHECKING:
    from . import live

LOG = logging.getLogger(__name__)

PATH = re.compile(r"^/ws/nodes/(\d+)/console$")
HEARTBEAT = 2.0  # seconds between a session's refresh of its place on the bus
RELAY_GRACE = 10.0  # seconds without a relay before another is asked for
BLOCK_MS = 1000

Authorize = Callable[[dict, int], tuple[int, dict]]


def same_origin(scope: dict) -> bool:
    """A browser always sends Origin: it must name the host the socket was opened on. A
    client that is not a browser (the CLI) sends none, and has no cookie to borrow."""
    origin = header(scope, b"origin")
    if not origin:
        return True
    return urlsplit(origin).netloc.lower() == header(scope, b"host").lower()


async def refuse(scope: dict, send, status: int, detail: str) -> None:
    """Close before accepting: the client gets an HTTP status (with the words, where the
    server lets a denial carry a body), and nothing was opened."""
    if "websocket.http.response" in scope.get("extensions", {}):
        body = json.dumps({"detail": detail}).encode()
        await send(
            {
                "type": "websocket.http.response.start",
                "status": status,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "websocket.http.response.body", "body": body})
        return
    await send({"type": "websocket.close", "code": 1008, "reason": detail[:120]})


class AsyncBus:
    """The session's side of the bus (bus.py lays the keys out)."""

    def __init__(self, node_id: int) -> None:
        import redis.asyncio

        self.node_id = node_id
        self.r = redis.asyncio.Redis.from_url(settings.REDIS_URL)

    def _k(self, name: str) -> str:
        return bus.key(self.node_id, name)

    async def join(self, sid: str) -> None:
        await self.r.zadd(self._k("viewers"), {sid: time.time() + bus.VIEWER_TTL})

    async def leave(self, sid: str) -> None:
        await self.r.zrem(self._k("viewers"), sid)

    async def last_id(self) -> str:
        last = await self.r.xrevrange(self._k("out"), count=1)
        return last[0][0].decode() if last else "0-0"

    async def read(self, after: str) -> list[tuple[str, dict]]:
        got = await self.r.xread({self._k("out"): after}, block=BLOCK_MS, count=100)
        return [(eid.decode(), fields) for eid, fields in got[0][1]] if got else []

    async def relayed(self) -> bool:
        return bool(await self.r.exists(self._k("relay")))

    async def take_keyboard(self, holder: str) -> str:
        """'' when the keyboard is now ours (or was); else who holds it."""
        k = self._k("writer")
        if await self.r.set(k, holder, nx=True, ex=bus.WRITER_TTL):
            return ""
        now = await self.r.get(k)
        if now is None:
            return await self.take_keyboard(holder)
        now = now.decode()
        if now == holder:
            await self.r.expire(k, bus.WRITER_TTL)
            return ""
        return now

    async def drop_keyboard(self, holder: str) -> None:
        await self.r.eval(bus._IF_OURS_DELETE, 1, self._k("writer"), holder)

    async def type(self, data: bytes) -> None:
        pipe = self.r.pipeline()
        pipe.rpush(self._k("in"), data)
        pipe.expire(self._k("in"), bus.RELAY_TTL * 6)
        await pipe.execute()

    async def close(self) -> None:
        await self.r.aclose()


class Session:
    """One accepted socket: its reader of the bus, its keyboard, its counters."""

    def __init__(self, send, receive, node_id: int, opened: live.Opened, pool: Executor):
        self.send_, self.receive, self.node_id, self.opened = send, receive, node_id, opened
        self.pool = pool
        self.bus = AsyncBus(node_id)
        self.sid = str(opened.session_id)
        self.holder = f"{self.sid}|{opened.who}|{datetime.utcnow().isoformat(timespec='seconds')}"
        self.writer = False
        self.told: tuple[bool, str] | None = None  # what the client last heard of the keyboard
        self.typed = self.shown = 0
        self.last_key = time.monotonic()
        self.reason = "closed by the client"
        self.closed = False

    async def text(self, **message: Any) -> None:
        await self.send_({"type": "websocket.send", "text": json.dumps(message)})

    async def close(self, reason: str) -> None:
        """Tell the client why, and end the session (run() closes the socket: granian
        sends the close frame only once no receive() is pending)."""
        if self.closed:
            return
        self.closed, self.reason = True, reason
        with contextlib.suppress(Exception):  # the client may be gone already
            await self.text(closed=reason)

    async def keyboard(self) -> None:
        """Take the keyboard if it is free; tell the client when that changes."""
        holder = await self.bus.take_keyboard(self.holder)
        self.writer = holder == ""
        if (self.writer, holder) != self.told:
            self.told = (self.writer, holder)
            await self.text(
                keyboard=self.writer, holder=bus.describe_holder(holder) if holder else None
            )

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        await self.bus.join(self.sid)
        after = await self.bus.last_id()
        await self.text(hello=self.opened.hostname, session=self.opened.session_id)
        await self.keyboard()
        await self._ensure_relay(loop, force=False)
        tasks = [
            asyncio.create_task(self._receiver()),
            asyncio.create_task(self._reader(after)),
            asyncio.create_task(self._beat(loop)),
        ]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if task.exception() is not None:  # Redis gone, mostly: say so, end
                    LOG.warning(
                        "Console socket of node %s failed", self.node_id, exc_info=task.exception()
                    )
                    await self.close(f"the live console failed ({type(task.exception()).__name__})")
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if self.closed:  # ended here, not by the client: the close frame
                with contextlib.suppress(Exception):
                    await self.send_({"type": "websocket.close", "code": 1000})
            await self.bus.leave(self.sid)
            if self.writer:
                await self.bus.drop_keyboard(self.holder)
            await self.bus.close()

    async def _ensure_relay(self, loop, force: bool) -> None:
        if force or not await self.bus.relayed():
            from . import live

            await loop.run_in_executor(self.pool, live.ensure_relay, self.node_id)

    async def _receiver(self) -> None:
        while True:
            message = await self.receive()
            if message["type"] == "websocket.disconnect":
                if not self.closed:
                    self.reason = "closed by the client"
                return
            data = message.get("bytes")
            if data:
                if self.writer:
                    await self.bus.type(data)
                    self.typed += len(data)
                    self.last_key = time.monotonic()
                continue
            with contextlib.suppress(ValueError, TypeError, AttributeError):
                if json.loads(message.get("text") or "{}").get("take"):
                    await self.keyboard()

    async def _reader(self, after: str) -> None:
        while not self.closed:
            entries = await self.bus.read(after)
            for entry_id, fields in entries:
                after = entry_id
                to = fields.get(b"to", b"").decode()
                if to and to != self.sid:
                    continue
                if b"d" in fields:
                    self.shown += len(fields[b"d"])
                    await self.send_({"type": "websocket.send", "bytes": fields[b"d"]})
                elif b"s" in fields:
                    status = fields[b"s"].decode(errors="replace")
                    if fields.get(b"end"):
                        await self.close(status)
                        return
                    await self.text(status=status)

    async def _beat(self, loop) -> None:
        idle = settings.CORRAL_CONSOLE_IDLE_SECONDS
        no_relay_since: float | None = None
        while not self.closed:
            await asyncio.sleep(HEARTBEAT)
            await self.bus.join(self.sid)
            await self.keyboard()
            if time.monotonic() - self.last_key >= idle:
                await self.close(f"closed after {idle:g} s without a key typed")
                return
            if await self.bus.relayed():
                no_relay_since = None
            elif no_relay_since is None:
                no_relay_since = time.monotonic()
            elif time.monotonic() - no_relay_since >= RELAY_GRACE:
                await self.text(status="the console's relay is gone; asking for another")
                await self._ensure_relay(loop, force=True)
                no_relay_since = None


async def serve(scope: dict, receive, send, authorize: Authorize, pool: Executor) -> None:
    """Serve one console socket (fleet/asgi.py routes PATH here)."""
    match = PATH.match(scope["path"])
    assert match is not None
    node_id = int(match.group(1))
    loop = asyncio.get_running_loop()
    message = await receive()
    if message["type"] != "websocket.connect":
        return
    if not same_origin(scope):
        await refuse(scope, send, 403, "A console is opened from Corral's own pages only.")
        return
    status, answer = await loop.run_in_executor(pool, authorize, scope, node_id)
    if status != 200:
        await refuse(scope, send, status, str(answer.get("detail", "refused")))
        return
    from . import live  # the models: only once Django is set up (fleet/asgi.py imports us first)

    via = "browser" if header(scope, b"origin") else "cli"
    opened = await loop.run_in_executor(pool, live.open_session, node_id, answer["you"], via)
    if opened is None:
        await refuse(scope, send, 404, f"Node {node_id} was deleted.")
        return
    await send({"type": "websocket.accept"})
    session = Session(send, receive, node_id, opened, pool)
    try:
        await session.run()
    finally:
        await loop.run_in_executor(
            pool, live.close_session, opened, session.reason, session.typed, session.shown
        )
