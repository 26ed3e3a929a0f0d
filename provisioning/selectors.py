"""Reads for provisioning pages and the API."""

from __future__ import annotations

from django.db.models import Count, OuterRef, QuerySet, Subquery

from inventory.models import Node, Operation

from .models import BootRequest, Deployment, Image
from .models.deployments import DeploymentStatus
from .models.images import ImageState


def current_image_subquery() -> Subquery:
    """The image of a node's latest successful deployment."""
    latest = (
        Deployment.objects.filter(node=OuterRef("pk"), status=DeploymentStatus.SUCCEEDED)
        .order_by("-phoned_home")
        .values("image_id")[:1]
    )
    return Subquery(latest)


def images_with_node_counts() -> QuerySet[Image]:
    counts = (
        Node.objects.annotate(current_image=current_image_subquery())
        .filter(current_image=OuterRef("pk"))
        .values("current_image")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Image.objects.annotate(nodes_running=Subquery(counts))


def last_boot_request(node: Node) -> BootRequest | None:
    return BootRequest.objects.filter(node=node).first()


def latest_deployment(node: Node) -> Deployment | None:
    return Deployment.objects.select_related("image").filter(node=node).first()


def golden_image(node: Node) -> Image | None:
    """The image a recycle puts back: the last one the node booted and phoned home with,
    if it is still published (a deprecated image is not deployed again unasked)."""
    deployment = (
        Deployment.objects.select_related("image")
        .filter(node=node, status=DeploymentStatus.SUCCEEDED)
        .order_by("-phoned_home")
        .first()
    )
    if deployment is None or deployment.image.state != ImageState.PUBLISHED:
        return None
    return deployment.image


def latest_publish(image: Image) -> Operation | None:
    """The image's last publish operation: its verification's progress or why it failed."""
    return (
        Operation.objects.filter(kind="publish_image", params__image=image.pk)
        .order_by("-pk")
        .first()
    )
