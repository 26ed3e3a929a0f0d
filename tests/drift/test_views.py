"""The drift matrix as people see it: roles, columns and coloured cells, filters, paging,
the HTMX table, constant query counts, and the CSV export."""

import csv
import io
import re

import pytest
from django.urls import reverse

from drift.selectors import summary
from tests.drift.fleet import MODEL, ODD_VBIOS, report
from tests.factories import NodeFactory, RackFactory, SiteFactory

pytestmark = pytest.mark.django_db
ROLES = ["manager", "technician", "integration", "admin"]
MATRIX = reverse("drift:matrix")


def hostnames(html: str) -> list[str]:
    return re.findall(r'<tr data-node="([^"]+)">', html)


def cells(html: str, hostname: str) -> dict[str, tuple[str, str, str]]:
    """component -> (status, bootstrap class, text shown) for one row."""
    row = re.search(rf'<tr data-node="{re.escape(hostname)}">(.*?)</tr>', html, re.S).group(1)
    found = re.findall(
        r'<td class="cell ([^"]*)" data-status="([^"]+)" data-component="([^"]+)"'
        r'.*?title="([^"]*)"><a href="([^"]+)">([^<]*)</a>',
        row,
        re.S,
    )
    return {comp: (status, cls, text) for cls, status, comp, _title, _href, text in found}


@pytest.mark.parametrize("role", ROLES)
def test_every_drift_page_renders_for_each_role(client, users, drift_fleet, hgx_baseline, role):
    client.force_login(users[role])
    node = drift_fleet["drifted"]
    for url in [
        MATRIX,
        reverse("drift:skew"),
        reverse("drift:export"),
        reverse("drift:node_panel", args=[node.pk]),
        reverse("drift:baseline_list"),
        reverse("drift:baseline_detail", args=[hgx_baseline.pk]),
    ]:
        assert client.get(url).status_code == 200, url
    html = client.get(MATRIX).content.decode()
    acts = role != "manager"
    assert ('name="nodes"' in html) is acts
    assert ('id="reimage-button"' in html) is acts
    assert 'id="nav-drift"' in html


def test_anonymous_is_sent_to_login(client, drift_fleet):
    for url in [MATRIX, reverse("drift:skew"), reverse("drift:export")]:
        resp = client.get(url)
        assert resp.status_code == 302 and resp.url.startswith(reverse("login"))


def test_columns_expected_values_counts_and_coloured_cells(client, users, drift_fleet):
    client.force_login(users["manager"])
    html = client.get(MATRIX).content.decode()
    assert hostnames(html) == ["n-drifted", "n-ok", "n-stale", "n-unknown"]
    # Columns in the engine's order: OS stack, firmware, then per-GPU components.
    assert re.findall(r'<th data-component="([^"]+)"', html) == [
        "driver",
        "firmware.BMC",
        "gpu.vbios",
    ]
    assert 'title="expected: 1.45">1.45</div>' in html
    drifted_links = re.findall(
        r'class="drifted-link[^"]*" href="\?([^"]+)"[^>]*>(\d+) drifted', html
    )
    counts = {re.search(r"component=([^&]+)", q).group(1): int(n) for q, n in drifted_links}
    assert counts == {"driver": 0, "firmware.BMC": 1, "gpu.vbios": 1}
    assert "only_drifted=true" in drifted_links[1][0]

    assert cells(html, "n-ok") == {
        "driver": ("ok", "table-success", "550.90.07"),
        "firmware.BMC": ("ok", "table-success", "1.45"),
        "gpu.vbios": ("ok", "table-success", "96.00.89.00.01"),
    }
    drifted = cells(html, "n-drifted")
    assert drifted["firmware.BMC"] == ("drift", "table-danger", "1.40")
    # One odd GPU out of eight: the cell drifts and shows both values with their counts.
    assert drifted["gpu.vbios"] == ("drift", "table-danger", f"96.00.89.00.01 ×7, {ODD_VBIOS} ×1")
    assert drifted["driver"][0] == "ok"
    assert {s for s, _c, _t in cells(html, "n-unknown").values()} == {"unknown"}
    assert cells(html, "n-unknown")["driver"] == ("unknown", "table-secondary", "unknown")
    assert {c for _s, c, _t in cells(html, "n-stale").values()} == {"table-warning"}
    assert 'id="drift-count">4 nodes, 1 drifted<' in html


def test_cells_link_to_the_node_page_and_carry_a_tooltip(client, users, drift_fleet):
    client.force_login(users["manager"])
    html = client.get(MATRIX).content.decode()
    node = drift_fleet["drifted"]
    row = re.search(r'<tr data-node="n-drifted">(.*?)</tr>', html, re.S).group(1)
    links = re.findall(r'<a href="([^"]+)"', row)
    assert links and set(links) == {node.get_absolute_url()}
    bmc = re.search(r'data-component="firmware.BMC"\s+title="([^"]*)"', row).group(1)
    assert "expected 1.45" in bmc and "redfish" in bmc
    vbios = re.search(r'data-component="gpu.vbios"\s+title="([^"]*)"', row).group(1)
    assert f"GPU 7: {ODD_VBIOS} (drift)" in vbios


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"only_drifted": "true"}, ["n-drifted"]),
        ({"component": "firmware.BMC", "only_drifted": "true"}, ["n-drifted"]),
        ({"component": "driver", "only_drifted": "true"}, []),
        ({"site": "dc2"}, ["n-stale", "n-unknown"]),
        ({"q": "stale"}, ["n-stale"]),
        ({"state": "ready"}, ["n-drifted"]),
        ({"state": ["", "ready"], "site": ""}, ["n-drifted"]),  # the form's "any" is ignored
        ({"model": "other"}, []),
    ],
)
def test_filters(client, users, drift_fleet, params, expected):
    client.force_login(users["technician"])
    html = client.get(MATRIX, params).content.decode()
    assert hostnames(html) == expected
    assert "ignored" not in html


def test_rack_filter_and_the_filtered_column_is_marked(client, users, drift_fleet):
    client.force_login(users["technician"])
    rack = drift_fleet["ok"].rack
    html = client.get(MATRIX, {"rack": rack.pk, "component": "gpu.vbios"}).content.decode()
    assert hostnames(html) == ["n-drifted", "n-ok"]
    assert '<th data-component="gpu.vbios" class="filtered">' in html


def test_htmx_gets_the_table_region_only(client, users, drift_fleet):
    client.force_login(users["manager"])
    resp = client.get(MATRIX, {"only_drifted": "true"}, headers={"HX-Request": "true"})
    html = resp.content.decode()
    assert html.lstrip().startswith('<div id="drift-table">')
    assert "navbar" not in html and 'id="drift-filter"' not in html
    assert hostnames(html) == ["n-drifted"]


def test_paging_fifty_rows_a_page(client, users, hgx_baseline):
    rack = RackFactory(site=SiteFactory(slug="big"))
    NodeFactory.create_batch(55, rack=rack, model=MODEL)
    client.force_login(users["manager"])
    first = client.get(MATRIX).content.decode()
    assert len(hostnames(first)) == 50
    assert "Page 1 of 2" in first and "page=2" in first
    second = client.get(MATRIX, {"page": 2}).content.decode()
    assert len(hostnames(second)) == 5
    assert not set(hostnames(first)) & set(hostnames(second))
    assert 'id="drift-count">55 nodes, 0 drifted<' in second


def _fleet(n: int) -> None:
    rack = RackFactory(site=SiteFactory(slug=f"s{n}"))
    for i, node in enumerate(NodeFactory.create_batch(n, rack=rack, model=MODEL)):
        report(node, bmc="1.40" if i % 3 == 0 else "1.45")


@pytest.mark.parametrize("size", [3, 30])
def test_matrix_queries_do_not_grow_with_the_nodes(
    client, users, hgx_baseline, size, django_assert_num_queries
):
    _fleet(size)
    client.force_login(users["technician"])
    client.get(MATRIX)  # warm: session, content types
    # session, user, roles; summary (2 grouped reads + totals); one page of nodes; their
    # cells; their attestation standings; the work under way on them; the image chooser;
    # the page around the table: the nav's RMA count and groups, sites and racks for the
    # filter form.
    with django_assert_num_queries(16):
        html = client.get(MATRIX).content.decode()
    assert len(hostnames(html)) == size
    with django_assert_num_queries(12):  # the HTMX table: no filter-form choices
        client.get(MATRIX, {"only_drifted": "true"}, headers={"HX-Request": "true"})


def test_csv_export_has_one_row_per_node_with_the_filters(client, users, drift_fleet):
    client.force_login(users["manager"])
    resp = client.get(reverse("drift:export"), {"site": "dc1"})
    assert resp["Content-Type"] == "text/csv"
    rows = list(csv.reader(io.StringIO(b"".join(resp.streaming_content).decode())))
    assert rows[0] == [
        "hostname", "site", "rack", "state", "drifted",
        "driver observed", "driver status",
        "firmware.BMC observed", "firmware.BMC status",
        "gpu.vbios observed", "gpu.vbios status",
    ]  # fmt: skip
    assert rows[1] == [
        "n-drifted", "dc1", "a01", "ready", "firmware.BMC gpu.vbios",
        "550.90.07", "ok", "1.40", "drift", f"96.00.89.00.01 ×7, {ODD_VBIOS} ×1", "drift",
    ]  # fmt: skip
    assert rows[2][:5] == ["n-ok", "dc1", "a01", "enrolled", ""]
    assert len(rows) == 3


def test_csv_export_quotes_what_a_spreadsheet_would_run(client, users, hgx_baseline):
    """A rack name or a firmware version read from a BMC is someone else's text: a cell
    that could start a formula is written behind a quote (core.csvsafe), a plain negative
    number as it is."""
    rack = RackFactory(site=SiteFactory(slug="dc9"), name='=HYPERLINK("http://x","y")')
    node = NodeFactory(rack=rack, hostname="n-evil", model=MODEL)
    report(node, bmc="@SUM(1)", driver="-3.5", vbios=["+cmd"] * 8)
    client.force_login(users["manager"])
    resp = client.get(reverse("drift:export"))
    rows = list(csv.DictReader(io.StringIO(b"".join(resp.streaming_content).decode())))
    row = next(r for r in rows if r["hostname"] == "n-evil")
    assert row["rack"] == '\'=HYPERLINK("http://x","y")'
    assert row["firmware.BMC observed"] == "'@SUM(1)"
    assert row["gpu.vbios observed"] == "'+cmd"
    assert row["driver observed"] == "-3.5"


def test_csv_export_reads_in_chunks(client, users, hgx_baseline, django_assert_max_num_queries):
    import drift.views.matrix as matrix

    _fleet(7)
    matrix_chunk, matrix.CSV_CHUNK = matrix.CSV_CHUNK, 3
    try:
        client.force_login(users["manager"])
        resp = client.get(reverse("drift:export"))
        with django_assert_max_num_queries(2 * 3):  # 3 chunks: nodes + cells each
            body = b"".join(resp.streaming_content).decode()
    finally:
        matrix.CSV_CHUNK = matrix_chunk
    assert len(body.strip().splitlines()) == 8


def test_summary_matches_what_the_headers_say(drift_fleet):
    from inventory.models import Node

    got = summary(Node.objects.all())["components"]["gpu.vbios"]
    assert got["versions"] == {"96.00.89.00.01": 23, ODD_VBIOS: 1}


def test_each_column_and_the_summary_say_how_compliant_the_fleet_is(client, users, drift_fleet):
    """Of the four nodes expected to run each component, one is unknown everywhere and one
    drifted on the BMC and a GPU's VBIOS: half compliant there, three quarters on the
    driver (a stale OK reading still counts as running it)."""
    from inventory.models import Node

    client.force_login(users["manager"])
    html = client.get(MATRIX).content.decode()
    shown = re.findall(
        r'<th data-component="([^"]+)".*?class="small fw-normal compliance"[^>]*>([^<]+)<',
        html,
        re.S,
    )
    assert shown == [
        ("driver", "75.0 % compliant"),
        ("firmware.BMC", "50.0 % compliant"),
        ("gpu.vbios", "50.0 % compliant"),
    ]
    got = summary(Node.objects.all())["components"]
    assert {name: (c["nodes"], c["compliance_pct"]) for name, c in got.items()} == {
        "driver": (4, 75.0),
        "firmware.BMC": (4, 50.0),
        "gpu.vbios": (4, 50.0),
    }


def test_work_under_way_on_a_node_shows_beside_its_state(client, users, drift_fleet):
    from inventory.models import Node, Operation

    node = Node.objects.get(hostname="n-drifted")
    Operation.objects.create(
        node=node,
        kind="apply_firmware",
        status="running",
        actor="user:tech",
        message="updating BMC to 1.45",
    )
    client.force_login(users["manager"])
    html = client.get(MATRIX).content.decode()
    badges = re.findall(
        r'class="badge text-bg-info work-under-way" href="([^"]+)" title="([^"]+)"', html
    )
    op = Operation.objects.get(node=node)
    assert badges == [
        (
            node.get_absolute_url(),
            f"operation #{op.pk}: apply_firmware running: updating BMC to 1.45",
        )
    ]
