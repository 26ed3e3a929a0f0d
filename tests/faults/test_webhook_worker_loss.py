"""A worker killed while it is POSTing a webhook: the delivery was not marked, so it stays
pending; once the dead pump's lease has run out, beat's sweep sends a pump to the worker
that replaced it, and the event arrives again under the SAME webhook-id (the receiver
de-duplicates on it). Nothing is lost, nothing is sent under a new id.

Real processes only: the production web server (the event is a node decommissioned over
the API), Celery workers on the webhook queue, a receiver verifying with standardwebhooks,
a redis-server of the test's own.
"""

import signal

import pytest
import requests

from tests.factories import NodeFactory, api_token
from tests.peers.util import wait_until
from tests.peers.webhook_receiver import webhook_receiver_factory  # noqa: F401
from tests.workers import start_worker, stop_worker
from webhooks import services
from webhooks.models import Delivery, WebhookEvent

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_a_worker_killed_mid_delivery_is_replaced_and_the_event_arrives_with_its_id(
    corral_web,
    users,
    worker_env,
    webhook_receiver_factory,  # noqa: F811
    tmp_path,
):
    sub, secret = services.create_subscription(
        "http://127.0.0.1:1/", ["node.state_changed"], actor="user:test"
    )
    receiver = webhook_receiver_factory(secret, mode="sleep")
    receiver.set_mode("sleep", sleep=60)  # holds the first POST open until the kill
    services.update_subscription(sub, {"url": receiver.url}, actor="user:test")
    env = {
        **worker_env,
        "CORRAL_WEBHOOK_TIMEOUT_SECONDS": "5",
        "CORRAL_WEBHOOK_LEASE_SECONDS": "8",  # outlasts one POST (the timeout)
        "CORRAL_WEBHOOK_SWEEP_SECONDS": "1",
    }
    queue = "webhooks"
    first = start_worker(env, tmp_path / "first.log", queues=queue)
    node = NodeFactory(state="enrolled")
    token = api_token(users["integration"])
    resp = requests.post(
        f"{corral_web}/api/v1/nodes/{node.pk}/actions/decommission/",
        json={"reason": "end of life"},
        headers={"Authorization": f"Token {token}"},
        timeout=30,
    )
    assert resp.status_code == 202, resp.text
    (event,) = WebhookEvent.objects.filter(type="node.state_changed")
    wait_until(lambda: receiver.accepted(), timeout=30, what="the first POST arriving")

    first.process.send_signal(signal.SIGKILL)  # mid-POST, no goodbye
    first.process.wait(timeout=10)
    delivery = Delivery.objects.get(event=event)
    assert (delivery.status, delivery.attempts) == ("pending", 0)  # the POST was not marked

    receiver.set_mode("ok")
    # A supervisor starts it again, with beat (its sweep finds the stranded delivery).
    second = start_worker(env, tmp_path / "second.log", "-B", queues=queue)
    try:
        wait_until(
            lambda: Delivery.objects.get(pk=delivery.pk).status == "succeeded",
            timeout=90,
            what="the delivery redone by the sweep",
        )
    finally:
        stop_worker(second)
    ids = [(r["msg_id"], r["mode"]) for r in receiver.accepted()]
    assert ids == [(event.msg_id, "sleep"), (event.msg_id, "ok")]
    assert not receiver.rejected()
