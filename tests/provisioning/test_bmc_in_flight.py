"""Never more requests in flight on one BMC than CORRAL_BMC_MAX_IN_FLIGHT, whatever asks;
a slow BMC slows only itself. Proven by simulated BMCs that count their requests at once
and answer 503 past their own limit (devtools/sim_bmcs.py), serving a real GB200 tray's
tree."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from devtools.sim_bmcs import CORPUS, Farm, SimBMC
from tests.peers.util import free_port
from tests.provisioning.simulated import driver_for

TREE = CORPUS / "nvidia-gb200-nvl-compute-tray" / "redfish" / "v1"


@pytest.fixture
def farm():
    with Farm() as running:
        yield running


def inspect(bmc: SimBMC, limit: int) -> int:
    """GPUs an inspection of the tray finds."""
    with driver_for(bmc, "System_0", max_in_flight=limit) as driver:
        return len(driver.inspect.inspect().gpus)


def test_six_inspections_of_one_bmc_keep_to_its_limit(farm):
    # The BMC itself takes 8 at once: whatever more than 2 it sees is the client's fault.
    bmc = farm.add(SimBMC(TREE, "127.0.0.1", free_port(), latency=(0.001, 0.004), limit=8))
    with ThreadPoolExecutor(6) as pool:
        found = list(pool.map(lambda _: inspect(bmc, limit=2), range(6)))
    assert found == [4] * 6  # the tray's four Blackwell GPUs, every time
    assert bmc.counts.most == 2 and bmc.counts.refused == 0
    assert bmc.counts.requests >= 6 * 50


@pytest.mark.slow  # 5 s on its own (docs/testing.md: Markers)
def test_a_slow_bmc_holds_back_only_its_own_requests(farm):
    slow = farm.add(SimBMC(TREE, "127.0.0.1", free_port(), latency=(0.012, 0.02), limit=8))
    quick = farm.add(SimBMC(TREE, "127.0.0.2", free_port(), latency=(0.0, 0.001), limit=8))
    done = threading.Event()

    def slow_ones() -> list[int]:
        with ThreadPoolExecutor(4) as pool:
            found = list(pool.map(lambda _: inspect(slow, limit=1), range(4)))
        done.set()
        return found

    with ThreadPoolExecutor(1) as background:
        pending = background.submit(slow_ones)
        assert inspect(quick, limit=1) == 4
        # The quick BMC's inspection ended while the slow one's four still queue at it.
        assert not done.is_set()
        assert pending.result() == [4] * 4
    assert slow.counts.most == 1 and quick.counts.most == 1


def test_the_environments_proxy_never_carries_a_bmc_request(farm, monkeypatch):
    """A worker started with HTTP(S)_PROXY set (for its package mirror, say) must not send
    BMC credentials through that proxy: nothing listens on the proxy's port here, so a
    request through it would fail."""
    port = free_port()
    monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{port}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    bmc = farm.add(SimBMC(TREE, "127.0.0.1", free_port(), latency=(0.0, 0.0)))
    assert inspect(bmc, limit=2) == 4
