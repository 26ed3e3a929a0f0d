"""What a node's page says of its power and BMC is what the BMC last answered, with the
time it answered (issue 29: nodes Corral itself had just powered on showed "off" until
the periodic refresh; a BMC whose wrong password was fixed stayed "error" after an
inspection succeeded). Each runs the task body against a real sushy-emulator."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from inventory.models import Node
from provisioning import deployments, services
from tests.factories import ImageFactory, NodeFactory, OperationFactory, put_in
from tests.peers.redfish import run_sushy_emulator

pytestmark = pytest.mark.django_db


def on_emulator(emulator, system, *, password: str | None = None, **fields) -> Node:
    node = NodeFactory(gpu_count=0, **fields)
    node.bmc.address, node.bmc.system_id = emulator.address, system.uuid
    node.bmc.verify_tls = False
    if emulator.username:
        node.bmc.username = emulator.username
    node.bmc.give_password(password or emulator.password or "unused")
    node.bmc.save()
    return Node.objects.select_related("bmc").get(pk=node.pk)


def test_a_power_on_records_on_and_when_the_bmc_said_so(sushy_emulator):
    system = sushy_emulator.systems[2]
    sushy_emulator.force_power(system.uuid, "ForceOff")
    node = on_emulator(sushy_emulator, system, state="ready")
    Node.objects.filter(pk=node.pk).update(power_state="off", power_state_at=None)
    before = timezone.now()
    services.power(node, OperationFactory(node=node, kind="power_on", status="running"))
    node.refresh_from_db()
    assert node.power_state == "on"
    assert node.power_state_at >= before
    assert node.bmc_health and node.bmc_health_at >= before


def test_a_deploy_records_the_power_state_the_bmc_reports_after_its_power_on(sushy_emulator):
    system = sushy_emulator.systems[3]
    sushy_emulator.force_power(system.uuid, "ForceOff")
    node = on_emulator(sushy_emulator, system, state="deploying")
    Node.objects.filter(pk=node.pk).update(
        power_state="off", power_state_at=timezone.now() - timedelta(minutes=3)
    )
    node.refresh_from_db()
    image = ImageFactory()
    op = OperationFactory(node=node, kind="deploy", status="running", params={"image": image.pk})
    before = timezone.now()
    deployments.deploy(node, op)
    assert sushy_emulator.power_state(system.uuid) == "On"
    node.refresh_from_db()
    assert (node.power_state, node.power_state_at >= before) == ("on", True)


def test_bmc_health_follows_a_fixed_password_at_the_next_inspection(sushy_emulator_auth):
    system = sushy_emulator_auth.systems[0]
    node = on_emulator(sushy_emulator_auth, system, password="not-the-password", state="enrolled")
    services.refresh_power(node)
    node.refresh_from_db()
    assert node.bmc_health == "error"
    assert node.power_state_at is None  # nothing was read: no time to show for it
    failed_at = node.bmc_health_at

    node.bmc.give_password(sushy_emulator_auth.password)
    node.bmc.save()
    put_in(node, "inspecting")
    node = Node.objects.select_related("bmc").get(pk=node.pk)
    services.inspect(node, OperationFactory(node=node, kind="inspect", status="running"))
    node.refresh_from_db()
    assert node.state == "ready"
    assert node.bmc_health not in ("error", "unreachable", "")
    assert node.bmc_health_at > failed_at
    assert node.bmc_message == ""


@pytest.fixture(scope="module")
def timed_emulator(tmp_path_factory):
    """An emulator that writes down every request it answers (the launcher's --timings)."""
    workdir = tmp_path_factory.mktemp("timed-emulator")
    timings = workdir / "timings.txt"
    with run_sushy_emulator(workdir, systems=2, launcher_args=("--timings", str(timings))) as emu:
        emu.timings = timings  # type: ignore[attr-defined]
        yield emu


def asked(emulator) -> list[tuple[str, str]]:
    """(method, path) of each request the emulator answered, in order."""
    lines = emulator.timings.read_text().splitlines() if emulator.timings.exists() else []
    return [tuple(line.split()[2:4]) for line in lines]


def test_a_power_cycle_of_a_node_whose_health_is_known_asks_the_bmc_only_about_power(
    timed_emulator,
):
    """A cycle from on without the BMC's PowerCycle: read the system once, off, read until
    off, on, read until on. No extra read of the power state the first read gave, and no
    chassis or sensor reads: a known health is the refresh's to read again (on a GPU tray a
    request per sensor, 1-11 s each, after every power cycle of a site)."""
    system = timed_emulator.systems[0]
    timed_emulator.force_power(system.uuid, "On")
    node = on_emulator(timed_emulator, system, state="ready")
    read_at = timezone.now() - timedelta(minutes=5)
    Node.objects.filter(pk=node.pk).update(bmc_health="warning", bmc_health_at=read_at)
    node = Node.objects.select_related("bmc").get(pk=node.pk)
    before = len(asked(timed_emulator))
    services.power(node, OperationFactory(node=node, kind="power_cycle", status="running"))
    path = f"/redfish/v1/Systems/{system.uuid}"
    on_system = [(m, p) for m, p in asked(timed_emulator)[before:] if p.startswith(path)]
    assert [m for m, _ in on_system] == ["GET", "POST", "GET", "POST", "GET"], on_system
    assert not [p for _, p in asked(timed_emulator)[before:] if "/Chassis" in p]
    node.refresh_from_db()
    assert (node.power_state, node.bmc_health, node.bmc_health_at) == ("on", "warning", read_at)


def test_a_power_action_reads_the_health_of_a_bmc_recorded_as_not_answering(timed_emulator):
    """The fixed-password case of a power action: the record said "error", the BMC answered,
    so its health is read (chassis and sensors included) and the error goes."""
    system = timed_emulator.systems[1]
    node = on_emulator(timed_emulator, system, state="ready")
    Node.objects.filter(pk=node.pk).update(bmc_health="error", bmc_message="wrong password")
    node = Node.objects.select_related("bmc").get(pk=node.pk)
    before = len(asked(timed_emulator))
    services.power(node, OperationFactory(node=node, kind="power_on", status="running"))
    assert [p for _, p in asked(timed_emulator)[before:] if "/Chassis" in p]
    node.refresh_from_db()
    assert node.bmc_health not in ("error", "unreachable", "") and node.bmc_message == ""
