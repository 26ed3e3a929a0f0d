"""The bus between a node's console relay (relay.py, on its site's worker: the only host
that reaches the BMC) and the people at that console (socket.py, in any web process).

Redis, as the broker is. Per node, under `corral:console:<node>:`

    relay    the relay's token while one holds the console (expires RELAY_TTL after its
             last refresh: a worker that dies frees it)
    out      a stream of what the console showed (`d`), and of what happened to it
             (`s`, a status line; `end` on the last); an entry with `to` is for one
             session only (the screen a newcomer is shown)
    in       keystrokes, pushed by the session holding the keyboard, popped by the relay
    viewers  the sessions watching: a sorted set of session id -> when it lapses
    writer   "<session id>|<who>|<since>" while a session holds the keyboard
    record   a recording asked of the relay already running (json)

Without Redis (`make run`'s embedded default: a filesystem broker, no shared memory
between web and worker) there is no live console; LocalBus lets the relay record alone.
"""

from __future__ import annotations

import contextlib
import json
import time
from datetime import datetime
from functools import lru_cache
from typing import Any

from django.conf import settings

RELAY_TTL = 10  # seconds
VIEWER_TTL = 15  # seconds a session stays listed without a heartbeat
WRITER_TTL = 15  # seconds the keyboard stays held without a heartbeat
STREAM_ENTRIES = 2000  # about; entries of the out stream kept (readers are live)
KEPT_AFTER = 300  # seconds the out stream stays readable after its relay ended
POOL_CONNECTIONS = 200  # Redis connections of one process's relays, at most
POOL_WAIT_SECONDS = 10

# Refresh or drop a key only while it still holds what we put there.
_OURS_OR_FREE = "local v = redis.call('get', KEYS[1]) if v == ARGV[1] or not v then redis.call('set', KEYS[1], ARGV[1], 'EX', ARGV[2]) return 1 end return 0"  # noqa: E501
_IF_OURS_DELETE = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"  # noqa: E501
)


NO_BUS = (
    "Live consoles need the shared bus between web and workers (REDIS_URL), which this "
    "installation has not set. Recorded consoles are on the node's page."
)


def available() -> bool:
    """Whether this installation has the shared bus a live console needs."""
    return bool(getattr(settings, "REDIS_URL", ""))


def key(node_id: int, name: str) -> str:
    return f"corral:console:{node_id}:{name}"


@lru_cache(maxsize=1)
def _client():
    import redis

    # A pool that waits for a connection rather than failing: a worker's relays share it,
    # and a watched relay holds one while it waits for keys.
    pool = redis.BlockingConnectionPool.from_url(
        settings.REDIS_URL, max_connections=POOL_CONNECTIONS, timeout=POOL_WAIT_SECONDS
    )
    return redis.Redis(connection_pool=pool, health_check_interval=30)


class Bus:
    """A relay's side of the bus, for one node (sync: the relay is a worker thread)."""

    def __init__(self, node_id: int, client: Any = None) -> None:
        self.node_id = node_id
        self.r = client or _client()

    def _k(self, name: str) -> str:
        return key(self.node_id, name)

    # -- who relays -------------------------------------------------------------------
    def claim(self, token: str) -> bool:
        return bool(self.r.set(self._k("relay"), token, nx=True, ex=RELAY_TTL))

    def refresh(self, token: str) -> bool:
        """Keep the claim (taking it again if it lapsed while the relay was busy: a slow
        attach); False only when another relay has taken it since."""
        return bool(self.r.eval(_OURS_OR_FREE, 1, self._k("relay"), token, RELAY_TTL))

    def relayed(self) -> bool:
        """Whether a relay holds the node's console now."""
        return bool(self.r.exists(self._k("relay")))

    def release(self, token: str) -> None:
        self.r.eval(_IF_OURS_DELETE, 1, self._k("relay"), token)
        self.r.expire(self._k("out"), KEPT_AFTER)

    # -- what is asked of it ----------------------------------------------------------
    def ask_record(self, operation_id: int | None, state: str) -> None:
        ask = json.dumps({"operation_id": operation_id, "state": state})
        self.r.set(self._k("record"), ask, ex=RELAY_TTL * 6)

    def take_record(self) -> tuple[int | None, str] | None:
        raw = self.r.getdel(self._k("record"))
        if not raw:
            return None
        ask = json.loads(raw)
        return ask["operation_id"], ask["state"]

    def viewers(self) -> list[str]:
        """The sessions watching now (lapsed ones dropped)."""
        now = time.time()
        pipe = self.r.pipeline()
        pipe.zremrangebyscore(self._k("viewers"), "-inf", now)
        pipe.zrange(self._k("viewers"), 0, -1)
        return [sid.decode() for sid in pipe.execute()[1]]

    def asked(self) -> tuple[tuple[int | None, str] | None, list[str]]:
        """A recording asked for (taken), and the sessions watching: one round trip, as
        a relay asks each turn of its loop."""
        pipe = self.r.pipeline()
        pipe.getdel(self._k("record"))
        pipe.zremrangebyscore(self._k("viewers"), "-inf", time.time())
        pipe.zrange(self._k("viewers"), 0, -1)
        raw, _, viewers = pipe.execute()
        ask = json.loads(raw) if raw else None
        record = (ask["operation_id"], ask["state"]) if ask else None
        return record, [sid.decode() for sid in viewers]

    def wanted(self) -> bool:
        """Someone still wants the console: a recording asked, or a viewer."""
        return bool(self.r.exists(self._k("record"))) or bool(self.viewers())

    # -- the console's two directions -------------------------------------------------
    def publish(self, data: bytes, to: str = "") -> None:
        fields: dict[str, Any] = {"d": data}
        if to:
            fields["to"] = to
        self.r.xadd(self._k("out"), fields, maxlen=STREAM_ENTRIES, approximate=True)

    def status(self, text: str, *, end: bool = False, to: str = "") -> None:
        fields: dict[str, Any] = {"s": text}
        if end:
            fields["end"] = "1"
        if to:
            fields["to"] = to
        self.r.xadd(self._k("out"), fields, maxlen=STREAM_ENTRIES, approximate=True)

    def keys(self, timeout: float) -> bytes:
        """What the keyboard's holder typed, waiting up to `timeout` for the first of it."""
        got = self.r.blpop([self._k("in")], timeout=timeout)
        if not got:
            return b""
        more = self.r.lpop(self._k("in"), 64) or []
        return got[1] + b"".join(more)


class LocalBus:
    """No shared bus: the relay records; nobody can watch (bus.available() is False)."""

    def __init__(self, node_id: int) -> None:
        self.node_id = node_id
        self._record: tuple[int | None, str] | None = None

    def claim(self, token: str) -> bool:
        return True

    def refresh(self, token: str) -> bool:
        return True

    def relayed(self) -> bool:
        return False

    def release(self, token: str) -> None:
        return None

    def ask_record(self, operation_id: int | None, state: str) -> None:
        self._record = (operation_id, state)

    def take_record(self) -> tuple[int | None, str] | None:
        ask, self._record = self._record, None
        return ask

    def viewers(self) -> list[str]:
        return []

    def asked(self) -> tuple[tuple[int | None, str] | None, list[str]]:
        return self.take_record(), []

    def wanted(self) -> bool:
        return self._record is not None

    def publish(self, data: bytes, to: str = "") -> None:
        return None

    def status(self, text: str, *, end: bool = False, to: str = "") -> None:
        return None

    def keys(self, timeout: float) -> bytes:
        time.sleep(timeout)  # the relay's tick: nobody types where nobody can watch
        return b""


def describe_holder(holder: str) -> str:
    """A `writer` value as a person reads it: 'tina (since 10:02 UTC)'."""
    parts = holder.split("|", 2)
    who = parts[1] if len(parts) > 1 else "another session"
    since = ""
    if len(parts) > 2:
        with contextlib.suppress(ValueError):
            since = f" (since {datetime.fromisoformat(parts[2]):%H:%M} UTC)"
    return f"{who}{since}"


def keyboard_holder(node_id: int) -> str:
    """Who holds the node's keyboard now, as a person reads it; "" when nobody does."""
    holder = _client().get(key(node_id, "writer")) if available() else None
    return describe_holder(holder.decode()) if holder else ""


def for_node(node_id: int) -> Bus | LocalBus:
    return Bus(node_id) if available() else LocalBus(node_id)
