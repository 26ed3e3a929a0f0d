"""Keep deployments in step with the lifecycle.

A node can leave `deploying` without phoning home (deadline, BMC error, a script that
cannot be rendered). Its deployment must stop waiting then: a deployment left waiting
would hand its token to the node's next boot and accept its callback after a later
re-deploy, until the deploy task got round to superseding it. inventory's transition()
is the only writer of Node.state and must not import provisioning, so provisioning
listens for the event row every transition writes.
"""

from __future__ import annotations

from django.db.models.signals import post_save
from django.dispatch import receiver

from inventory.choices import NodeState
from inventory.models import LifecycleEvent

from .models import Deployment, DeploymentStatus


@receiver(post_save, sender=LifecycleEvent, dispatch_uid="corral-close-deployment")
def close_deployment(sender, instance: LifecycleEvent, created: bool, **kwargs) -> None:
    if created and instance.from_state == NodeState.DEPLOYING:
        Deployment.objects.filter(node_id=instance.node_id, status=DeploymentStatus.WAITING).update(
            status=DeploymentStatus.FAILED,
            error=f"node left deploying: {instance.reason or instance.event}"[:2000],
        )
