"""Reimage and converge from the matrix, the node page's drift panel and the version skew chart."""

import json
import re

import pytest
from django.contrib.staticfiles import finders
from django.urls import reverse

from drift import services
from inventory.models import Operation
from tests.drift.fleet import ODD_VBIOS, report
from tests.factories import DeploymentFactory, ImageFactory

pytestmark = pytest.mark.django_db
REIMAGE = reverse("drift:reimage")


@pytest.fixture
def deployed(drift_fleet):
    """n-drifted and n-ok last got ubuntu-gpu:2026.11.1, so it is the image they should run."""
    image = ImageFactory()
    ImageFactory(version="2026.12.0")
    for key in ("drifted", "ok"):
        DeploymentFactory(node=drift_fleet[key], image=image, status="succeeded")
    services.recompute([n.pk for n in drift_fleet.values()])
    return image


def test_reimage_starts_one_bulk_deploy_with_the_expected_image(
    client, users, drift_fleet, deployed
):
    client.force_login(users["technician"])
    ok, drifted = drift_fleet["ok"], drift_fleet["drifted"]
    html = client.post(
        f"{REIMAGE}?only_drifted=true",
        {"nodes": [drifted.pk, ok.pk], "image": ""},
        headers={"HX-Request": "true"},
    ).content.decode()
    parent = Operation.objects.get(kind="bulk_deploy")
    assert parent.params["nodes"] == [drifted.pk, ok.pk]
    children = {c.node.hostname: c for c in parent.children.select_related("node")}
    assert children["n-drifted"].status == "pending"
    assert children["n-drifted"].params["image_name"] == "ubuntu-gpu:2026.11.1"
    # n-ok is enrolled, not ready: the existing per-node refusal, shown next to it.
    assert children["n-ok"].status == "skipped" and children["n-ok"].error
    drifted.refresh_from_db()
    assert drifted.state == "deploying"
    assert f"operation #{parent.pk} started on 1 node; 1 refused" in html
    assert reverse("api:operation-detail", args=[parent.pk]) in html
    assert children["n-ok"].error in html.replace("&#x27;", "'")
    assert re.findall(r'<tr data-node="([^"]+)">', html) == ["n-drifted"]  # filters kept


def test_reimage_with_a_chosen_image(client, users, drift_fleet, deployed):
    client.force_login(users["technician"])
    node = drift_fleet["drifted"]
    client.post(REIMAGE, {"nodes": [node.pk], "image": "ubuntu-gpu:2026.12.0"})
    [child] = Operation.objects.get(kind="bulk_deploy").children.all()
    assert child.params["image_name"] == "ubuntu-gpu:2026.12.0"


def test_reimage_refusals_write_nothing(client, users, drift_fleet, deployed):
    client.force_login(users["technician"])
    node = drift_fleet["drifted"]
    html = client.post(REIMAGE, {"image": ""}).content.decode()
    assert "Tick at least one node." in html
    html = client.post(REIMAGE, {"nodes": [node.pk], "image": "nope:1"}).content.decode()
    assert "Reimage not started" in html and "nope:1" in html
    unknown = drift_fleet["unknown"]  # never deployed: no expected image to default to
    html = client.post(REIMAGE, {"nodes": [unknown.pk]}).content.decode()
    assert "has been deployed yet: pick the image" in html
    assert not Operation.objects.filter(kind="bulk_deploy").exists()


def test_a_manager_may_not_reimage(client, users, drift_fleet, deployed):
    client.force_login(users["manager"])
    resp = client.post(REIMAGE, {"nodes": [drift_fleet["drifted"].pk]})
    assert resp.status_code == 403
    assert not Operation.objects.exists()


CONVERGE = reverse("drift:converge")


def test_converge_starts_one_bulk_converge_on_the_ticked_nodes(client, users, drift_fleet):
    client.force_login(users["technician"])
    ok, drifted = drift_fleet["ok"], drift_fleet["drifted"]
    html = client.post(
        f"{CONVERGE}?only_drifted=true",
        {"nodes": [drifted.pk, ok.pk]},
        headers={"HX-Request": "true"},
    ).content.decode()
    parent = Operation.objects.get(kind="bulk_converge")
    children = {c.node.hostname: c for c in parent.children.select_related("node")}
    assert children["n-drifted"].kind == "converge"
    assert children["n-drifted"].status in ("pending", "running")
    # n-ok is enrolled: converging needs a node inspected at least (ready or further).
    assert children["n-ok"].status == "skipped" and children["n-ok"].error
    assert f"Converge: operation #{parent.pk} started on 1 node; 1 refused" in html
    assert re.findall(r'<tr data-node="([^"]+)">', html) == ["n-drifted"]  # filters kept


def test_a_manager_may_not_converge_and_no_tick_is_said(client, users, drift_fleet):
    client.force_login(users["manager"])
    assert client.post(CONVERGE, {"nodes": [drift_fleet["drifted"].pk]}).status_code == 403
    client.force_login(users["technician"])
    assert "Tick at least one node." in client.post(CONVERGE, {}).content.decode()
    assert not Operation.objects.exists()


def test_node_panel_shows_expected_observed_per_gpu_history_and_extra_facts(
    client, users, drift_fleet, hgx_baseline
):
    node = drift_fleet["drifted"]
    from inventory import facts

    facts.record(node, "phone-home", {"kernel": "6.8.0-45"})
    report(node, bmc="1.45", vbios=["96.00.89.00.01"] * 7 + [ODD_VBIOS])  # BMC fixed
    client.force_login(users["manager"])
    html = client.get(reverse("drift:node_panel", args=[node.pk])).content.decode()
    assert "1 component out of baseline." in html
    assert f'href="{hgx_baseline.get_absolute_url()}">hgx-h100</a> r1' in html
    bmc = re.search(
        r'<tr class="table-success" data-component="firmware.BMC"(.*?)</tr>', html, re.S
    )
    assert bmc and "1.45" in bmc.group(1) and "redfish" in bmc.group(1)
    gpu7 = re.search(r'data-gpu="7" data-status="drift">(.*?)</tr>', html, re.S).group(1)
    assert ODD_VBIOS in gpu7
    assert html.count('data-component="gpu.vbios" data-gpu=') == 8
    assert "kernel" in re.search(r'id="drift-extra">(.*?)</details>', html, re.S).group(1)
    history = re.findall(r'<tr data-kind="(\w+)">.*?font-monospace">([^<]+)<', html, re.S)
    assert ("resolved", "firmware.BMC") in history
    assert ("detected", "firmware.BMC") in history and ("detected", "gpu.vbios GPU 7") in history


def test_node_page_loads_the_panel(client, users, drift_fleet):
    node = drift_fleet["drifted"]
    client.force_login(users["manager"])
    html = client.get(node.get_absolute_url()).content.decode()
    assert f'hx-get="{reverse("drift:node_panel", args=[node.pk])}"' in html


def test_skew_chart_counts_gpus_and_marks_the_expected_version(client, users, drift_fleet):
    client.force_login(users["manager"])
    html = client.get(reverse("drift:skew"), {"component": "gpu.vbios"}).content.decode()
    assert 'src="/static/vendor/plotly/plotly.min.js"' in html
    assert 'id="skew-chart"' in html and 'data-plotly-for="skew-chart"' in html
    rows = re.findall(
        r'<tr data-version="([^"]+)"><td[^>]*>[^<]*</td><td>(\d+)</td><td>(.*?)</td>', html
    )
    assert [(v, int(n), "not expected" not in m) for v, n, m in rows] == [
        ("96.00.89.00.01", 23, True),
        (ODD_VBIOS, 1, False),
    ]
    assert "#198754" in html and "#dc3545" in html  # expected bar green, the odd one red
    assert "counted in GPUs" in html


def test_skew_follows_the_filters_and_lists_every_component(client, users, drift_fleet):
    client.force_login(users["manager"])
    html = client.get(
        reverse("drift:skew"), {"component": "firmware.BMC", "site": "dc1"}
    ).content.decode()
    picker = re.search(r'id="id_component"(.*?)</select>', html, re.S).group(1)
    assert re.findall(r'<option value="([^"]+)"', picker) == [
        "driver",
        "firmware.BMC",
        "gpu.vbios",
    ]
    rows = re.findall(r'<tr data-version="([^"]+)"><td[^>]*>[^<]*</td><td>(\d+)</td>', html)
    assert rows == [("1.45", "1"), ("1.40", "1")] or rows == [("1.40", "1"), ("1.45", "1")]
    assert "component=firmware.BMC" in html and "only_drifted=true" in html


def test_plotly_js_is_served_from_the_package(client):
    path = finders.find("vendor/plotly/plotly.min.js")
    assert path and path.endswith("plotly.min.js")
    resp = client.get("/static/vendor/plotly/plotly.min.js")
    assert resp.status_code == 200
    body = b"".join(resp.streaming_content) if resp.streaming else resp.content
    assert b"plotly" in body[:2000].lower()


def test_skew_chart_data_cannot_break_out_of_its_script_element(client, users, drift_fleet):
    """A fact is whatever a node reported: "<!--<script>" in a data block put the HTML
    parser in its double-escaped state, where "</script>" no longer ends the element and
    the rest of the page became chart data (issue 36, finding 12)."""
    hostile = "<!--<script>1</script>&"
    report(drift_fleet["ok"], bmc=hostile)
    services.recompute([drift_fleet["ok"].pk])
    client.force_login(users["manager"])
    html = client.get(reverse("drift:skew"), {"component": "firmware.BMC"}).content.decode()
    [block] = re.findall(r'<script type="application/json" data-plotly-for="skew-chart">', html)
    data = html.split(block, 1)[1].split("</script>", 1)[0]
    for raw in ("<!--", "<script", "</", "-->", "&"):
        assert raw not in data
    assert hostile in json.dumps(json.loads(data), ensure_ascii=False)
    assert html.rstrip().endswith("</html>") and 'id="skew-table"' in html
