"""A BMC's address meets the egress policy again when a worker connects (issue 36, finding
15): the policy or the site's BMC networks may have changed since it was written, a name
may resolve elsewhere now, and a Redfish BMC may redirect. Refused: nothing is sent, and
the node and the operation say why (not retried)."""

from __future__ import annotations

import pytest

from inventory import services as inventory
from inventory.models import BMC, Node, Site
from provisioning import services, tasks
from provisioning.drivers import BMCFatalError, get_driver
from tests.factories import NodeFactory
from tests.peers.http_answers import answering

pytestmark = pytest.mark.django_db


def pointing_at(node: Node, address: str) -> Node:
    BMC.objects.filter(node=node).update(address=address, verify_tls=False)
    return Node.objects.select_related("bmc", "rack__site").get(pk=node.pk)


def test_a_bmc_refused_since_it_was_written_is_not_contacted(node, settings):
    settings.CORRAL_EGRESS_DENY = ("10.0.0.0/8",)  # the factory's BMCs are on 10.0.x.y
    with pytest.raises(BMCFatalError) as raised:
        services.bmc_settings(Node.objects.get(pk=node.pk))
    assert "was not contacted: 10.0." in str(raised.value)
    assert "refused by CORRAL_EGRESS_DENY" in str(raised.value)
    assert not raised.value.retryable


def test_a_site_narrowed_since_is_refused_and_the_node_says_why(node):
    Site.objects.filter(pk=node.rack.site_id).update(bmc_networks=["10.50.0.0/16"])
    services.refresh_power(Node.objects.select_related("bmc").get(pk=node.pk))
    node.refresh_from_db()
    assert node.bmc_health == "error"
    assert "is not in site DC one's BMC networks (10.50.0.0/16)" in node.bmc_message


def test_a_name_now_resolving_to_a_refused_address_fails_the_inspection(node, settings):
    with answering() as peer:  # would answer, if it were asked
        port = peer.url.rsplit(":", 1)[1]
        node = pointing_at(node, f"http://localhost:{port}")
        settings.CORRAL_EGRESS_DENY = ("127.0.0.0/8", "::1/128")
        op = inventory.start_action(node, "inspect", actor="tech")
        assert tasks.inspect_node.apply(args=[op.pk]).get() == "failed"
        assert peer.asked == []
    op.refresh_from_db()
    assert "was not contacted: localhost resolves to " in op.error
    assert "gave up after" not in op.error  # refused at once, never retried
    assert Node.objects.get(pk=node.pk).bmc_message == op.error


def test_a_redfish_redirect_to_the_metadata_address_is_refused_at_the_hop():
    node = NodeFactory(rack=None)
    with answering() as peer:
        peer.redirect("/redfish/v1/", "http://169.254.169.254/redfish/v1/")
        node = pointing_at(node, peer.url)
        with (
            get_driver(services.bmc_settings(node)) as driver,
            pytest.raises(BMCFatalError) as raised,
        ):
            driver.inspect.inspect()
        assert peer.asked == [("GET", "/redfish/v1/")]
    assert str(raised.value) == (
        f"BMC at {peer.url} was not contacted: 169.254.169.254 is a cloud metadata "
        "address, which Corral never connects to (docs/egress.md)"
    )
