"""The node filters, one filterset for the node list page and /api/v1/nodes/: what a
technician types (a MAC copied from a label, a site's name, "r01 U12") finds the node."""

import pytest
from django.urls import reverse

from inventory.models import NetworkInterface
from tests.factories import NodeFactory, RackFactory, SiteFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def fleet(rack):
    other = RackFactory(site=SiteFactory(name="Hall North", slug="north"), name="r02")
    nodes = {
        "a": NodeFactory(hostname="gpu-a", rack=rack, rack_unit=10, u_height=4,
                         gpu_model="H200-SXM", nic=None),
        "b": NodeFactory(hostname="gpu-b", rack=rack, rack_unit=20, u_height=2,
                         gpu_model="H100-SXM", nic=None),
        "c": NodeFactory(hostname="gpu-c", rack=other, rack_unit=12, u_height=1,
                         gpu_model="B200", nic=None),
    }  # fmt: skip
    NetworkInterface.objects.create(node=nodes["a"], mac="3c:ec:ef:01:01:a0", boot=True)
    NetworkInterface.objects.create(node=nodes["b"], mac="3c:ec:ef:02:02:b0", boot=True)
    NetworkInterface.objects.create(node=nodes["c"], mac="52:54:00:00:00:c0", boot=True)
    return nodes


def api_hosts(api, query: str) -> list[str]:
    resp = api("manager").get(f"/api/v1/nodes/?{query}")
    assert resp.status_code == 200, resp.content
    return [n["hostname"] for n in resp.data["results"]]


def page_hosts(client, users, query: str) -> list[str]:
    client.force_login(users["manager"])
    resp = client.get(f"{reverse('inventory:node_list')}?{query}")
    assert resp.status_code == 200
    return [n.hostname for n in resp.context["nodes"]]


@pytest.mark.parametrize(
    "typed, found",
    [
        ("3C-EC-EF-01-01-A0", ["gpu-a"]),
        ("3c:ec:ef:01:01:a0", ["gpu-a"]),
        ("3cec.ef01.01a0", ["gpu-a"]),
        ("3cecef0101a0", ["gpu-a"]),
        ("3C-EC-EF", ["gpu-a", "gpu-b"]),
        ("3cec.ef02", ["gpu-b"]),
        ("3cecef01", ["gpu-a"]),
        ("3c:ec:ef:0", ["gpu-a", "gpu-b"]),
    ],
)
def test_mac_in_any_notation_or_its_beginning(api, client, users, fleet, typed, found):
    from urllib.parse import urlencode

    assert api_hosts(api, urlencode({"q": typed})) == found
    assert page_hosts(client, users, urlencode({"q": typed})) == found


@pytest.mark.parametrize(
    "typed, found",
    [
        ("DC one", ["gpu-a", "gpu-b"]),
        ("dc ONE", ["gpu-a", "gpu-b"]),
        ("NORTH", ["gpu-c"]),
        ("hall north", ["gpu-c"]),
        ("nowhere", []),
    ],
)
def test_site_by_name_or_slug_any_case(api, client, users, fleet, typed, found):
    assert api_hosts(api, f"site={typed}") == found
    assert page_hosts(client, users, f"site={typed}") == found


def test_site_by_id_still_works(api, fleet):
    assert api_hosts(api, f"site={fleet['c'].rack.site_id}") == ["gpu-c"]


@pytest.mark.parametrize(
    "typed, found",
    [("H200", ["gpu-a"]), ("h200", ["gpu-a"]), ("H1", ["gpu-b"]), ("SXM", []), ("b200", ["gpu-c"])],
)
def test_gpu_model_by_its_beginning_any_case(api, client, users, fleet, typed, found):
    assert api_hosts(api, f"gpu_model={typed}") == found
    assert page_hosts(client, users, f"gpu_model={typed}") == found


@pytest.mark.parametrize(
    "where, found",
    [
        ("r01", ["gpu-a", "gpu-b"]),
        ("R01", ["gpu-a", "gpu-b"]),
        ("r01 U12", ["gpu-a"]),  # gpu-a is 4U from U10: U10-U13
        ("r01 U13", ["gpu-a"]),
        ("r01 u14", []),
        ("r01 U21", ["gpu-b"]),
        ("r02 U12", ["gpu-c"]),
        ("r01/U10", ["gpu-a"]),
    ],
)
def test_rack_location(api, client, users, fleet, where, found):
    from urllib.parse import urlencode

    assert api_hosts(api, urlencode({"rack": where})) == found
    assert page_hosts(client, users, urlencode({"rack": where})) == found
    assert page_hosts(client, users, urlencode({"q": where})) == found


def test_rack_id_and_none_still_work(api, fleet):
    NodeFactory(hostname="loose", rack=None)
    assert api_hosts(api, f"rack={fleet['c'].rack_id}") == ["gpu-c"]
    assert api_hosts(api, "rack=none") == ["loose"]


@pytest.mark.parametrize(
    "ordering, found",
    [
        ("gpu_model", ["gpu-c", "gpu-b", "gpu-a"]),
        ("-gpu_model", ["gpu-a", "gpu-b", "gpu-c"]),
        ("site", ["gpu-a", "gpu-b", "gpu-c"]),
        ("-site", ["gpu-c", "gpu-b", "gpu-a"]),  # the whole order reversed
        ("-rack", ["gpu-c", "gpu-b", "gpu-a"]),
        ("-hostname", ["gpu-c", "gpu-b", "gpu-a"]),
    ],
)
def test_ordering_is_shared_by_the_page_and_the_api(api, client, users, fleet, ordering, found):
    assert api_hosts(api, f"ordering={ordering}") == found
    assert page_hosts(client, users, f"ordering={ordering}") == found


def test_an_unknown_ordering_is_a_400_naming_it(api, fleet):
    resp = api("manager").get("/api/v1/nodes/?ordering=password")
    assert resp.status_code == 400 and "ordering" in resp.data


def test_sort_headers_keep_the_filters_and_show_the_direction(client, users, fleet):
    client.force_login(users["manager"])
    html = client.get(f"{reverse('inventory:node_list')}?site=dc1&ordering=serial").content
    html = html.decode()
    # Clicking Serial again reverses it; the site filter stays; back to page 1.
    assert 'href="?site=dc1&amp;ordering=-serial"' in html
    assert 'href="?site=dc1&amp;ordering=gpu_model"' in html
    assert "▲" in html
    # The filter form carries the sort: a filter typed, or the table reloaded after a bulk
    # action, keeps it.
    assert '<input type="hidden" name="ordering" value="serial" form="node-filter">' in html


def test_paging_links_keep_the_filters(client, users, rack):
    for i in range(205):
        NodeFactory(hostname=f"n{i:03d}", rack=rack)
    client.force_login(users["manager"])
    url = reverse("inventory:node_list")
    html = client.get(f"{url}?site=dc1&ordering=-hostname&page=2").content.decode()
    assert "Page 2 of 3 · 205 nodes" in html
    for page in ("1", "3"):
        assert f'href="?site=dc1&amp;ordering=-hostname&amp;page={page}"' in html
    first = client.get(f"{url}?site=dc1&ordering=-hostname&page=3").context["nodes"]
    assert [n.hostname for n in first][:2] == ["n004", "n003"]


def test_every_text_filter_applies_while_typing(client, users, fleet):
    """The filter form sends itself 300 ms after a key in any of its text boxes."""
    client.force_login(users["manager"])
    html = client.get(reverse("inventory:node_list")).content.decode()
    assert "input changed delay:300ms from:(#node-filter .live-filter)" in html
    for name in ("q", "site", "rack", "gpu_model", "label"):
        assert (
            f'live-filter" name="{name}"' in html
            or f'live-filter" type="search" name="{name}"' in html
        )


def test_the_forms_empty_fields_are_no_filter_and_keep_the_sort(client, users, fleet):
    """The filter form sends every box, empty ones too (state "any" is ""): the sort and
    the other filters still apply."""
    query = "q=&state=&site=&rack=&gpu_model=h&label=&ordering=-gpu_model"
    assert page_hosts(client, users, query) == ["gpu-a", "gpu-b"]
    client.force_login(users["manager"])
    html = client.get(f"{reverse('inventory:node_list')}?{query}").content.decode()
    assert '<span class="sort-arrow">▼</span>' in html
