"""A whole NVL72 enrolled from one description, all or nothing; every problem named by
its tray; written where the caller holds the role only."""

from __future__ import annotations

import pytest

from inventory.models import BMC, Node, Rack
from tests.factories import NodeFactory, RackFactory, SiteFactory
from tests.test_site_scope_api import site_client
from tests.trays.racks import nvl72

pytestmark = pytest.mark.django_db
URL = "/api/v1/rack-layouts/"


def test_an_nvl72_is_enrolled_from_one_description(api, site):
    resp = api("integration").post(URL, nvl72(), format="json")
    assert resp.status_code == 201, resp.content
    body = resp.json()
    assert body["template"] == "gb200-nvl72" and body["ready"] is False
    assert len(body["filled"]) == 71
    rack = Rack.objects.get(site=site, name="r12")
    assert rack.u_height == 48
    nodes = Node.objects.filter(rack=rack)
    assert nodes.count() == 71
    tray = nodes.get(serial="R12-COMPUTE-03")
    assert (tray.hostname, tray.role, tray.gpu_count) == ("r12-compute-03", "compute", 4)
    assert tray.rack_unit == 29  # compute trays 10-1 sit above the switches, U22-U31
    dpu = nodes.get(serial="R12-COMPUTE-03-DPU1")
    assert (dpu.role, dpu.rack_unit) == ("dpu", None)  # inside its compute tray
    assert nodes.get(serial="R12-SWITCH-1").role == "switch"
    assert nodes.get(serial="R12-POWER-1").role == "power_shelf"
    # The rack's credentials went to every tray, encrypted; never answered back.
    assert tray.bmc.password == "0penBmc" and tray.bmc.username == "root"
    assert "0penBmc" not in resp.content.decode()
    assert BMC.objects.filter(node__rack=rack, address="10.12.0.1").exists()
    # Nothing ready yet: every slot says what it waits for.
    assert body["waiting"][:3] == [
        "power-1 (r12-power-1): enrolled",
        "power-2 (r12-power-2): enrolled",
        "power-3 (r12-power-3): enrolled",
    ]
    assert "compute-01-dpu1 (r12-compute-01-dpu1): enrolled" in body["waiting"]


def test_every_problem_is_named_by_its_tray_and_nothing_is_enrolled(api, site):
    NodeFactory(serial="TAKEN-1", hostname="old-node")
    NodeFactory(hostname="holder", bmc__address="10.99.0.1")
    body = nvl72()
    trays = body["trays"]
    trays[0]["slot"] = "compute-19"  # the template has 18
    trays[2]["slot"] = trays[1]["slot"]  # power-7 twice
    trays[4]["bmc"]["address"] = trays[3]["bmc"]["address"]  # two trays, one BMC
    trays[5]["bmc"]["address"] = "10.99.0.1"  # another node's BMC
    trays[6]["serial"] = "TAKEN-1"
    trays[7]["serial"] = trays[8]["serial"]
    before = Node.objects.count()
    resp = api("integration").post(URL, body, format="json")
    assert resp.status_code == 400, resp.content
    errors = resp.json()
    assert errors["trays[0].slot"] == [
        "compute-19 is not a slot of gb200-nvl72 (71 slots: compute-01, compute-01-dpu0, "
        "compute-01-dpu1, compute-02, ...)."
    ]
    assert errors["trays[2].slot"] == ["power-7 is filled by trays[1] too."]
    assert errors["trays[4].bmc.address"] == [
        "10.12.0.4 is trays[3]'s BMC too: each tray has its own."
    ]
    assert errors["trays[5].bmc.address"] == ["10.99.0.1 is the BMC of holder already."]
    assert errors["trays[6].serial"] == ["Node with this Serial already exists."]
    assert errors["trays[8].serial"] == ["Node with this Serial already exists."]  # the 2nd
    assert Node.objects.count() == before
    assert not Rack.objects.filter(site=site, name="r12").exists()


def test_a_rack_that_holds_nodes_is_not_built_over(api, site):
    rack = RackFactory(site=site, name="r12", u_height=48)
    NodeFactory(rack=rack, rack_unit=1)
    resp = api("integration").post(URL, nvl72(), format="json")
    assert resp.status_code == 400
    assert "holds nodes" in resp.json()["rack_name"][0]
    empty = RackFactory(site=site, name="r13", u_height=48)
    resp = api("integration").post(URL, nvl72("r13", net="10.13"), format="json")
    assert resp.status_code == 201, resp.content
    assert resp.json()["rack"] == empty.pk
    resp = api("integration").post(URL, nvl72("r13", net="10.14"), format="json")
    assert resp.status_code == 400 and "built already" in resp.json()["rack_name"][0]
    # A name the rack rules refuse is named on the field the client sent.
    resp = api("integration").post(URL, {**nvl72("r 15", net="10.15")}, format="json")
    assert resp.status_code == 400 and list(resp.json()) == ["rack_name"], resp.content


def test_only_a_role_in_the_racks_site_enrols_it(api, site):
    hall_b = SiteFactory(slug="hall-b")
    outsider = site_client("integration", hall_b)
    resp = outsider.post(URL, nvl72(), format="json")
    assert resp.status_code == 403, resp.content
    assert not Rack.objects.filter(site=site, name="r12").exists()
    assert site_client("integration", site).post(URL, nvl72(), format="json").status_code == 201
    assert api("technician").post(URL, nvl72("r14", net="10.14"), format="json").status_code == 403
    # A reader of hall B does not see hall A's rack at all.
    reader = site_client("manager", hall_b)
    assert reader.get(URL).json()["count"] == 0
