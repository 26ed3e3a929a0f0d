"""Firmware artifacts: created from a URL and a sha256, fetched and checked by a task, or
uploaded with their sha256 and checked as they arrive; kept (one file per sha256 under
CORRAL_ARTIFACT_DIR) and served to BMCs.

A download goes through the egress guard as image downloads do (CORRAL_IMAGE_ALLOW), is
capped at CORRAL_FIRMWARE_MAX_BYTES and lands in a temporary file: only a file whose
sha256 is the one given is moved into place, so a refused artifact leaves nothing behind
and the file a BMC is served is always the one that was checked.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import ProtectedError

from core import egress, egress_http
from core.errors import DomainConflict

from .models import ArtifactState, FirmwareArtifact

log = logging.getLogger(__name__)


def create(fields: dict[str, Any], actor: str, check: Any) -> FirmwareArtifact:
    """Record the artifact (pending) and send its check (`check`: the task that runs
    `verify`) once the row is committed."""
    artifact = FirmwareArtifact(**fields, created_by=actor)
    artifact.full_clean()
    artifact.save()
    transaction.on_commit(lambda: _send(check, artifact.pk))
    return artifact


def _send(task: Any, pk: int) -> None:
    try:
        task.delay(pk)
    except Exception:  # noqa: BLE001  the row stays pending; `verify` may be run again
        log.warning("firmware artifact %s: its check was not sent", pk, exc_info=True)


class Refused(Exception):  # noqa: N818 (an outcome, said to whoever reads the artifact)
    """Why an artifact is not kept; `field`: what to fix (an upload's 400 names it)."""

    def __init__(self, message: str, field: str = "url") -> None:
        super().__init__(message)
        self.field = field


def verify(pk: int) -> FirmwareArtifact:
    """Fetch and check a pending artifact; ends it accepted or refused with the reason."""
    artifact = FirmwareArtifact.objects.get(pk=pk)
    if artifact.state != ArtifactState.PENDING:
        return artifact
    try:
        size = _fetch(artifact)
    except Refused as exc:
        FirmwareArtifact.objects.filter(pk=pk).update(state=ArtifactState.REFUSED, reason=str(exc))
    else:
        FirmwareArtifact.objects.filter(pk=pk).update(
            state=ArtifactState.ACCEPTED, size=size, reason=""
        )
    artifact.refresh_from_db()
    return artifact


def _fetch(artifact: FirmwareArtifact) -> int:
    folder = settings.CORRAL_ARTIFACT_DIR
    folder.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".incoming-")
    try:
        with os.fdopen(handle, "wb") as out:
            got, size = egress_http.sha256_of(
                artifact.url,
                egress.IMAGE,
                settings.CORRAL_FIRMWARE_MAX_BYTES,
                "CORRAL_FIRMWARE_MAX_BYTES",
                out.write,
            )
        if got != artifact.sha256:
            raise Refused(
                f"sha256 mismatch: expected {artifact.sha256}, got {got}; nothing was kept"
            )
        os.replace(temporary, artifact.path)
        return size
    except egress_http.DownloadRefused as exc:
        raise Refused(str(exc)) from None
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def upload(fields: dict[str, Any], chunks: Iterable[bytes], actor: str) -> FirmwareArtifact:
    """An uploaded artifact, accepted at once if its bytes are the sha256 given; otherwise
    Refused naming both digests, and nothing is kept (no row, no file)."""
    artifact = FirmwareArtifact(**fields, url="", created_by=actor)
    artifact.full_clean()  # name and version unique, before any byte is written
    folder = settings.CORRAL_ARTIFACT_DIR
    folder.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=".upload-")
    digest, size = hashlib.sha256(), 0
    try:
        with os.fdopen(handle, "wb") as out:
            for chunk in chunks:
                size += len(chunk)
                if size > settings.CORRAL_FIRMWARE_MAX_BYTES:
                    raise Refused(
                        f"the upload is larger than CORRAL_FIRMWARE_MAX_BYTES "
                        f"({settings.CORRAL_FIRMWARE_MAX_BYTES} bytes); nothing was kept",
                        field="file",
                    )
                digest.update(chunk)
                out.write(chunk)
        if digest.hexdigest() != artifact.sha256:
            raise Refused(
                f"sha256 mismatch: expected {artifact.sha256}, the upload is "
                f"{digest.hexdigest()}; nothing was kept",
                field="sha256",
            )
        with transaction.atomic():
            artifact.state, artifact.size = ArtifactState.ACCEPTED, size
            artifact.save()
            os.replace(temporary, artifact.path)
        return artifact
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


class NamedByBaseline(DomainConflict):
    """An artifact a baseline names cannot go: the baseline would name nothing."""

    def __init__(self, artifact: FirmwareArtifact, names: list[str]) -> None:
        super().__init__(
            f"{artifact} is named by {', '.join(names)}; name another artifact there (or "
            "remove the choice) first"
        )


def delete(artifact: FirmwareArtifact) -> None:
    """Forget the artifact; its file goes too unless another artifact has the same bytes.
    Refused while a baseline names it."""
    path, sha256 = artifact.path, artifact.sha256
    try:
        with transaction.atomic():
            artifact.delete()
    except ProtectedError:
        choices = artifact.named_by.select_related("baseline")
        raise NamedByBaseline(
            artifact, [f"baseline {c.baseline} for {c.component}" for c in choices]
        ) from None
    shared = FirmwareArtifact.objects.filter(sha256=sha256, state=ArtifactState.ACCEPTED)
    if not shared.exists() and path.exists():
        path.unlink()


def served(sha256: str) -> FirmwareArtifact | None:
    """The accepted artifact a BMC may download by its sha256 (None: nothing to serve)."""
    artifact = FirmwareArtifact.objects.filter(sha256=sha256, state=ArtifactState.ACCEPTED)
    found = artifact.first()
    return found if found is not None and found.path.exists() else None
