"""A phone-home comes from the node (issue 36, finding 16): from an address of one of its
interfaces, or through a NAT or relay the operator named (CORRAL_PHONE_HOME_RELAYS). One
from anywhere else is refused with the reason, recorded on the deployment and logged, and
the token still works for the node itself."""

from __future__ import annotations

import logging

import pytest

from inventory.models import NetworkInterface
from provisioning.models import Deployment
from tests.factories import ImageFactory, NodeFactory
from tests.provisioning.bootserver.test_endpoints import TOKEN, deploying

pytestmark = pytest.mark.django_db
NODE_IP = "10.20.0.11"
ELSEWHERE = "203.0.113.5"


@pytest.fixture
def image(db):
    return ImageFactory()


@pytest.fixture
def node(rack):
    node = NodeFactory(rack=rack)
    NetworkInterface.objects.filter(node=node).update(ip=NODE_IP)
    return node


def phone(client, node, ip: str, **headers):
    body = {"token": TOKEN, "hostname": node.hostname, "kernel": "6.8.0"}
    return client.post(
        "/boot/callback", body, content_type="application/json", REMOTE_ADDR=ip, **headers
    )


def test_a_phone_home_from_another_address_is_refused_recorded_and_harmless(
    client, node, image, caplog
):
    deployment = deploying(node, image)
    with caplog.at_level(logging.WARNING, logger="corral.boot"):
        resp = phone(client, node, ELSEWHERE)
    assert resp.status_code == 403
    detail = resp.json()["detail"]
    assert ELSEWHERE in detail and "not an address of the node" in detail
    assert NODE_IP not in detail and node.hostname not in detail  # told nothing of the node
    node.refresh_from_db()
    deployment.refresh_from_db()
    assert node.state == "deploying" and not node.events.exists()
    assert deployment.status == "waiting"
    # The operator sees it on the node page (the deployment's problem) and in the log.
    assert deployment.error == (
        f"phone-home refused from {ELSEWHERE}: not an address of {node.hostname} ({NODE_IP})"
    )
    assert f"phone-home refused from {ELSEWHERE}" in caplog.text
    # The node itself still phones home with the same token.
    assert phone(client, node, NODE_IP).status_code == 200
    node.refresh_from_db()
    assert node.state == "validating"
    # Once used, it is not answered "already recorded" to someone else either.
    assert phone(client, node, ELSEWHERE).status_code == 403


def test_any_of_the_nodes_interfaces_may_phone_home(client, node, image):
    NetworkInterface.objects.create(node=node, mac="52:54:00:aa:bb:01", ip="10.30.0.11")
    deployment = deploying(node, image)
    assert phone(client, node, "10.30.0.11").status_code == 200
    deployment.refresh_from_db()
    assert deployment.booted["remote_addr"] == "10.30.0.11"


def test_a_named_relay_may_phone_home_for_any_node(client, node, image, settings):
    settings.CORRAL_PHONE_HOME_RELAYS = ("192.0.2.0/24",)
    deployment = deploying(node, image)
    assert phone(client, node, "192.0.2.7").status_code == 200
    deployment.refresh_from_db()
    assert deployment.booted["remote_addr"] == "192.0.2.7"


def test_the_address_is_the_one_a_trusted_proxy_saw(client, node, image, settings):
    settings.CORRAL_TRUSTED_PROXIES = ("10.0.0.2/32",)
    deploying(node, image)
    # A machine elsewhere cannot claim the node's address in a header of its own ...
    forged = phone(client, node, ELSEWHERE, HTTP_X_FORWARDED_FOR=NODE_IP)
    assert forged.status_code == 403
    # ... nor through the proxy, which appends the address it saw.
    through = phone(client, node, "10.0.0.2", HTTP_X_FORWARDED_FOR=f"{NODE_IP}, {ELSEWHERE}")
    assert through.status_code == 403
    assert phone(client, node, "10.0.0.2", HTTP_X_FORWARDED_FOR=NODE_IP).status_code == 200


def test_a_node_corral_knows_no_address_of_is_answered_from_where_it_is(client, rack, image):
    """No interface with an address (a dynamic DHCP pool): nothing to compare with. The
    phone-home is taken, and the deployment keeps where it came from."""
    node = NodeFactory(rack=rack)
    deployment = deploying(node, image)
    assert phone(client, node, ELSEWHERE).status_code == 200
    assert Deployment.objects.get(pk=deployment.pk).booted["remote_addr"] == ELSEWHERE
