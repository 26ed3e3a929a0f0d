"""A node's console recorded while it deploys (consoles/recording.py, relay.py), through IPMI
serial-over-LAN from ipmi_sim serving a serial line (tests/peers/serial_line.py)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from consoles import recording, relay, selectors
from consoles.models import KEPT_PER_NODE, ConsoleLog
from tests.consoles.helpers import ipmi_node, log_shows, on_own_connection, sol_machine
from tests.factories import NodeFactory, put_in
from tests.peers.util import wait_until

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module")
def machine(ipmi_sim_factory):
    yield from sol_machine(ipmi_sim_factory, "rec001")


@pytest.fixture(autouse=True)
def quick(monkeypatch):
    monkeypatch.setattr(recording, "FLUSH_SECONDS", 0.2)
    monkeypatch.setattr(recording, "ATTACH_BACKOFF", 0.2)


def record(*args):
    return on_own_connection(relay.record, *args)


def test_a_deploy_is_recorded_until_the_node_leaves_the_state(machine):
    bmc, line = machine
    node = ipmi_node(bmc, state="deploying")
    stop = threading.Event()  # set only should the test fail: no thread outlives it
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(record, node.pk, None, "deploying", stop)
        try:
            # What the machine writes before the console is attached is not the BMC's to
            # pass on: the banner is written until it shows, then the kernel's line.
            def banner() -> bool:
                line.write(b"iPXE 1.21.1 -- Open Source Network Boot Firmware\r\n")
                return log_shows(node, "Open Source Network Boot Firmware")

            wait_until(banner, timeout=30, interval=0.5, what="the console recorded")
            line.write(b"[    0.000000] Linux version 6.1.0-56-amd64\r\n")
            wait_until(lambda: log_shows(node, "Linux version 6.1.0"), what="the kernel's line")
            put_in(node, "validating")
            log = running.result(timeout=30)
        finally:
            stop.set()
    assert log.ended is not None and log.end_reason == "the node left deploying"
    assert selectors.last_lines(log)[-2:] == [
        "iPXE 1.21.1 -- Open Source Network Boot Firmware",
        "[    0.000000] Linux version 6.1.0-56-amd64",
    ]


def test_a_second_delivery_finds_the_recording_open_and_leaves(machine):
    bmc, _line = machine
    node = ipmi_node(bmc, state="deploying")
    stop = threading.Event()
    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(record, node.pk, None, "deploying", stop)
        try:
            wait_until(lambda: ConsoleLog.objects.filter(node=node).exists(), what="the log")
            assert relay.record(node.pk, None, "deploying") is None
        finally:
            stop.set()
        assert first.result(timeout=30).end_reason == "stopped"
    assert ConsoleLog.objects.filter(node=node).count() == 1


def test_a_bmc_without_a_console_ends_the_recording_saying_so(sushy_static):
    # A Redfish BMC whose system names no SerialConsole (the DMTF mockup's).
    node = NodeFactory(
        state="deploying", bmc__address=sushy_static.url, bmc__password="pw", bmc__verify_tls=False
    )
    log = relay.record(node.pk, None, "deploying")
    assert "offers no serial console over SSH" in log.end_reason
    assert selectors.output(log) == b""


def test_a_node_already_gone_from_the_state_is_not_recorded(machine):
    node = ipmi_node(machine[0], state="validating")
    assert relay.record(node.pk, None, "deploying") is None
    assert not ConsoleLog.objects.filter(node=node).exists()


def test_only_the_last_logs_of_a_node_are_kept():
    node = NodeFactory()
    for _ in range(KEPT_PER_NODE + 3):
        ConsoleLog.objects.create(node=node, state="deploying")
    newest = list(ConsoleLog.objects.filter(node=node).values_list("pk", flat=True))
    assert recording.rotate(node.pk) == 3
    kept = list(ConsoleLog.objects.filter(node=node).values_list("pk", flat=True))
    assert kept == newest[:KEPT_PER_NODE]
