"""pyghmi's shared I/O under the load of a real worker: a console typed into while the BMCs
of dead nodes are polled (provisioning/drivers/ipmi/pyghmi_fixes.py says what froze).

The load runs in a process of its own, so a freeze ends that process, not the tests."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.consoles.helpers import sol_machine

LOAD = """
import socket, sys, threading, time
import django
django.setup()
from provisioning.drivers import BMCError, BMCSettings, get_driver
host, port, user, password = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
seconds, dead = float(sys.argv[5]), int(sys.argv[6])
done = threading.Event()
silent = []  # BMCs of dead nodes: bound, never answering
for _ in range(dead):
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    silent.append(sock)

def poll(sock):
    settings = BMCSettings(protocol="ipmi", address="127.0.0.1", port=sock.getsockname()[1],
                           username="admin", password="password", timeout=0.5)
    while not done.is_set():
        try:
            with get_driver(settings) as driver:
                driver.power.get_power_state()
        except BMCError:
            pass

shown = bytearray()
last = [time.monotonic()]
def output(data):
    shown.extend(data)
    last[0] = time.monotonic()

live = BMCSettings(protocol="ipmi", address=host, port=port, username=user,
                   password=password, timeout=5)
driver = get_driver(live).__enter__()
link = driver.console.attach(output)
for sock in silent:
    threading.Thread(target=poll, args=(sock,), daemon=True).start()
end = time.monotonic() + seconds
longest = 0.0
while time.monotonic() < end and longest < 10:
    link.send(b"x")
    time.sleep(0.01)  # a fast typist: the load's pace, not a wait for a result
    longest = max(longest, time.monotonic() - last[0])
done.set()
try:
    with get_driver(live) as check:
        power = check.power.get_power_state()
except BMCError as exc:
    power = "none"
print(f"echoed={len(shown)} longest_silence_s={longest:.1f} power={power}", flush=True)
import os
os._exit(0)
"""


@pytest.fixture
def machine(ipmi_sim_factory):
    yield from sol_machine(ipmi_sim_factory, "io001", echo=True)


@pytest.mark.slow  # 20 s of load
def test_a_console_and_dead_bmcs_polled_at_once_never_freeze_the_worker(machine):
    bmc, _line = machine
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            LOAD,
            bmc.host,
            str(bmc.port),
            bmc.username,
            bmc.password,
            "20",
            "16",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "fleet.settings"},
    )
    assert result.returncode == 0, result.stderr[-3000:]
    fields = dict(item.split("=") for item in result.stdout.split())
    # Every key typed is echoed by the serial line: a silence of seconds is a freeze.
    assert float(fields["longest_silence_s"]) < 5, result.stdout
    assert int(fields["echoed"]) > 500, result.stdout
    # And the live BMC still answers a power read afterwards.
    assert fields["power"] in ("on", "off"), result.stdout
