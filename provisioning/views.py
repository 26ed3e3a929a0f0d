"""Dashboard pages of provisioning. The node page pulls the boot panel in over HTMX, so
inventory's templates need no provisioning import. Image pages are the admin's (as the
API's image writes are): create a draft, publish it (the verification shows its
progress), deprecate it; every write goes through `provisioning.images`."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db import transaction
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from core.web import ListPage
from inventory.models import Node
from inventory.permissions import ADMIN, VIEW, actor_of, can
from inventory.scope import visible_or_404
from inventory.web import FleetDetail, require

from . import images, selectors
from .forms import ImageForm
from .models import Image, ImageState


class ImageList(ListPage):
    """The golden images (the fleet's: every reader sees them), with the nodes running each."""

    template_name = "provisioning/image_list.html"
    rows_name = "images"

    def check(self, request):
        require(request, VIEW)

    def queryset(self, request):
        return selectors.images_with_node_counts().order_by("name", "-created")

    def more_context(self, request, page):
        return {"can_admin": can(request.user, ADMIN)}


image_list = ImageList.as_view()


def _attach(form: ImageForm, exc: ValidationError) -> None:
    """The service's (the model's) messages on the form's fields, as the API names them."""
    for field, errors in exc.message_dict.items():
        form.add_error(field if field in form.fields else None, errors)


@login_required
@require_http_methods(["GET", "POST"])
def image_form(request, pk: int | None = None):
    """A new draft, or a draft changed (a published image is immutable: a new version)."""
    require(request, ADMIN, on=None)
    image = get_object_or_404(Image, pk=pk) if pk else None
    if image is not None and image.state != ImageState.DRAFT:
        messages.error(request, str(images.ImageImmutable(image)))
        return redirect(image)
    form = ImageForm(request.POST or None, instance=image)
    if request.method == "POST" and form.is_valid():
        try:
            with transaction.atomic():
                if image is None:
                    image = images.create_image(**form.cleaned_data)
                else:
                    image = images.update_image(image, **form.cleaned_data)
        except ValidationError as exc:
            _attach(form, exc)
        except images.ImageImmutable as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Saved {image} as a draft: publish it to deploy it.")
            return redirect(image)
    return render(request, "provisioning/image_form.html", {"form": form, "image": image})


def _image_context(request, image: Image) -> dict:
    return {
        "image": image,
        "publishing": selectors.latest_publish(image),
        "nodes_running": selectors.images_with_node_counts()
        .filter(pk=image.pk)
        .values_list("nodes_running", flat=True)
        .first(),
        "can_admin": can(request.user, ADMIN),
    }


class ImageDetail(FleetDetail):
    template_name = "provisioning/image_detail.html"
    partial = "image-live"  # its publish, polled while it runs

    def queryset(self, request):
        return Image.objects.all()

    def context(self, request, obj):
        return _image_context(request, obj)


image_detail = ImageDetail.as_view()


@login_required
@require_POST
def image_publish(request, pk: int):
    require(request, ADMIN, on=None)
    image = get_object_or_404(Image, pk=pk)
    try:
        with transaction.atomic():
            images.start_publish(image, actor_of(request.user))
    except images.ImageImmutable as exc:
        messages.error(request, str(exc))
    return redirect(image)


@login_required
@require_POST
def image_deprecate(request, pk: int):
    require(request, ADMIN, on=None)
    image = get_object_or_404(Image, pk=pk)
    try:
        images.deprecate(image)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, f"{image} is deprecated: no new deployment will use it.")
    return redirect(image)


@login_required
def node_boot_panel(request, pk: int):
    require(request, VIEW)
    node = visible_or_404(request.user, Node, pk=pk)
    return render(
        request,
        "provisioning/_node_boot_panel.html",
        {
            "node": node,
            "last_boot": selectors.last_boot_request(node),
            "deployment": selectors.latest_deployment(node),
        },
    )
