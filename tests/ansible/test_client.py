"""The collection's HTTP client (plugins/module_utils/corral.py), in process against a real
Corral: pages followed, a node found by hostname or serial, an operation waited for until
it ends or the wait runs out, and Corral's refusals, a refused token, a redirect and an
unreachable address said as the `corral` command line says them, never with the token."""

from __future__ import annotations

import importlib

import pytest

from inventory.models import Operation
from tests.factories import NodeFactory, OperationFactory, RackFactory
from tests.peers.util import free_port

from .conftest import COLLECTIONS

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def corral(monkeypatch):
    monkeypatch.syspath_prepend(str(COLLECTIONS))
    return importlib.import_module("ansible_collections.corral.fleet.plugins.module_utils.corral")


def test_client_pages_waits_and_says_why_not(corral, corral_web, users, monkeypatch):
    from tests.conftest import token_for

    token = token_for(users["admin"])
    client = corral.Client(f"{corral_web}/api/v1/", token)
    rack = RackFactory(name="r01")
    for n in (1, 2, 3):
        NodeFactory(rack=rack, rack_unit=n * 2, hostname=f"gx-00{n}", serial=f"SN-{n}")
    monkeypatch.setattr(corral, "PAGE_SIZE", 2)  # two pages, `next` followed
    assert sorted(n["hostname"] for n in client.pages("nodes/")) == ["gx-001", "gx-002", "gx-003"]
    assert client.find_node("gx-002")["serial"] == "SN-2"
    assert client.find_node("SN-3")["hostname"] == "gx-003"
    assert client.find_node("gx-404") is None

    node = NodeFactory(rack=rack, rack_unit=20, hostname="gx-010", state="in_service")
    op = OperationFactory(node=node, kind="inspect", status="pending", progress=0)
    first = client.get(f"operations/{op.pk}/")
    still, ended = client.wait(first, timeout=0.2, interval=0.05)
    assert (still["status"], ended) == ("pending", False)

    def worker_ends_it(seconds: float) -> None:  # what a worker does while the client waits
        Operation.objects.filter(pk=op.pk).update(status="failed", error="BMC refused (401)")

    done, ended = client.wait(first, timeout=30, interval=0.01, sleep=worker_ends_it)
    assert ended and done["status"] == "failed"
    assert corral.outcome(done) == f"Operation {op.pk} (inspect) failed: BMC refused (401)"

    with pytest.raises(corral.ApiError) as refused:
        client.post(f"nodes/{node.pk}/actions/undrain/", {"reason": "", "params": {}})
    assert refused.value.status == 409
    assert "'Return to service' is not allowed in that state" in str(refused.value)
    assert "allowed now: " in str(refused.value) and "drain" in str(refused.value)

    with pytest.raises(corral.ApiError) as bad_token:
        corral.Client(corral_web, "not-a-token").get("nodes/")
    assert bad_token.value.status == 401
    assert "the token was refused" in str(bad_token.value)
    assert "not-a-token" not in str(bad_token.value)

    with pytest.raises(corral.CorralError, match="redirected to .*/api/v1/nodes/"):
        client.get("/api/v1/nodes")  # Corral's answer is a redirect to the slashed path

    elsewhere = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(corral.CorralError) as unreachable:
        corral.Client(elsewhere, token).get("nodes/")
    assert str(unreachable.value) == (
        f"Cannot reach Corral at {elsewhere}/api/v1/nodes/: [Errno 111] Connection refused"
    )
    assert token not in str(unreachable.value)

    with pytest.raises(corral.CorralError, match="is not a Corral URL"):
        corral.Client("corral.example.net", token)
    assert corral.normalise_mac("0C42.A100.0001") == "0c:42:a1:00:00:01"
