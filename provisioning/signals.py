"""Keep deployments in step with the lifecycle.

A node can leave `deploying` without phoning home (deadline, BMC error, a script that
cannot be rendered). Its deployment must stop waiting then: a deployment left waiting
would hand its token to the node's next boot and accept its callback after a later
re-deploy, until the deploy task got round to superseding it. inventory's transition()
is the only writer of Node.state and must not import provisioning, so provisioning
registers a hook that every transition runs in its transaction (`close_deployment`).

`bmc_health_changed` goes the other way: the power/health refresher (services.
refresh_power) announces a BMC whose health roll-up changed, and the apps above
provisioning (health: a BMC gone critical is a health event) listen without provisioning
importing them.
"""

from __future__ import annotations

from django.dispatch import Signal

from inventory.choices import NodeState
from inventory.models import LifecycleEvent

from .drivers.results import Health
from .models import Deployment, DeploymentStatus

# Sent with node, old and new (health roll-ups: ok, warning, critical, unknown) and detail
# (the sensors behind a non-ok roll-up, for a technician), after the new one is stored.
bmc_health_changed = Signal()
# Sent with node and detail ("GPU 3 Temp: 91 °C, over the limit of 87 °C ...") when a GPU
# temperature the BMC reports goes over CORRAL_GPU_TEMPERATURE_LIMIT_C (provisioning.sensors).
gpu_too_hot = Signal()
# Sent with deployment and report (the node's phone-home JSON) inside the transaction that
# closes the deployment: attestation keeps the TPM evidence the report carries.
phoned_home = Signal()


def health_detail(health: Health) -> str:
    """The sensors that are not ok, as one line: "PSU1: critical, FAN3: warning"."""
    bad = [f"{s.name}: {s.status}" for s in health.sensors if s.status not in ("ok", "unknown")]
    return ", ".join(bad)[:2000]


def close_deployment(event: LifecycleEvent) -> None:
    """A transition hook (inventory.lifecycle.on_transition, registered in provisioning's
    ready()): a node that left deploying has no deployment waiting any more."""
    if event.from_state == NodeState.DEPLOYING:
        Deployment.objects.filter(node_id=event.node_id, status=DeploymentStatus.WAITING).update(
            status=DeploymentStatus.FAILED,
            error=f"node left deploying: {event.reason or event.event}"[:2000],
        )
