"""Corral's artifact server for firmware: BMCs download accepted artifacts here.

No login: a BMC fetching an ImageURI presents no Corral credentials. What it can fetch is
only what an admin accepted, named by its sha256 (the name after it is for the BMC's
logs and for vendors that want a file name ending in .bin or .exe).
"""

from django.http import FileResponse, Http404, HttpRequest
from django.urls import reverse
from django.views.decorators.http import require_safe

from . import artifacts
from .models import FirmwareArtifact


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
