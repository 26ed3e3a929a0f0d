"""kombu's Redis transport, with one fault mended: a worker must not exit because Redis
went away while it held a message it had not yet acknowledged.

Tasks are acknowledged as they start and a worker takes a message only when a thread is
free (fleet/settings_celery.py), so the window is short: the message has arrived, its
acknowledgement has not gone out. On a busy machine it is long enough. When Redis dies
inside it, celery closes the lost connection and kombu tries to put the message back
through it; its client is gone by then, and kombu 5.7.0 raises AttributeError
("'NoneType' object has no attribute 'hostname'"), which celery treats as unrecoverable:
the worker exits, and every retry it held waits for a restart (seen here under CPU load
in tests/faults/test_worker_outage.py; most likely that test's failure in CI too).

Nothing is lost by not putting it back then. Redis either kept the message in its
`unacked` hash (it only dropped the connection), and kombu restores it to its queue after
the visibility timeout, or Redis restarted empty and the message is gone either way. The
work behind it is a row: the engine's sweep sends again whatever was sent and never
begun (engine/outbox.py, CORRAL_RESEND_PENDING_SECONDS).

`fleet.celery` registers this class for the redis:// and rediss:// schemes (kombu's own
registry of transports), so every connection of the process uses it, the web server's
publishing ones included.
"""

from __future__ import annotations

import logging
from typing import Any

import redis
from kombu import transport as kombu_transport
from kombu.transport import TRANSPORT_ALIASES
from kombu.transport import redis as kombu_redis

log = logging.getLogger(__name__)

# What putting a message back through a lost connection raises: kombu's AttributeError
# from a client already released, or redis-py's errors from a server that is not there.
_LOST = (AttributeError, OSError, redis.exceptions.RedisError)


class QoS(kombu_redis.QoS):
    def restore_unacked(self, client: Any = None) -> Any:
        try:
            return super().restore_unacked(client)
        except _LOST as exc:
            count = len(self._delivered)
            self._delivered.clear()
            log.warning(
                "could not put %d unacknowledged message(s) back: the broker connection is "
                "gone (%s: %s); Redis restores them after its visibility timeout, or the "
                "engine's sweep sends their work again",
                count,
                type(exc).__name__,
                exc,
            )
            return None


class Channel(kombu_redis.Channel):
    QoS = QoS


class Transport(kombu_redis.Transport):
    Channel = Channel


def register() -> None:
    """Make redis:// and rediss:// URLs use this transport, in this process."""
    for scheme in ("redis", "rediss"):
        TRANSPORT_ALIASES[scheme] = f"{__name__}:Transport"
        # kombu caches what a name resolved to; one resolved before this ran is dropped.
        getattr(kombu_transport, "_transport_cache", {}).pop(scheme, None)
