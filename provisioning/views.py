"""Dashboard pages of provisioning. The node page pulls the boot panel in over HTMX, so
inventory's templates need no provisioning import."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, render

from inventory.models import Node
from inventory.permissions import VIEW
from inventory.views import require

from . import selectors


@login_required
def image_list(request):
    require(request, VIEW)
    images = selectors.images_with_node_counts().order_by("name", "-created")
    return render(request, "provisioning/image_list.html", {"images": images})


@login_required
def node_boot_panel(request, pk: int):
    require(request, VIEW)
    node = get_object_or_404(Node, pk=pk)
    return render(
        request,
        "provisioning/_node_boot_panel.html",
        {
            "node": node,
            "last_boot": selectors.last_boot_request(node),
            "deployment": selectors.latest_deployment(node),
        },
    )
