"""The counters apps keep, as a scrape shows them: BMC calls (through a real Redfish
emulator, and a BMC that does not answer), operations that end, boot answers."""

from __future__ import annotations

import pytest

from inventory import operations
from inventory.models import Operation
from provisioning.drivers import BMCSettings, BMCTransientError, get_driver
from provisioning.services import bmc_settings
from tests.factories import BMCFactory, NodeFactory, OperationFactory
from tests.peers.util import LOOPBACK, free_port

from .scrape import scrape, value

pytestmark = pytest.mark.django_db


def _count(client, name: str, **labels: str) -> float:
    return value(scrape(client), name, **labels) or 0.0


def test_bmc_calls_by_protocol_vendor_call_and_outcome(client, sushy_emulator):
    node = NodeFactory(bmc=None, hardware_facts={"manufacturer": "Dell Inc."})
    system = sushy_emulator.systems[0]
    BMCFactory(node=node, address=sushy_emulator.url, system_id=system.uuid, verify_tls=False)
    ok = {"protocol": "redfish", "vendor": "dell", "call": "power.get_power_state"}
    before = _count(client, "corral_bmc_calls_total", outcome="ok", **ok)
    timed = {"protocol": "redfish", "vendor": "dell"}
    seconds = _count(client, "corral_bmc_call_duration_seconds_count", **timed)

    with get_driver(bmc_settings(node)) as driver:
        assert driver.power.get_power_state() in ("on", "off")

    assert _count(client, "corral_bmc_calls_total", outcome="ok", **ok) == before + 1
    after = _count(client, "corral_bmc_call_duration_seconds_count", **timed)
    assert after == seconds + 1


def test_a_bmc_that_does_not_answer_counts_as_transient(client):
    labels = {"protocol": "redfish", "vendor": "unknown", "call": "power.get_power_state"}
    before = _count(client, "corral_bmc_calls_total", outcome="transient", **labels)
    silent = BMCSettings(
        protocol="redfish",
        address=f"http://{LOOPBACK}:{free_port()}",
        username="admin",
        password="pw",
        timeout=2.0,
    )
    with get_driver(silent) as driver, pytest.raises(BMCTransientError):
        driver.power.get_power_state()
    assert _count(client, "corral_bmc_calls_total", outcome="transient", **labels) == before + 1


def test_an_operation_that_ends_is_counted_once_with_its_duration(
    client, django_capture_on_commit_callbacks
):
    op = OperationFactory(kind="inspect", status="running")
    labels = {"kind": "inspect", "status": "failed"}
    before = _count(client, "corral_operations_finished_total", **labels)
    hist = _count(client, "corral_operation_duration_seconds_count", kind="inspect")

    with django_capture_on_commit_callbacks(execute=True):  # counted once it commits
        assert operations.finish_operation(op, "failed", error="BMC refused")
        # The first ending wins; a second one is not counted again.
        assert not operations.finish_operation(Operation.objects.get(pk=op.pk), "succeeded")

    assert _count(client, "corral_operations_finished_total", **labels) == before + 1
    assert _count(client, "corral_operation_duration_seconds_count", kind="inspect") == hist + 1


def test_vendor_labels_are_a_closed_set():
    from provisioning.metrics import vendor_label

    assert vendor_label("Dell Inc.") == "dell"
    assert vendor_label("HPE") == "hpe" and vendor_label("Hewlett Packard Enterprise") == "hpe"
    assert vendor_label("Supermicro") == "supermicro"
    assert vendor_label("NVIDIA") == "nvidia"
    assert vendor_label("Acme Servers Ltd") == "other"
    assert vendor_label(None) == "unknown" and vendor_label("") == "unknown"


def test_a_gate_run_that_ends_counts_its_result_and_its_checks(
    client, django_capture_on_commit_callbacks
):
    from tests.factories import CheckResultFactory, GateRunFactory
    from validation import services as gates

    run = GateRunFactory(status="running")
    CheckResultFactory(run=run, tool="nccl-tests", status="pass")
    CheckResultFactory(run=run, tool="dcgmi", status="fail")
    runs = _count(client, "corral_gate_runs_total", result="failed")
    checks = _count(client, "corral_gate_checks_total", tool="dcgmi", result="fail")

    with django_capture_on_commit_callbacks(execute=True):
        gates.abort_run(run.pk, "the step's time limit passed")

    assert _count(client, "corral_gate_runs_total", result="failed") == runs + 1
    assert _count(client, "corral_gate_checks_total", tool="dcgmi", result="fail") == checks + 1


@pytest.mark.django_db(transaction=True)  # the boot front closes its connection, as served
def test_boot_answers_by_kind_and_their_latency():
    from tests.metrics.scrape import samples
    from tests.test_wsgi import call_wsgi

    def counts() -> tuple[float, float]:
        from prometheus_client import generate_latest

        from metrics.views import registry

        found = samples(generate_latest(registry()).decode())
        unknown = found.get(("corral_boot_answers_total", (("kind", "unknown"),)), 0.0)
        timed = found.get(
            ("corral_boot_answer_duration_seconds_count", (("source", "database"),)), 0.0
        )
        return unknown, timed

    before = counts()
    status, _ = call_wsgi("/boot/ipxe", "mac=52:54:00:ff:ee:01")
    assert status.startswith("200")
    assert counts() == (before[0] + 1, before[1] + 1)
