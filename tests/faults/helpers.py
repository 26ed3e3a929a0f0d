"""Helpers of the fault tests: act through the production web server, wait for work."""

import time

import requests

from inventory.models import Node, Operation


def act(corral_web: str, token: str, node: Node, action: str) -> int:
    resp = requests.post(
        f"{corral_web}/api/v1/nodes/{node.pk}/actions/{action}/",
        json={},
        headers={"Authorization": f"Token {token}"},
        timeout=30,
    )
    assert resp.status_code == 202, resp.text
    return resp.json()["id"]


def wait_running(op_id: int, timeout: float = 30) -> Operation:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        op = Operation.objects.get(pk=op_id)
        if op.status == "running" and op.progress >= 30:
            return op
        time.sleep(0.1)
    raise AssertionError(f"operation {op_id} never got going: {op.status} {op.message}")
