"""The Redis broker transport, with the messages a worker holds kept across a broker outage.

A worker holds messages it has taken but not acknowledged: tasks waiting for their ETA (a
retry's countdown), reserved tasks and, with acks_late, running ones. kombu's Redis
transport copies them into an `unacked` hash in Redis and, when the worker closes its
channel, puts them back on their queues. Two things go wrong when Redis itself goes away
(celery 5.7.0, kombu 5.7.0, the newest releases):

- The worker dies. On a lost connection celery collects the connection (which releases
  the transport) and then closes it; the close restores the unacked messages through the
  released transport, and kombu's `_connparams` raises AttributeError ("'NoneType' object
  has no attribute 'hostname'"), which is not a connection error, so nothing catches it:
  "Unrecoverable error", the worker exits and its embedded beat with it. (celery/kombu
  #582 and #970 are the same trace from older releases; no release fixes this path.)
- The held messages are lost. Restoring needs the broker that has just gone; the copy in
  the `unacked` hash is gone too when Redis restarts empty (ours may run without
  persistence), and celery drops the ETA timers of the lost connection, expecting the
  broker to redeliver. This is celery/celery#1307, closed unfixed; celery 5.6.3 with
  kombu 5.6.2 survives the outage but never runs those tasks either.

So this transport keeps, in the worker's memory, each message it could not restore
(`HELD`), and `RestoreHeldMessages`, a step of the worker's consumer, puts them back on
their queues once the worker has reconnected and declared its queues again: from the
`unacked` hash when Redis kept it (so a message is restored once, not twice), from memory
when Redis came back empty. A task that finishes while the broker is away is not restored
(its ack settles the held copy). A worker stopped before the broker comes back loses what
it held (the log names each task); the operations those tasks serve stay recorded in
PostgreSQL, and their deadlines end them with a reason.

`fleet.settings` selects this transport for redis:// broker URLs (CELERY_BROKER_TRANSPORT).
It leans on kombu's Redis QoS internals (`_delivered`, `restore_by_tag`,
`_remove_from_indices`, `Channel._do_restore_message`), so constraints.txt pins kombu and
tests/faults/test_worker_outage.py must pass before it moves.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from functools import partial
from typing import Any

from celery import bootsteps
from kombu.transport import redis, virtual
from kombu.utils.encoding import bytes_to_str
from kombu.utils.json import loads

log = logging.getLogger(__name__)


@dataclass
class Held:
    tag: str
    payload: dict[str, Any]
    exchange: str
    routing_key: str
    # Acked or rejected (without requeue) after it was held: only its `unacked` entry
    # is removed, the message is not put back.
    settled: bool = False

    @property
    def task(self) -> str:
        headers = self.payload.get("headers") or {}
        return f"{headers.get('task', '?')}[{headers.get('id', self.tag)}]"


class HeldMessages:
    """The messages of this process that wait for the broker to come back (thread-safe:
    a threads-pool worker acks from its task threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[str, Held] = {}

    def __len__(self) -> int:
        with self._lock:
            return len(self._held)

    def hold(self, tag: str, message: Any) -> Held:
        delivery = message.delivery_info
        held = Held(tag, message._raw, delivery["exchange"], delivery["routing_key"])
        with self._lock:
            self._held[tag] = held
        return held

    def settle(self, tag: str) -> bool:
        """Mark a held message done; False if it is not held (already restored)."""
        with self._lock:
            held = self._held.get(tag)
            if held is not None:
                held.settled = True
            return held is not None

    def snapshot(self) -> list[Held]:
        with self._lock:
            return list(self._held.values())

    def discard(self, tag: str) -> None:
        with self._lock:
            self._held.pop(tag, None)


HELD = HeldMessages()


class QoS(redis.QoS):
    """kombu's Redis ack emulation, except that what cannot reach the broker is held."""

    def _transport_released(self) -> bool:
        transport = self.channel.connection
        return transport is None or transport.client is None

    def restore_unacked(self, client: Any = None) -> None:
        self._flush()
        pending = list(self._delivered.items())
        self._delivered.clear()
        done = 0
        if pending and not self._transport_released():
            try:
                with self.channel.conn_or_acquire(client) as client:
                    for tag, _ in pending:
                        self.restore_by_tag(tag, client=client)
                        done += 1
            except self.channel.connection_errors:
                pass  # the broker is down: hold the rest rather than wait on it per message
        held = [HELD.hold(tag, message) for tag, message in pending[done:]]
        if held:
            log.warning(
                "broker unreachable: holding %d message(s) in this worker until it is back "
                "(lost if the worker stops first): %s",
                len(held),
                ", ".join(h.task for h in held),
            )

    def ack(self, delivery_tag: str) -> None:
        HELD.settle(delivery_tag)  # a task that ended is not put back
        if self._transport_released():
            virtual.QoS.ack(self, delivery_tag)  # the old connection: nothing to tell Redis
            return
        super().ack(delivery_tag)

    def reject(self, delivery_tag: str, requeue: bool = False) -> None:
        if self._transport_released():
            if not requeue:
                HELD.settle(delivery_tag)
            virtual.QoS.ack(self, delivery_tag)  # requeued: the held copy is put back
            return
        super().reject(delivery_tag, requeue=requeue)

    def restore_held(self) -> int:
        """Put the held messages back on their queues; returns how many.

        Each message is restored in one Redis transaction, as kombu's restore_by_tag does:
        the copy in `unacked` when Redis kept it (removing it there, so restore_visible
        does not restore it a second time), else the copy held in memory.
        """
        restored = 0
        try:
            with self.channel.conn_or_acquire() as client:
                for held in HELD.snapshot():
                    client.transaction(partial(self._restore_one, held=held), self.unacked_key)
                    HELD.discard(held.tag)
                    restored += not held.settled
        except self.channel.connection_errors as exc:
            log.warning("broker unreachable again (%s): still holding %d", exc, len(HELD))
        if restored:
            log.warning("broker back: restored %d held message(s)", restored)
        return restored

    def _restore_one(self, pipe: Any, held: Held) -> None:
        stored = pipe.hget(self.unacked_key, held.tag)
        pipe.multi()
        self._remove_from_indices(held.tag, pipe)
        if held.settled:
            return
        if stored:
            payload, exchange, routing_key = loads(bytes_to_str(stored))
        else:
            payload, exchange, routing_key = held.payload, held.exchange, held.routing_key
        self.channel._do_restore_message(payload, exchange, routing_key, pipe)


class Channel(redis.Channel):
    QoS = QoS


class Transport(redis.Transport):
    Channel = Channel


class RestoreHeldMessages(bootsteps.StartStopStep):
    """A worker consumer step: after each (re)connection, once the task consumer has
    declared its queues (an empty Redis has lost their bindings), put back what was held
    while the broker was away."""

    requires = ("celery.worker.consumer.tasks:Tasks",)

    def start(self, c: Any) -> None:
        if len(HELD):
            qos = c.connection.default_channel.qos
            if isinstance(qos, QoS):
                qos.restore_held()
