"""Celery tasks: take an Operation id, delegate to runner + services, nothing else."""

from collections.abc import Sequence
from typing import Any

from celery import Task, shared_task
from celery.exceptions import WorkerLostError
from celery.signals import task_failure
from django.conf import settings

from inventory.models import Node

from . import deployments, draining, firmware, images, services, vmedia
from .bootserver import records as bootlog
from .runner import load_operation, lost_with_its_process, run_node_operation

NODE_TASK = {"bind": True, "soft_time_limit": 120, "time_limit": 150}


@shared_task(name="provisioning.tasks.power_node", **NODE_TASK)
def power_node(self: Task, op_id: int) -> str:
    return run_node_operation(self, op_id, services.power)


@shared_task(name="provisioning.tasks.set_boot_device", **NODE_TASK)
def set_boot_device(self: Task, op_id: int) -> str:
    return run_node_operation(self, op_id, services.set_boot_pxe)


@shared_task(
    name="provisioning.tasks.inspect_node",
    **{**NODE_TASK, "soft_time_limit": 300, "time_limit": 330},
)
def inspect_node(self: Task, op_id: int) -> str:
    return run_node_operation(self, op_id, services.inspect)


@shared_task(name="provisioning.tasks.drain_node", **NODE_TASK)
def drain_node(self: Task, op_id: int) -> str:
    return run_node_operation(self, op_id, draining.drain)


@shared_task(name="provisioning.tasks.admit_node", **NODE_TASK)
def admit_node(self: Task, op_id: int) -> str:
    return run_node_operation(self, op_id, draining.admit)


@shared_task(name="provisioning.tasks.undrain_node", **NODE_TASK)
def undrain_node(self: Task, op_id: int) -> str:
    return run_node_operation(self, op_id, draining.undrain)


@shared_task(name="provisioning.tasks.decommission_node", **NODE_TASK)
def decommission_node(self: Task, op_id: int) -> str:
    return run_node_operation(self, op_id, draining.decommission)


@shared_task(
    name="provisioning.tasks.refresh_node_power",
    soft_time_limit=60,
    time_limit=75,
    ignore_result=True,
)
def refresh_node_power(node_id: int) -> None:
    node = Node.objects.select_related("bmc").filter(pk=node_id).first()
    if node is not None and node.reservation is None:
        services.refresh_power(node)


def on_refresh_requested(sender: object, node: Node, **kwargs: object) -> None:
    """inventory.operations.power_refresh_requested: the node page asked for a read now."""
    refresh_node_power.apply_async(args=[node.pk], queue=node.queue)


@shared_task(name="provisioning.tasks.refresh_power_states", soft_time_limit=60, time_limit=90)
def refresh_power_states() -> int:
    """Beat: fan out a power/health read to each node whose recorded state is stale."""
    due = services.nodes_due_for_refresh()
    nodes = Node.objects.select_related("rack__site").filter(pk__in=due)
    for node in nodes:
        refresh_node_power.apply_async(args=[node.pk], queue=node.queue)
    return len(due)


@shared_task(
    name="provisioning.tasks.refresh_node_firmware",
    soft_time_limit=120,
    time_limit=150,
    ignore_result=True,
)
def refresh_node_firmware(node_id: int) -> None:
    node = Node.objects.select_related("bmc").filter(pk=node_id).first()
    if node is not None and node.reservation is None and node.state in firmware.IN_SERVICE:
        firmware.refresh_firmware(node)


@shared_task(name="provisioning.tasks.refresh_firmware_sweep", soft_time_limit=60, time_limit=90)
def refresh_firmware_sweep() -> int:
    """Beat: re-read firmware of in-service nodes read longest ago, a few per site, spread
    over the interval (countdown) so no site's BMCs get a burst."""
    spread = settings.CELERY_BEAT_SCHEDULE["refresh-firmware"]["schedule"]
    sent = 0
    for queue, ids in firmware.due().items():
        for i, node_id in enumerate(ids):
            countdown = spread * i / max(len(ids), 1)
            refresh_node_firmware.apply_async(args=[node_id], queue=queue, countdown=countdown)
            sent += 1
    return sent


@shared_task(name="provisioning.tasks.deploy_node", **NODE_TASK)
def deploy_node(self: Task, op_id: int) -> str:
    return run_node_operation(self, op_id, deployments.deploy)


@shared_task(
    name="provisioning.tasks.publish_image",
    bind=True,
    soft_time_limit=3600,
    time_limit=3660,
)
def publish_image(self: Task, op_id: int) -> None:
    images.publish_task_body(op_id)


@shared_task(name="provisioning.tasks.prune_boot_records", soft_time_limit=600, time_limit=660)
def prune_boot_records() -> int:
    """Beat, hourly: boot records past CORRAL_BOOT_RECORD_DAYS (each node's latest stays)."""
    return bootlog.prune(settings.CORRAL_BOOT_RECORD_DAYS)


@shared_task(name="provisioning.tasks.eject_media", soft_time_limit=600, time_limit=660)
def eject_media(site: str | None = None) -> int:
    """On a site's queue (sent by the beat's sweep, or once a virtual-media deploy of it
    phones home): its ended deploys' ISOs out of their BMCs and deleted
    (vmedia.eject_ended). From the beat (no site): vmedia.sweep sends each site its own."""
    if site is None:
        return len(vmedia.sweep())
    return vmedia.eject_ended(site)


NODE_TASKS = {
    task.name
    for task in [
        power_node,
        set_boot_device,
        inspect_node,
        drain_node,
        admit_node,
        undrain_node,
        decommission_node,
        deploy_node,
    ]
}


@task_failure.connect
def on_worker_lost(
    sender: Task | None = None,
    exception: BaseException | None = None,
    args: Sequence[Any] | None = None,
    **_: Any,
) -> None:
    """A prefork child died running a node operation (OOM killer, kill -9): its pool tells
    the parent, which ends the operation at once, naming the process. (Tasks are
    acknowledged as they start, so no broker hands the message back to say it.)"""
    if not isinstance(exception, WorkerLostError) or getattr(sender, "name", "") not in NODE_TASKS:
        return
    op = load_operation(args[0]) if args else None
    if op is not None:
        lost_with_its_process(sender, op)
