"""Corral's Redis transport (fleet/broker.py) against a real redis-server: a message taken
and not yet acknowledged when Redis dies is not put back through the lost connection
with an error that would end the worker."""

import logging

from kombu import Connection, Consumer, Exchange, Queue

from fleet import broker
from tests.peers.redis import private_redis  # noqa: F401


def test_an_unacknowledged_message_held_when_redis_dies_is_let_go_with_a_warning(
    private_redis,  # noqa: F811
    caplog,
):
    broker.register()  # as the Celery app does at import
    queue = Queue("corral", Exchange("corral", "direct"), routing_key="corral")
    with Connection(private_redis.url) as conn:
        assert isinstance(conn.transport, broker.Transport)
        with conn.Producer() as producer:
            producer.publish(
                {"op": 1}, exchange=queue.exchange, routing_key="corral", declare=[queue]
            )
        channel = conn.channel()
        taken = []
        Consumer(channel, [queue], callbacks=[lambda body, message: taken.append(body)]).consume()
        conn.drain_events(timeout=5)
        assert taken == [{"op": 1}]
        assert len(channel.qos._delivered) == 1  # taken, not yet acknowledged

        private_redis.kill()
        # What closing the channel does (celery closes a connection it lost): kombu's own
        # transport raises here, and a worker's consumer treats that as unrecoverable.
        with caplog.at_level(logging.WARNING, logger="fleet.broker"):
            channel.qos.restore_unacked()
        assert not channel.qos._delivered
        assert "could not put 1 unacknowledged message(s) back" in caplog.text
