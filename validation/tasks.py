"""Gate tasks: thin wrappers; the step logic and its idempotency live in services."""

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded

from inventory import operations
from inventory import services as inventory
from inventory.locking import Heartbeat, release, release_for
from inventory.models import Node, Operation
from provisioning.runner import acquire_or_wait, retry_later, transient_policy
from provisioning.schedulers import SchedulerError, SchedulerTransientError

from . import reboots, services, steps
from .models import GateRun


@shared_task(name="validation.tasks.start_gate", soft_time_limit=60, time_limit=90)
def start_gate(op_id: int) -> str:
    """From the validate action or a phone-home: open a run with the default profile."""
    op = Operation.objects.select_related("node").filter(pk=op_id).first()
    if op is None or op.is_finished or op.node is None:
        return "skipped"
    operations.begin_operation(op)
    # The validate action held the node from its acceptance; from here each gate step takes
    # it for the length of the step (so a technician can still act between steps).
    release_for(op)
    try:
        if reboots.skips(op):
            return "skipped: after a reboot"
        services.cordon_for_burn_in(op)
        services.start_gate_run(op.node, op)
    except SchedulerTransientError as exc:
        # The controller did not answer the burn-in cordon: as a BMC that did not, retried.
        if retry_later(op, exc, transient_policy()):
            return "retrying"
        inventory.fail_operation(op, f"{exc} (gave up after {op.attempts} retries)")
        return "failed"
    except (services.NoProfile, SchedulerError) as exc:
        inventory.fail_operation(op, str(exc))
        return "failed"
    return "started"


@shared_task(name="validation.tasks.gate_step")
def gate_step(run_id: int, step: int) -> str:
    run = GateRun.objects.select_related("node").filter(pk=run_id).first()
    if run is None:
        return "skipped"
    holder = steps.step_holder(run_id, step)
    if Node.objects.filter(pk=run.node_id, reservation=holder).exists():
        return "duplicate"  # another delivery of this very step is running it
    if not acquire_or_wait(
        run.node,
        holder,
        run.step_attempts,
        give_up=lambda reason: services.abort_run(run_id, reason),
        wait=lambda seconds, message: steps.defer_step(run_id, step, seconds, message),
    ):
        return "waiting"
    try:
        with Heartbeat(run.node_id, holder, also=lambda: steps.step_started(run_id, step)):
            return services.gate_step(run_id, step)
    except SoftTimeLimitExceeded:
        services.abort_run(run_id, f"gate step {step} ran past its time limit")
        return "failed"
    except Exception as exc:
        services.abort_run(run_id, f"internal error: {type(exc).__name__}: {exc}")
        raise
    finally:
        release(run.node, holder)
