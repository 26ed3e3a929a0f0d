"""The modules of corral.fleet run by the real `ansible-playbook` against a real Corral:
corral_node enrols a node (then changes nothing on a second run, says what it would change
in check mode, and writes only what differs), corral_action runs an action to its end and
fails with Corral's reason when the node's state refuses it, corral_rma moves the case that
action opened. No password is ever printed."""

from __future__ import annotations

import pytest

from inventory.models import Node, Operation
from rma.models import Case
from tests.factories import NodeFactory, RackFactory, SiteFactory

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "bmc-pass-for-ansible"
CONNECTION = {"url": "{{ corral_url }}", "token": "{{ corral_token }}"}
ENROL = {
    "name": "enrol",
    "corral.fleet.corral_node": {
        "serial": "SN-A1",
        "hostname": "gx-101",
        "site": "dc1",
        "rack": "r01",
        "unit": "{{ unit }}",
        "u_height": 4,
        "model": "HGX H100 8-GPU",
        "gpu_model": "H100-SXM",
        "gpu_count": 8,
        "labels": "{{ labels }}",
        "bmc": {
            "protocol": "redfish",
            "address": "{{ bmc_address }}",
            "username": "admin",
            "password": "{{ bmc_password }}",
        },
        "interfaces": "{{ nics }}",
    },
}
FACTS = {
    "unit": 1,
    "labels": ["pool-a", "env=prod"],
    "bmc_address": "https://10.20.0.11",
    "bmc_password": PASSWORD,
    "nics": [
        {"mac": "0C-42-A1-00-00-01", "name": "eno1", "boot": True, "ip": "10.30.0.11"},
        {"mac": "0c42.a100.0002", "name": "eno2"},
    ],
}


def plays(*tasks: dict, defaults: bool = True) -> list[dict]:
    """One play on localhost; with `defaults`, the connection set once for the collection's
    action group (module_defaults), else taken from CORRAL_URL and CORRAL_TOKEN."""
    play: dict = {"hosts": "localhost", "gather_facts": False, "connection": "local"}
    if defaults:
        play["module_defaults"] = {"group/corral.fleet.corral": CONNECTION}
    play["tasks"] = list(tasks)
    return [play]


def test_corral_node_enrols_idempotently_with_check_mode_and_diff(ansible, corral_web, users):
    from tests.conftest import token_for

    rack = RackFactory(site=SiteFactory(slug="dc1"), name="r01", u_height=42)
    connection = {"corral_url": corral_web, "corral_token": token_for(users["admin"])}
    ansible.write("facts.yml", {**FACTS, **connection})
    book = plays(ENROL)
    common = ("-i", "localhost,", "-e", "@facts.yml")

    first, tasks = ansible.playbook(book, *common)
    assert first.code == 0, first.text
    assert tasks["enrol"].status == "changed"
    assert "bmc.password" in tasks["enrol"]["changed_fields"]
    node = Node.objects.get(serial="SN-A1")
    assert (node.hostname, node.rack, node.rack_unit, node.u_height) == ("gx-101", rack, 1, 4)
    assert sorted(node.labels.values_list("name", flat=True)) == ["env=prod", "pool-a"]
    assert (node.bmc.address, node.bmc.password) == ("https://10.20.0.11", PASSWORD)
    nics = {n.mac: (n.name, n.ip, n.boot) for n in node.interfaces.all()}
    assert nics == {
        "0c:42:a1:00:00:01": ("eno1", "10.30.0.11", True),
        "0c:42:a1:00:00:02": ("eno2", None, False),
    }
    assert tasks["enrol"]["node"]["id"] == node.pk

    again, tasks = ansible.playbook(book, *common)
    assert again.code == 0, again.text
    assert tasks["enrol"].status == "ok"
    assert tasks["enrol"]["changed_fields"] == []
    assert "changed=0" in again.out

    ansible.write("moved.yml", {"unit": 9, "labels": ["pool-b"]})
    check, tasks = ansible.playbook(book, *common, "-e", "@moved.yml", "--check", "--diff")
    assert check.code == 0, check.text
    assert tasks["enrol"].status == "changed"
    assert tasks["enrol"]["changed_fields"] == ["labels", "rack_unit"]
    assert '-    "rack_unit": 1,' in check.out and '+    "rack_unit": 9,' in check.out
    node.refresh_from_db()
    assert node.rack_unit == 1  # check mode wrote nothing
    assert sorted(node.labels.values_list("name", flat=True)) == ["env=prod", "pool-a"]

    # The BMC moves (so its password goes with it), the boot NIC changes, one NIC goes.
    changed = {
        "unit": 9,
        "bmc_address": "https://10.20.0.12",
        "nics": [
            {"mac": "0c:42:a1:00:00:02", "name": "eno2", "boot": True, "ip": "10.30.0.12"},
            {"mac": "0c:42:a1:00:00:03", "name": "eno3"},
        ],
    }
    ansible.write("changed.yml", changed)
    update, tasks = ansible.playbook(book, *common, "-e", "@changed.yml", "--diff")
    assert update.code == 0, update.text
    assert tasks["enrol"].status == "changed"
    assert tasks["enrol"]["changed_fields"] == [
        "rack_unit", "bmc.address", "bmc.password", "interfaces"
    ]  # fmt: skip
    node = Node.objects.get(pk=node.pk)
    assert (node.rack_unit, node.bmc.address, node.bmc.password) == (
        9, "https://10.20.0.12", PASSWORD
    )  # fmt: skip
    nics = {n.mac: (n.name, n.ip, n.boot) for n in node.interfaces.all()}
    assert nics == {
        "0c:42:a1:00:00:02": ("eno2", "10.30.0.12", True),
        "0c:42:a1:00:00:03": ("eno3", None, False),
    }
    for ran in (first, again, check, update):
        assert PASSWORD not in ran.unwrapped
        assert connection["corral_token"] not in ran.unwrapped
    returned = "".join(p.read_text() for p in ansible.root.glob("results-*.jsonl"))
    assert "bmc" in returned and PASSWORD not in returned  # every value a task returned


def test_corral_action_and_corral_rma(ansible, corral_web, users):
    from tests.conftest import token_for

    rack = RackFactory(site=SiteFactory(slug="dc1"), name="r01")
    enrolled = NodeFactory(rack=rack, rack_unit=1, hostname="gx-101", serial="SN-A1")
    failed = NodeFactory(rack=rack, rack_unit=5, hostname="gx-bad", serial="SN-B1", state="failed")
    NodeFactory(rack=rack, rack_unit=9, hostname="gx-oops", serial="SN-OOPS")
    token = token_for(users["admin"])

    def action(name: str, node: str, act: str, **more) -> dict:
        args = {"node": node, "action": act, "interval": 0.2, "timeout": 60}
        return {"name": name, "corral.fleet.corral_action": {**args, **more}, **TOLERANT}

    def rma(name: str, **args) -> dict:
        return {"name": name, "corral.fleet.corral_rma": {"node": "gx-bad", **args}, **TOLERANT}

    def node(name: str, **args) -> dict:
        return {"name": name, "corral.fleet.corral_node": args, **TOLERANT}

    book = plays(
        action("refused", "gx-101", "undrain"),
        action("rma check", "gx-bad", "rma", reason="GPU 3 fell off the bus") | CHECK,
        action("rma", "gx-bad", "rma", reason="GPU 3 fell off the bus"),
        rma("triage check", status="triaged", priority="p2", vendor="dell") | CHECK,
        rma("triage", status="triaged", priority="p2", vendor="dell", note="ECC confirmed"),
        rma("triage again", status="triaged", priority="p2", vendor="dell"),
        rma("skip a step", status="awaiting_parts"),
        rma("close", status="closed", resolution="cancelled", note="opened in error"),
        rma("close again", status="closed", resolution="cancelled"),
        node("delete a mistake", serial="SN-OOPS", state="absent"),
        node("delete it again", serial="SN-OOPS", state="absent"),
        node("delete one with history", serial="SN-B1", state="absent"),
        defaults=False,
    )
    ran, tasks = ansible.playbook(
        book, "-i", "localhost,", CORRAL_URL=corral_web, CORRAL_TOKEN=token
    )
    assert ran.code == 0, ran.text  # every failure below was expected (ignore_errors)
    assert token not in ran.unwrapped

    refused = tasks["refused"]
    assert refused.status == "failed"
    assert "'Return to service' is not allowed in that state" in refused["msg"]
    assert refused["status"] == 409 and "inspect" in refused["allowed"]
    assert Node.objects.get(pk=enrolled.pk).state == "enrolled"

    assert tasks["rma check"].status == "changed"
    assert tasks["rma check"]["msg"] == "would run rma on gx-bad (state failed)"
    assert "operation" not in tasks["rma check"].result
    opened = tasks["rma"]
    assert opened.status == "changed", opened.result
    op = Operation.objects.get(node=failed, kind="rma")
    assert opened["operation"]["id"] == op.pk and opened["operation"]["status"] == "succeeded"
    assert opened["msg"] == f"rma on gx-bad: operation {op.pk} succeeded"
    assert Node.objects.get(pk=failed.pk).state == "rma"

    assert tasks["triage check"].status == "changed"
    assert tasks["triage check"]["changed_fields"] == ["priority", "vendor", "status"]
    assert tasks["triage check"]["case"]["status"] == "open"  # as it was: nothing moved then
    assert tasks["triage"].status == "changed"
    assert tasks["triage"]["case"]["status"] == "triaged"
    assert tasks["triage again"].status == "ok"
    skipped = tasks["skip a step"]
    assert skipped.status == "failed"
    assert "'awaiting_parts' is not allowed from there" in skipped["msg"]
    assert "(allowed: with_vendor, parts_replaced, closed)" in skipped["msg"]
    assert tasks["close"].status == "changed"
    assert tasks["close again"].status == "ok"
    case = Case.objects.get(node=failed)
    assert (case.status, case.resolution, case.priority, case.vendor) == (
        "closed", "cancelled", "p2", "dell"
    )  # fmt: skip
    assert Node.objects.get(pk=failed.pk).state == "rma"  # a cancelled case leaves the node

    assert tasks["delete a mistake"].status == "changed"
    assert not Node.objects.filter(serial="SN-OOPS").exists()
    assert tasks["delete it again"].status == "ok"
    kept = tasks["delete one with history"]
    assert kept.status == "failed" and kept["status"] == 409
    assert "decommission it instead" in kept["msg"]


TOLERANT = {"ignore_errors": True}
CHECK = {"check_mode": True}
