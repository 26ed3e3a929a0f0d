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
