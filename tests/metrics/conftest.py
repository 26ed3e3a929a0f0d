"""The metrics tests' peers: the webhook receiver counts POSTs as a real endpoint does."""

from tests.peers.webhook_receiver import webhook_receiver_factory  # noqa: F401
