"""Celery tasks: take an Operation id, delegate to the runner and the step, nothing else."""

from celery import Task, shared_task

from provisioning.runner import run_node_operation

from . import artifacts, bios, firmware


@shared_task(name="converge.tasks.apply_bios", bind=True, soft_time_limit=900, time_limit=930)
def apply_bios(self: Task, op_id: int) -> str:
    return run_node_operation(self, op_id, bios.apply)


@shared_task(name="converge.tasks.apply_firmware", bind=True, soft_time_limit=7200, time_limit=7260)
def apply_firmware(self: Task, op_id: int) -> str:
    return run_node_operation(self, op_id, firmware.apply)


@shared_task(name="converge.tasks.verify_artifact", soft_time_limit=3600, time_limit=3660)
def verify_artifact(pk: int) -> str:
    return artifacts.verify(pk).state
