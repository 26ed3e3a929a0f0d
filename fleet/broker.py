"""The Redis broker transport, with the two calls kombu gets wrong when Redis goes away.

When a worker loses Redis, celery collects the connection (which releases its transport)
and then closes it. Two things then run through the released transport, and kombu's
`_connparams` raises AttributeError ("'NoneType' object has no attribute 'client'"),
which is not a connection error, so nothing catches it and the worker exits
("Unrecoverable error", and its embedded beat with it; celery/kombu #582, #970; still so
in celery 5.7.0 with kombu 5.7.0):

- closing the channel restores the messages the worker held but had not acknowledged
  (kombu's `restore_unacked`), and
- a task that was running when Redis went away acknowledges (or rejects) its message when
  it ends.

Here both do nothing for a released transport: there is no broker to tell. Nothing is
lost by it, because nothing that matters lives only in a message: an operation, a gate
step and a webhook delivery are rows written before their message is sent; a retry or a
wait is a row's `not_before` (docs/architecture.md, *The work engine*). A message that
was held and is gone is sent again by the engine's sweep: a pending operation whose task
never started after CORRAL_RESEND_PENDING_SECONDS, a gate step the same, a due retry at
once. (Before the engine, retries were messages with a countdown held in the worker, and
this module kept 200 lines of kombu internals to hold and put them back.)

`fleet.settings` selects this transport for redis:// broker URLs (CELERY_BROKER_TRANSPORT).
tests/faults/test_worker_outage.py and test_broker_midtask.py prove it against a real
Redis killed and restarted empty; they must pass before celery or kombu move.
"""

from __future__ import annotations

import logging

from kombu.transport import redis, virtual

log = logging.getLogger(__name__)


class QoS(redis.QoS):
    def _transport_released(self) -> bool:
        transport = self.channel.connection
        return transport is None or transport.client is None

    def restore_unacked(self, client: object = None) -> None:
        if self._transport_released():
            if self._delivered:
                log.warning(
                    "broker unreachable: %d unacknowledged message(s) not put back; "
                    "the engine's sweep sends their work again",
                    len(self._delivered),
                )
            self._delivered.clear()
            return
        super().restore_unacked(client)

    def ack(self, delivery_tag: str) -> None:
        if self._transport_released():
            virtual.QoS.ack(self, delivery_tag)  # the old connection: nothing to tell Redis
            return
        super().ack(delivery_tag)

    def reject(self, delivery_tag: str, requeue: bool = False) -> None:
        if self._transport_released():
            virtual.QoS.ack(self, delivery_tag)
            return
        super().reject(delivery_tag, requeue=requeue)


class Channel(redis.Channel):
    QoS = QoS


class Transport(redis.Transport):
    Channel = Channel
