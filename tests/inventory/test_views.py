"""Dashboard pages for each role, and query counts that do not grow with the fleet."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from inventory.models import BMC, Node, SiteRole
from tests.factories import NodeFactory, RackFactory, user_in
from tests.fleets import grow_fleet

ROLES = ["manager", "technician", "integration", "admin"]


@pytest.mark.django_db
@pytest.mark.parametrize("role", ROLES)
def test_pages_render_for_each_role(client, users, node, role):
    client.force_login(users[role])
    for url in [
        reverse("fleet:overview"),
        reverse("inventory:node_list"),
        reverse("inventory:node_detail", args=[node.pk]),
        reverse("inventory:rack_detail", args=[node.rack_id]),
        reverse("inventory:rack_list"),
    ]:
        resp = client.get(url)
        assert resp.status_code == 200, url
        assert "s3cret-bmc-pass" not in resp.content.decode()
    detail = client.get(reverse("inventory:node_detail", args=[node.pk])).content.decode()
    # Buttons only for legal actions, and only for roles that may act.
    if role == "manager":
        assert 'data-action="' not in detail
    else:
        assert 'data-action="inspect"' in detail and 'data-action="decommission"' in detail
        assert 'data-action="drain"' not in detail and 'data-action="repaired"' not in detail
    imp = client.get(reverse("inventory:node_import"))
    assert imp.status_code == (200 if role in ("integration", "admin") else 403)


@pytest.mark.django_db
def test_anonymous_is_sent_to_login(client, node):
    resp = client.get(reverse("inventory:node_list"))
    assert resp.status_code == 302 and resp.url.startswith(reverse("login"))


@pytest.mark.django_db
def test_manager_cannot_post_an_action(client, users, node):
    client.force_login(users["manager"])
    resp = client.post(
        reverse("inventory:node_action", args=[node.pk, "decommission"]), {"reason": "x"}
    )
    assert resp.status_code == 403
    node.refresh_from_db()
    assert node.state == "enrolled"


@pytest.mark.django_db
def test_htmx_filter_returns_only_the_table_partial(client, users, rack):
    NodeFactory(rack=rack, hostname="alpha1")
    NodeFactory(rack=rack, hostname="beta1")
    client.force_login(users["technician"])
    resp = client.get(reverse("inventory:node_list"), {"q": "alpha"}, HTTP_HX_REQUEST="true")
    html = resp.content.decode()
    assert html.lstrip().startswith('<div id="node-table">')
    assert "alpha1" in html and "beta1" not in html and "<nav" not in html


@pytest.mark.django_db
def test_action_from_the_dashboard_moves_the_node(client, users, node):
    client.force_login(users["technician"])
    url = reverse("inventory:node_action", args=[node.pk, "decommission"])
    resp = client.post(url, {"reason": "dead PSU"}, HTTP_HX_REQUEST="true")
    assert resp.status_code == 200
    html = resp.content.decode()
    assert 'data-state="decommissioned"' in html and "dead PSU" in html
    resp = client.post(
        reverse("inventory:node_action", args=[node.pk, "inspect"]), HTTP_HX_REQUEST="true"
    )
    assert "is not allowed in that state" in resp.content.decode()


def count_queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(url).status_code == 200
    return len(ctx.captured_queries)


@pytest.mark.django_db
def test_query_count_does_not_grow_with_the_fleet(client, users, site):
    """The overview, the node list and a rack, fleet-wide and for a role held in the site:
    its pages are scoped to the site (issue 36) in the same queries, not one more per node.
    One fleet grown once for all six (it was grown six times: 1,000 nodes each)."""
    local = user_in(None, "site-tech")
    SiteRole.objects.create(user=local, role="technician", site=site)
    viewers = {"fleet-wide": users["technician"], "in the site": local}
    grow_fleet(site, 10, "a")
    rack = Node.objects.order_by("pk").first().rack_id
    pages = {
        "overview": reverse("fleet:overview"),
        "node_list": reverse("inventory:node_list"),
        "rack": reverse("inventory:rack_detail", args=[rack]),
    }

    def counts() -> dict[tuple[str, str], int]:
        out = {}
        for held, user in viewers.items():
            client.force_login(user)
            for page, url in pages.items():
                out[(page, held)] = count_queries(client, url)
        return out

    small = counts()
    grow_fleet(site, 990, "b")
    assert Node.objects.count() == 1000
    large = counts()
    print(f"query_count n10={small} n1000={large}")
    assert large == small


@pytest.mark.django_db
def test_admin_pages_render_without_secrets(client, node):
    from django.contrib.auth.models import User

    client.force_login(User.objects.create_superuser("root", password="x"))
    for url in [
        "/admin/inventory/node/",
        f"/admin/inventory/node/{node.pk}/change/",
        "/admin/provisioning/image/",
        "/admin/validation/gateprofile/",
        "/admin/validation/gaterun/",
        "/admin/provisioning/deployment/",
    ]:
        resp = client.get(url)
        assert resp.status_code == 200, url
        assert "s3cret-bmc-pass" not in resp.content.decode()


@pytest.mark.django_db
def test_admin_bmc_form_uses_the_driver_rules_and_keeps_a_blank_password(node):
    from inventory.admin import BMCAdminForm

    bmc = node.bmc
    data = {
        "node": node.pk,
        "protocol": "ipmi",
        "address": "10.0.0.9",
        "port": "623",
        "username": "u" * 17,
        "password": "",
        "verify_tls": "on",
        "system_id": "",
    }
    form = BMCAdminForm(data=data, instance=bmc)
    assert not form.is_valid()
    assert "IPMI user names are at most 16 bytes" in str(form.errors["username"])
    # A new destination needs the password again (tests/inventory/test_bmc_credentials.py)
    assert "give the password again" in str(form.errors["password"])
    form = BMCAdminForm(data={**data, "username": "admin", "password": "ipmi-pass"}, instance=bmc)
    assert form.is_valid(), form.errors
    form.save()
    bmc = BMC.objects.get(pk=bmc.pk)
    assert (bmc.protocol, bmc.username, bmc.password) == ("ipmi", "admin", "ipmi-pass")
    # Left blank with the destination unchanged, the stored password is kept.
    form = BMCAdminForm(data={**data, "username": "admin"}, instance=bmc)
    assert form.is_valid(), form.errors
    form.save()
    assert BMC.objects.get(pk=bmc.pk).password == "ipmi-pass"


@pytest.mark.django_db
def test_the_overview_says_which_queue_has_work_and_no_worker(client, users):
    from engine import workers
    from inventory import services
    from tests.factories import SiteFactory

    client.force_login(users["technician"])
    dc2 = RackFactory(site=SiteFactory(slug="dc2", name="DC two"))
    for _ in range(2):
        services.start_action(NodeFactory(rack=dc2), "power_on", actor="user:alice")
    workers.record("celery@dc1 pid 1", ["corral", "site.dc1"])

    page = client.get(reverse("fleet:overview")).content.decode()
    assert "No worker is listening on site.dc2</strong>: 2 operations waiting" in page

    workers.record("celery@dc2 pid 2", ["site.dc2"])
    assert "No worker is listening" not in client.get(reverse("fleet:overview")).content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize("htmx", [False, True])
@pytest.mark.parametrize(
    ("post", "says"),
    [
        ({"reason": "dead\x00PSU"}, "Reason: Null characters are not allowed."),
        ({"reason": "x", "param.then": "deploy\x00"}, "param.then: Contains a NUL character"),
    ],
)
def test_an_action_reason_or_param_that_cannot_be_stored_is_refused_naming_it(
    client, users, node, htmx, post, says
):
    """A NUL reached PostgreSQL from the page (the API's serializer refuses it): a 500.
    htmx swaps no 4xx, so it gets the node's panel with the message as a 200."""
    client.force_login(users["technician"])
    url = reverse("inventory:node_action", args=[node.pk, "decommission"])
    resp = client.post(url, post, **({"HTTP_HX_REQUEST": "true"} if htmx else {}))
    assert resp.status_code == (200 if htmx else 400)
    html = resp.content.decode()
    assert says in html
    node.refresh_from_db()
    assert node.state == "enrolled" and not node.operations.exists()
