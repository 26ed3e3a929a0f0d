"""A message is shown once on the page a save lands on (issue 29, finding 7: "Saved" twice
after a BMC edit). base.html shows the messages, and so does a page's live partial (the
node page's, for its HTMX refreshes); Django's message storage hands the same messages to
every loop in one request, so both showed them."""

import pytest
from django.urls import reverse

from .test_edit_views import bmc_payload, node_payload


@pytest.mark.django_db
def test_saving_a_bmc_says_saved_once_on_the_node_page(client, users, node):
    client.force_login(users["integration"])
    resp = client.post(
        reverse("inventory:bmc_edit", args=[node.pk]), bmc_payload(node.bmc), follow=True
    )
    assert resp.redirect_chain == [(node.get_absolute_url(), 302)]
    assert resp.content.decode().count(f"Saved the BMC of {node.hostname}.") == 1


@pytest.mark.django_db
def test_saving_a_node_says_saved_once_and_its_next_refresh_not_again(client, users, node):
    client.force_login(users["integration"])
    resp = client.post(reverse("inventory:node_edit", args=[node.pk]), node_payload(node))
    assert resp.status_code == 302
    page = client.get(resp.url).content.decode()
    assert page.count(f"Saved {node.hostname}.") == 1
    # The live partial's next refresh (HTMX) has nothing left to show.
    live = client.get(resp.url, headers={"HX-Request": "true"}).content.decode()
    assert f"Saved {node.hostname}." not in live


@pytest.mark.django_db
def test_a_message_reaches_a_live_partial_alone(client, users, node):
    """A partial served alone (an HTMX action answered with the node's live panel) still
    shows its message: once per response, not never."""
    client.force_login(users["technician"])
    resp = client.post(
        reverse("inventory:node_action", args=[node.pk, "nonesuch"]),
        headers={"HX-Request": "true"},
    )
    assert resp.content.decode().count('role="alert"') == 1
