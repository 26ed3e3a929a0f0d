"""Inspection of a hostile or broken BMC (issue 28): a member that answers 500, links that
loop, a 20 MB document, bytes that are not UTF-8, a BMC that stops answering mid-walk.

The member is unavailable with the reason, the walk is bounded in requests and time, and
nothing crashes or hangs. Every BMC here is a real HTTP server on 127.0.0.1
(tests/peers/hostile_redfish.py), inspected through the product's Redfish driver.
"""

from __future__ import annotations

import json
import re
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from provisioning.drivers import BMCResponseError, BMCTransientError
from provisioning.drivers.redfish import build_driver, reader
from provisioning.drivers.redfish.client import MAX_DOCUMENT_BYTES
from provisioning.drivers.results import HardwareFacts
from provisioning.drivers.settings import BMCSettings
from tests.peers.hostile_redfish import (
    CHASSIS,
    ROOT,
    SYSTEM,
    HostileRedfish,
    collection,
    ref,
    serve,
    small_tree,
    tree_from,
)

GPU1 = f"{SYSTEM}/Processors/GPU1"
CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "redfish"


def settings(bmc: HostileRedfish, timeout: float = 3.0, system_id: str = "sys1") -> BMCSettings:
    return BMCSettings(
        protocol="redfish",
        address=bmc.url,
        username="admin",
        password="any-password",
        system_id=system_id,
        timeout=timeout,
    )


def inspect(bmc: HostileRedfish, **kwargs: Any) -> HardwareFacts:
    driver = build_driver(settings(bmc, **kwargs))
    try:
        return driver.inspect.inspect()
    finally:
        driver.close()


def assert_rest_is_there(facts: HardwareFacts) -> None:
    assert facts.serial == "HX1-0001" and facts.bios_version == "1.2.3"
    assert facts.cpu_count == 1 and facts.memory_gib == 2048
    assert [n.mac for n in facts.nics] == ["0c:42:a1:00:00:01", "0c:42:a1:00:00:02"]
    assert [d.name for d in facts.drives] == ["Disk 0", "Disk 1"]


def test_a_gpu_answering_500_is_unavailable_with_its_url_and_the_rest_is_read():
    with serve(small_tree()) as bmc:
        bmc.misbehave(GPU1, status=500)
        facts = inspect(bmc)
    assert facts.unavailable == {
        "processors": f"BMC at {bmc.hostport} answered HTTP 500 for {GPU1}"
    }
    assert [g.id for g in facts.gpus] == ["GPU0"]  # GPU1 is not guessed
    assert_rest_is_there(facts)


def looping_tree() -> dict[str, dict[str, Any]]:
    """Chassis A Contains B and B Contains A, each links back to the system, B's
    Processors are the system's own collection, and the Storage collection lists itself."""
    tree = small_tree()
    a, b = CHASSIS, f"{ROOT}/Chassis/B"
    tree[a] = {
        "@odata.id": a,
        "Id": "chassis0",
        "PCIeDevices": ref(f"{a}/PCIeDevices"),
        "Links": {"Contains": [ref(b)], "ComputerSystems": [ref(SYSTEM)]},
    }
    tree[b] = {
        "@odata.id": b,
        "Id": "B",
        "Processors": ref(f"{SYSTEM}/Processors"),
        "Links": {"Contains": [ref(a)], "ContainedBy": ref(a), "Chassis": [ref(a), ref(b)]},
    }
    tree[f"{a}/PCIeDevices"] = collection(f"{a}/PCIeDevices", f"{a}/PCIeDevices/")
    tree[f"{ROOT}/Chassis"] = collection(a, b)
    tree[f"{SYSTEM}/Storage"] = collection(f"{SYSTEM}/Storage", f"{SYSTEM}/Storage/1")
    tree[SYSTEM]["Links"]["Chassis"] = [ref(a), ref(b), ref(a + "/")]
    return tree


def test_links_that_loop_end_the_walk_and_each_document_is_fetched_once():
    with serve(looping_tree()) as bmc:
        started = time.monotonic()
        facts = inspect(bmc)
    assert time.monotonic() - started < 10
    # The system and the Systems collection are read by the inspection itself, outside
    # the walk (inventory.py, vendors/); everything the walk reads, it reads once.
    walked = {p: n for p, n in bmc.gets.items() if p not in (SYSTEM, f"{ROOT}/Systems")}
    assert walked and all(n == 1 for n in walked.values()), walked
    # The walk went everywhere the loops lead, once: both chassis, the shared collection.
    assert {CHASSIS, f"{ROOT}/Chassis/B", f"{CHASSIS}/PCIeDevices", f"{SYSTEM}/Storage"} <= set(
        walked
    )
    assert [g.id for g in facts.gpus] == ["GPU0", "GPU1"]  # not counted twice through B
    assert_rest_is_there(facts)


@pytest.mark.parametrize("declare", [True, False], ids=["content-length", "chunked"])
def test_a_20_mb_document_is_refused_at_8_mib_and_the_rest_is_read(declare):
    assert MAX_DOCUMENT_BYTES == 8 * 1024 * 1024
    with serve(small_tree()) as bmc:
        bmc.misbehave(GPU1, size=20_000_000, declare=declare)
        tracemalloc.start()
        try:
            facts = inspect(bmc)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    # Never more than the cap (and a read's chunk) in memory: not the 20 MB.
    assert peak < MAX_DOCUMENT_BYTES + 4 * 1024 * 1024, peak
    how = "it says 20000000 bytes" if declare else f"more than {MAX_DOCUMENT_BYTES} bytes sent"
    assert facts.unavailable == {
        "processors": f"BMC at {bmc.hostport} answered {GPU1} with a document larger than "
        f"8 MiB ({how}); not read"
    }
    assert [g.id for g in facts.gpus] == ["GPU0"]
    assert_rest_is_there(facts)


def test_a_document_that_is_not_utf8_is_unavailable_with_the_reason():
    with serve(small_tree()) as bmc:
        bmc.misbehave(GPU1, body=b'{"Id": "GPU1", "ProcessorType": "GPU", "Model": "H100 \xff"}')
        facts = inspect(bmc)
    # Not read with a replacement character as its model: left out, and said why.
    assert facts.unavailable == {
        "processors": f"BMC at {bmc.hostport} answered {GPU1} with a document that is not "
        "UTF-8 (byte 0xff at offset 54); Redfish documents are UTF-8"
    }
    assert [g.id for g in facts.gpus] == ["GPU0"]
    assert_rest_is_there(facts)


def test_a_system_that_is_not_utf8_fails_the_inspection_with_the_reason_not_a_crash():
    with serve(small_tree()) as bmc:
        bmc.misbehave(SYSTEM, body=b'{"Id": "sys1", "SerialNumber": "\xc3\x28"}')
        with pytest.raises(BMCResponseError, match="not UTF-8 .byte 0xc3 at offset 32."):
            inspect(bmc)


def test_a_utf8_byte_order_mark_is_read():
    with serve(small_tree()) as bmc:
        document = dict(small_tree()[GPU1], Model="H100 SXM5 – 80 GB")
        bmc.misbehave(GPU1, body=b"\xef\xbb\xbf" + json.dumps(document).encode())
        facts = inspect(bmc)
    assert facts.unavailable == {}
    assert [g.model for g in facts.gpus] == ["H100 80GB HBM3", "H100 SXM5 – 80 GB"]


@pytest.mark.parametrize("drop", [False, True], ids=["never-replies", "closes"])
def test_a_bmc_that_stops_answering_mid_walk_fails_within_its_timeout(drop):
    with serve(small_tree()) as bmc:
        bmc.stop_answering(after=4, drop=drop)
        started = time.monotonic()
        with pytest.raises(BMCTransientError, match="no Redfish answer") as caught:
            inspect(bmc, timeout=1.0)
        took = time.monotonic() - started
    assert took < 3.0  # one timeout (1 s), not one per part, and no hang
    assert caught.value.retryable
    assert bmc.total() == 5  # the walk ended at the first GET left unanswered


def test_an_answer_dripped_a_byte_at_a_time_ends_within_the_timeout():
    # 0.05 s a byte never trips a 1 s read timeout; the document would take 10 s in all.
    with serve(small_tree()) as bmc:
        bmc.misbehave(GPU1, drip=0.05)
        started = time.monotonic()
        with pytest.raises(BMCTransientError, match="no Redfish answer"):
            inspect(bmc, timeout=1.0)
        took = time.monotonic() - started
    assert took < 3.0
    assert 0 < bmc.sent[GPU1] < len(json.dumps(small_tree()[GPU1]))


def fanning_tree(chassis: int = 8, devices: int = 40, functions: int = 8) -> dict[str, Any]:
    """A chassis containing 7 more, each with 40 PCIe devices of 8 functions: 3,000 and
    more documents, every one of them reachable."""
    tree = small_tree()
    boxes = [CHASSIS] + [f"{ROOT}/Chassis/c{n}" for n in range(1, chassis)]
    for box in boxes:
        tree[box] = {"@odata.id": box, "PCIeDevices": ref(f"{box}/PCIeDevices")}
        paths = [f"{box}/PCIeDevices/d{d}" for d in range(devices)]
        tree[f"{box}/PCIeDevices"] = collection(*paths)
        for device in paths:
            tree[device] = {"Id": device[-3:], "PCIeFunctions": ref(f"{device}/F")}
            fns = [f"{device}/F/{f}" for f in range(functions)]
            tree[f"{device}/F"] = collection(*fns)
            for fn in fns:
                tree[fn] = {"Id": fn[-1], "ClassCode": "0x020000", "VendorId": "0x15b3"}
    tree[CHASSIS]["Links"] = {"Contains": [ref(b) for b in boxes[1:]]}
    return tree


@pytest.mark.slow  # 7 s on its own (docs/testing.md: Markers)
def test_a_tree_that_fans_out_without_end_stops_after_2000_requests():
    tree = fanning_tree()
    assert len(tree) > 3000
    with serve(tree) as bmc:
        facts = inspect(bmc)
    assert reader.MAX_WALK_REQUESTS == 2000
    stopped = re.compile(r"walk stopped after 20\d\d requests / \d+ s \(at most 2000 requests")
    assert stopped.search(facts.unavailable["pcie functions"])
    assert "the rest of pcie functions not read" in facts.unavailable["pcie functions"]
    for part in ("nics", "storage"):  # read after the budget was spent: said so, not read
        assert stopped.match(facts.unavailable[part])
    assert bmc.total() <= reader.MAX_WALK_REQUESTS + 5  # the root, Systems, the system
    assert facts.serial == "HX1-0001" and [g.id for g in facts.gpus] == ["GPU0", "GPU1"]


def test_a_walk_that_takes_too_long_stops_and_says_what_it_did_not_read(monkeypatch):
    monkeypatch.setattr(reader, "MAX_WALK_SECONDS", 1.0)
    with serve(small_tree()) as bmc:
        bmc.delay = 0.15  # every answer: the whole walk would take about 3 s
        started = time.monotonic()
        facts = inspect(bmc)
        took = time.monotonic() - started
    assert took < 3.0  # the cap and the answers in flight, not the whole walk
    notes = " ".join(facts.unavailable.values())
    assert "walk stopped after " in notes and " requests / 1 s (at most 2000 requests" in notes
    assert facts.serial == "HX1-0001"


@pytest.mark.slow  # 2 s on its own (docs/testing.md: Markers)
def test_the_biggest_real_tree_is_read_well_within_the_caps():
    """The NVIDIA DGX H100 tree (742 documents; its inventory walk takes about 450 GETs,
    its firmware walk about 70) passes the caps with room to spare."""
    source = CORPUS / "nvidia-dgx-h100" / "redfish" / "v1"
    expected = json.loads((source.parents[1] / "expected.json").read_text(encoding="utf-8"))
    biggest = max(p.stat().st_size for p in source.rglob("*.json"))
    assert biggest * 100 < MAX_DOCUMENT_BYTES
    with serve(tree_from(source)) as bmc:
        driver = build_driver(settings(bmc, system_id=expected["systems"][0]["id"]))
        started = time.monotonic()
        try:
            facts = driver.inspect.inspect()
            inventory_gets = bmc.total()
            firmware = driver.firmware.firmware()
        finally:
            driver.close()
        took = time.monotonic() - started
    assert "walk stopped" not in " ".join(facts.unavailable.values())
    assert "walk stopped" not in " ".join(driver.firmware.unavailable_parts().values())
    assert len(facts.gpus) == 8 and firmware
    assert inventory_gets * 2 < reader.MAX_WALK_REQUESTS, inventory_gets
    assert (bmc.total() - inventory_gets) * 2 < reader.MAX_WALK_REQUESTS
    assert took * 10 < reader.MAX_WALK_SECONDS
    # The system lookup, the vendor profiles and the firmware scope share one read of the
    # Systems collection (it was read four times).
    assert bmc.gets["/redfish/v1/Systems"] == 1
