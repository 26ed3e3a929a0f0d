"""The egress policy (core.egress, issue 36 finding 15): what is refused in any spelling,
what the settings change, and webhooks: refused when written, refused again when
delivered (a name can change what it resolves to), never following a redirect."""

from __future__ import annotations

import logging

import pytest
from standardwebhooks import Webhook

from core import egress
from tests.peers.http_answers import answering
from tests.webhooks.factories import make_delivery, make_subscription
from webhooks import pump
from webhooks.delivery import post
from webhooks.models import Delivery, WebhookSubscription

LOOPBACK = ("127.0.0.0/8", "::1/128")
METADATA_SPELLINGS = [
    "169.254.169.254",
    "2852039166",  # the same address as one number: the system's resolver takes it
    "0xa9fea9fe",
    "::ffff:169.254.169.254",
    "[fd00:ec2::254]",
    "64:ff9b::a9fe:a9fe",  # through NAT64
    "100.100.100.200",
    "http://169.254.169.254/latest/meta-data/",
]


def refused(host: str, purpose: str, site=None) -> str | None:
    try:
        egress.check_destination(host, purpose, site)
    except egress.Refused as exc:
        return str(exc)
    return None


@pytest.mark.parametrize("purpose", egress.PURPOSES)
@pytest.mark.parametrize("host", METADATA_SPELLINGS)
def test_metadata_addresses_are_refused_whatever_the_deny_list_says(settings, host, purpose):
    settings.CORRAL_EGRESS_DENY = ()  # an operator who emptied it
    assert "cloud metadata address" in refused(host, purpose)


@pytest.mark.parametrize("host", ["0.0.0.0", "0", "::"])
def test_the_unspecified_address_is_refused(host):
    assert "reaches the local host" in refused(host, egress.WEBHOOK)


def test_by_default_link_local_is_refused_and_loopback_and_private_are_not():
    for host in ("169.254.10.5", "fe80::1", "fe80::1%lo", "224.0.0.1", "255.255.255.255"):
        assert "CORRAL_EGRESS_DENY" in refused(host, egress.BMC), host
    assert "169.254.10.5 is in 169.254.0.0/16 (link-local)" in refused("169.254.10.5", "bmc")
    for host in ("127.0.0.1", "localhost", "::1", "10.1.2.3", "192.168.0.9", "fd12::1"):
        assert refused(host, egress.BMC) is None, host


def test_the_deny_list_is_the_operators(settings):
    settings.CORRAL_EGRESS_DENY = ("169.254.0.0/16", *LOOPBACK)
    assert refused("127.0.0.1", egress.IMAGE) == (
        "127.0.0.1 is in 127.0.0.0/8 (a refused network), refused by CORRAL_EGRESS_DENY"
    )
    assert refused("localhost", egress.WEBHOOK).startswith("localhost resolves to ")
    assert refused("fe80::1", egress.BMC) is None  # no longer listed
    assert "cloud metadata" in refused("169.254.169.254", egress.BMC)


def test_allow_lists_limit_webhooks_and_images_to_their_networks(settings):
    settings.CORRAL_WEBHOOK_ALLOW = ("10.8.0.0/16",)
    assert refused("10.8.3.4", egress.WEBHOOK) is None
    assert refused("10.9.3.4", egress.WEBHOOK) == (
        "10.9.3.4 is not in CORRAL_WEBHOOK_ALLOW (10.8.0.0/16)"
    )
    assert refused("10.9.3.4", egress.IMAGE) is None  # images have a list of their own
    settings.CORRAL_IMAGE_ALLOW = ("192.0.2.0/24",)
    assert "CORRAL_IMAGE_ALLOW" in refused("10.9.3.4", egress.IMAGE)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "url", ["http://169.254.169.254/latest/", "https://[fe80::1]:8443/hook", "http://0xa9fea9fe/"]
)
def test_a_webhook_url_the_policy_refuses_is_a_400_naming_url(api, url):
    resp = api("admin").post(
        "/api/v1/webhooks/", {"url": url, "events": ["node.state_changed"]}, format="json"
    )
    assert resp.status_code == 400, resp.content
    assert "Refused by the egress policy" in str(resp.data["url"][0])
    assert not WebhookSubscription.objects.exists()


@pytest.mark.django_db
def test_a_webhook_url_whose_name_resolves_to_a_refused_address_is_refused(api, settings):
    sub = make_subscription("http://localhost:9/hook")  # loopback: allowed by default
    settings.CORRAL_EGRESS_DENY = LOOPBACK
    resp = api("admin").patch(
        f"/api/v1/webhooks/{sub.pk}/", {"url": "http://localhost:9/other"}, format="json"
    )
    assert resp.status_code == 400
    assert "localhost resolves to" in str(resp.data["url"][0])
    assert WebhookSubscription.objects.get(pk=sub.pk).url == "http://localhost:9/hook"


@pytest.mark.django_db
def test_a_delivery_to_a_name_now_refused_ends_with_the_reason(
    webhook_receiver_factory, settings, caplog
):
    """Written while allowed; by delivery time the policy (or what the name resolves to)
    says no: nothing is sent, the delivery ends failed with the reason, and it is logged."""
    sub = make_subscription()
    receiver = webhook_receiver_factory(sub.secret)
    url = receiver.url.replace("127.0.0.1", "localhost")
    WebhookSubscription.objects.filter(pk=sub.pk).update(url=url)
    delivery = make_delivery(sub)
    settings.CORRAL_EGRESS_DENY = LOOPBACK
    with caplog.at_level(logging.WARNING, logger="webhooks.pump"):
        assert pump.run(sub.pk) == 1
    delivery = Delivery.objects.get(pk=delivery.pk)
    assert delivery.status == "failed" and delivery.last_status_code is None
    assert delivery.last_error.startswith("not sent: localhost resolves to 127.0.0.1")
    assert "refused by CORRAL_EGRESS_DENY" in delivery.last_error
    assert receiver.records() == []
    assert "refused by CORRAL_EGRESS_DENY" in caplog.text

    settings.CORRAL_EGRESS_DENY = ()  # the policy allows it again: a new event goes
    make_delivery(sub)
    assert pump.run(sub.pk) == 1 and len(receiver.accepted()) == 1


@pytest.mark.django_db
def test_a_webhook_answered_with_a_redirect_is_not_followed():
    sub = make_subscription()
    with answering() as peer:
        url = peer.redirect("/hook", "http://169.254.169.254/latest/meta-data/")
        outcome = post(Webhook(sub.secret), url, "msg_1", "{}", 2)
        assert (outcome.ok, outcome.status_code, outcome.refused) == (False, 302, False)
        assert peer.asked == [("POST", "/hook")]
