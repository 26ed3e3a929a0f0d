"""`corral login`, `corral nodes` and `corral ops` against a real Corral: the token checked
before the 0600 configuration is written, the list with the API's filters across pages,
one node's detail, an action followed to its end, and an operation watched while it
moves, fails or outlasts the watch."""

from __future__ import annotations

import io
import json
import stat
import threading
import time

import pytest
import yaml

from inventory.models import Node, Operation
from tests.factories import NodeFactory, OperationFactory, RackFactory, SiteFactory
from tests.peers.util import free_port

from .conftest import CLI

pytestmark = pytest.mark.django_db(transaction=True)


def test_login_then_list_with_filters_across_pages_and_show_by_hostname(
    cli, corral_web, users, config_home, monkeypatch
):
    from tests.conftest import token_for

    path = config_home / "corral" / "config.json"
    refused = cli("login", "--url", corral_web, "--token", "not-a-token")
    assert refused.code == 1
    assert f"Corral at {corral_web} refused the token" in refused.err
    assert "nothing was written" in refused.err
    assert not path.exists()
    token = token_for(users["manager"])
    login = cli("login", "--url", f"{corral_web}/api/v1/", "--token", token)
    assert login.code == 0, login.text
    assert f"Logged in to {corral_web}" in login.out
    assert token not in login.text
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert json.loads(path.read_text()) == {"url": corral_web, "token": token}
    # The environment overrides the file, one value at a time.
    elsewhere = f"http://127.0.0.1:{free_port()}"
    moved = cli("nodes", "list", CORRAL_URL=elsewhere)
    assert moved.code == 1
    assert f"Cannot reach Corral at {elsewhere}/api/v1/nodes/" in moved.err
    revoked = cli("nodes", "list", CORRAL_TOKEN="revoked-token")
    assert revoked.code == 1
    assert "the token was refused" in revoked.err

    corral = cli  # from here on, the configuration file alone
    r01 = RackFactory(site=SiteFactory(slug="dc1"), name="r01")
    r07 = RackFactory(site=SiteFactory(slug="dc2"), name="r07")
    NodeFactory(rack=r01, rack_unit=1, hostname="gx-001", serial="SN-1", state="failed")
    NodeFactory(rack=r01, rack_unit=5, hostname="gx-002", serial="SN-2", state="ready")
    NodeFactory(rack=r01, rack_unit=9, hostname="gx-003", serial="SN-3", gpu_model="H200-SXM")
    NodeFactory(rack=r07, rack_unit=2, hostname="gy-001", serial="SN-4", state="failed")
    NodeFactory(rack=None, hostname="head-01", serial="SN-5", gpu_model="", gpu_count=0)
    monkeypatch.setattr("corral_cli.nodes.PAGE_SIZE", 2)  # three pages, `next` followed

    listed = corral("nodes", "list")
    assert listed.code == 0, listed.text
    rows = [line.split() for line in listed.out.splitlines()]
    assert rows[0] == ["HOSTNAME", "SERIAL", "STATE", "SITE/RACK", "GPU"]
    assert ["gx-001", "SN-1", "failed", "dc1/r01", "U1", "8x", "H100-SXM"] in rows
    assert ["head-01", "SN-5", "enrolled", "-", "-"] in rows
    assert len(rows) == 6

    def hostnames(*argv: str) -> list[str]:
        result = corral("nodes", "list", "-o", "json", *argv)
        assert result.code == 0, result.text
        return sorted(n["hostname"] for n in json.loads(result.out))

    assert hostnames("--site", "dc1") == ["gx-001", "gx-002", "gx-003"]
    assert hostnames("--state", "failed") == ["gx-001", "gy-001"]
    assert hostnames("--state", "failed", "--state", "ready", "--site", "dc1") == [
        "gx-001", "gx-002"
    ]  # fmt: skip
    assert hostnames("--search", "gy-") == ["gy-001"]
    assert hostnames("--gpu-model", "H200") == ["gx-003"]
    as_yaml = yaml.safe_load(corral("nodes", "list", "-o", "yaml", "--rack", "r07").out)
    assert [n["serial"] for n in as_yaml] == ["SN-4"]
    bad = corral("nodes", "list", "--state", "asleep")
    assert (bad.code, bad.out) == (1, "")
    assert "state: Select a valid choice. asleep is not one of the available choices." in bad.err

    shown = corral("nodes", "show", "gx-001")
    assert shown.code == 0, shown.text
    detail = dict(line.split(":", 1) for line in shown.out.splitlines())
    detail = {key: value.strip() for key, value in detail.items()}
    assert detail["serial"] == "SN-1"
    assert detail["state"] == "failed"
    assert detail["site/rack"] == "dc1/r01 U1"
    assert "rma" in detail["actions now"].split(", ")
    as_json = json.loads(corral("nodes", "show", "gx-002", "-o", "json").out)
    assert (as_json["serial"], as_json["state"]) == ("SN-2", "ready")
    missing = corral("nodes", "show", "gx-404")
    assert missing.code == 1
    assert "No node with hostname 'gx-404'" in missing.err


def test_an_action_waited_for_and_operations_watched(corral, users):
    from tests.conftest import token_for

    node = NodeFactory(hostname="gx-001", state="failed")
    # `rma` needs no BMC: it opens a case and ends at once.
    no_reason = corral("nodes", "action", "gx-001", "rma")
    assert no_reason.code == 1
    assert "reason: 'Open RMA' needs a reason." in no_reason.err
    done = corral(
        "nodes", "action", "gx-001", "rma", "--reason", "GPU 3 fell off the bus", "--wait",
        "--interval", "0.05",
    )  # fmt: skip
    assert done.code == 0, done.text
    op = Operation.objects.get(node=node, kind="rma")
    assert f"Started rma on gx-001: operation {op.pk} (succeeded)." in done.out
    assert done.out.splitlines()[-1] == f"Operation {op.pk} succeeded."
    assert Node.objects.get(pk=node.pk).state == "rma"

    illegal = corral("nodes", "action", "gx-001", "undrain")
    assert illegal.code == 1
    assert "'Return to service' is not allowed in that state" in illegal.err
    assert "allowed now: " in illegal.err and "repaired" in illegal.err
    manager = corral(
        "nodes", "action", "gx-001", "repaired", CORRAL_TOKEN=token_for(users["manager"])
    )
    assert (manager.code, Node.objects.get(pk=node.pk).state) == (1, "rma")

    failed = OperationFactory(
        node=node, kind="inspect", status="failed", error="BMC refused the password (401)"
    )
    watched = corral("ops", "watch", str(failed.pk))
    assert watched.code == 1
    assert f"Operation {failed.pk} failed: BMC refused the password (401)" in watched.err

    waiting = OperationFactory(node=node, kind="inspect", status="pending", progress=0)
    outlasted = corral("ops", "watch", str(waiting.pk), "--interval", "0.05", "--timeout", "0.2")
    assert outlasted.code == 1
    assert f"Operation {waiting.pk} is still pending after 0.2 s; stopped watching" in (
        outlasted.err
    )
    assert corral("ops", "watch", "987654").code == 1

    moving = watch_in_thread(corral, waiting.pk)
    Operation.objects.filter(pk=waiting.pk).update(
        status="running", progress=40, message="reading the BMC"
    )
    moving.wait_for(f"operation {waiting.pk} inspect: running 40%: reading the BMC")
    Operation.objects.filter(pk=waiting.pk).update(status="succeeded", progress=100)
    assert moving.result() == 0
    assert moving.out.getvalue().splitlines()[-1] == f"Operation {waiting.pk} succeeded."


class watch_in_thread:
    """`corral ops watch ID` running beside the test, which moves the operation."""

    def __init__(self, corral: CLI, op_id: int) -> None:
        from corral_cli.main import main

        self.out, self.err = io.StringIO(), io.StringIO()
        self.code: int | None = None

        def run() -> None:
            self.code = main(
                ["ops", "watch", str(op_id), "--interval", "0.05", "--timeout", "20"],
                stdin=io.StringIO(),
                stdout=self.out,
                stderr=self.err,
                environ=corral.env,
            )

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def wait_for(self, line: str, timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        while line not in self.out.getvalue().splitlines():
            assert self.thread.is_alive(), self.out.getvalue() + self.err.getvalue()
            assert time.monotonic() < deadline, self.out.getvalue()
            time.sleep(0.02)

    def result(self) -> int | None:
        self.thread.join(timeout=20)
        return self.code
