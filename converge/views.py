"""Corral's artifact server for firmware (BMCs download accepted artifacts here), and the
baseline page's panel of the packages its firmware components are flashed from.

Artifact server:

No login: a BMC fetching an ImageURI presents no Corral credentials. What it can fetch is
only what an admin accepted, named by its sha256 (the name after it is for the BMC's
logs and for vendors that want a file name ending in .bin or .exe).
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import IntegrityError, transaction
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from drift.models import Baseline
from inventory.permissions import ADMIN, VIEW, actor_of, can
from inventory.web import require

from . import artifacts, pins, selectors
from .models import BaselineArtifact, FirmwareArtifact


def download_path(artifact: FirmwareArtifact) -> str:
    name = artifact.url.rstrip("/").rsplit("/", 1)[-1] or f"{artifact.name}.bin"
    return reverse("converge:download", args=[artifact.sha256, name])


@require_safe
def download(request: HttpRequest, sha256: str, name: str) -> FileResponse:
    artifact = artifacts.served(sha256)
    if artifact is None:
        raise Http404("no accepted firmware artifact has that sha256")
    return FileResponse(
        artifact.path.open("rb"),
        as_attachment=True,
        filename=name,
        content_type="application/octet-stream",
    )


@login_required
def baseline_panel(request: HttpRequest, baseline_pk: int) -> HttpResponse:
    """Each firmware component of the baseline and the package that brings a node there:
    the one named, or any accepted one that fits (found per node's model)."""
    require(request, VIEW)
    baseline = get_object_or_404(Baseline, pk=baseline_pk)
    context = {
        "baseline": baseline,
        "rows": selectors.firmware_choices(baseline),
        "can_edit": can(request.user, ADMIN),
    }
    return render(request, "converge/_baseline_panel.html", context)


@login_required
@require_POST
def name_artifact(request: HttpRequest, baseline_pk: int) -> HttpResponse:
    """Name (artifact given) or clear (none) the package for one firmware component; a
    mismatch is said on the page and nothing changes. The same checks as the API's."""
    require(request, ADMIN)
    baseline = get_object_or_404(Baseline, pk=baseline_pk)
    component = request.POST.get("component", "")
    chosen = request.POST.get("artifact", "")
    if not chosen:
        BaselineArtifact.objects.filter(baseline=baseline, component=component).delete()
        messages.success(request, f"{component}: any accepted package that fits is used.")
        return redirect(baseline)
    if not chosen.isdigit():
        messages.error(request, f"{component}: choose a package from the list")
        return redirect(baseline)
    artifact = get_object_or_404(FirmwareArtifact, pk=chosen)
    problems = pins.problems(baseline, component, artifact)
    if problems:
        messages.error(request, "; ".join(problems.values()))
        return redirect(baseline)
    try:
        with transaction.atomic():
            BaselineArtifact.objects.update_or_create(
                baseline=baseline,
                component=component,
                defaults={"artifact": artifact, "created_by": actor_of(request.user)},
            )
    except IntegrityError:  # named by someone else at the same moment: theirs stands
        messages.error(request, f"{component} was named meanwhile; look again")
        return redirect(baseline)
    messages.success(request, f"{component} is flashed from {artifact}.")
    return redirect(baseline)
