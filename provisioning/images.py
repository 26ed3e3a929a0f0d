"""Golden images: immutable once published, and published only after their bytes check out.

Publishing downloads every artifact (streamed, size-capped), compares its sha256, and
verifies the optional detached ed25519 signature over the image manifest against the
configured public keys. Any mismatch refuses publication and names the artifact.

Artifact URLs keep to the egress policy (core.egress, purpose "image"): checked when the
image is written, and again at every redirect hop and connection of the download.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from core import egress, egress_http, signing
from core.errors import DomainConflict
from core.urlsafe import redact_url
from inventory import operations
from inventory.choices import OperationStatus
from inventory.models import Operation

from . import imagestore, uki
from .models.images import DeployMode, Image, ImageState

log = logging.getLogger(__name__)


class ImageImmutable(DomainConflict):
    def __init__(self, image: Image):
        super().__init__(
            f"{image} is {image.state} and immutable; create a new version to change it."
        )


def manifest(image: Image) -> bytes:
    """The bytes a signature covers: identity and content hashes, canonical JSON."""
    doc = {
        "name": image.name,
        "version": image.version,
        "artifacts": {name: {"url": url, "sha256": sha} for name, url, sha in image.artifacts()},
        "cmdline": image.cmdline,
        "baseline": image.baseline,
    }
    if image.deploy_mode != DeployMode.DISK:  # signatures made before modes existed hold
        doc["mode"] = image.deploy_mode
    return signing.canonical(doc)


def create_image(**fields: Any) -> Image:
    image = Image(**fields)
    image.full_clean()
    image.save()
    return image


def update_image(image: Image, **fields: Any) -> Image:
    with transaction.atomic():
        current = Image.objects.select_for_update().get(pk=image.pk)
        if current.state != ImageState.DRAFT:
            raise ImageImmutable(current)
        for key, value in fields.items():
            setattr(current, key, value)
        current.full_clean()
        current.save()
    return current


def deprecate(image: Image) -> Image:
    if image.state != ImageState.PUBLISHED:
        raise ValidationError(
            {"state": f"Only a published image can be deprecated ({image} is {image.state})."}
        )
    Image.objects.filter(pk=image.pk).update(state=ImageState.DEPRECATED)
    image.refresh_from_db()
    return image


def start_publish(image: Image, actor: str) -> Operation:
    if image.state != ImageState.DRAFT:
        raise ImageImmutable(image)
    op = Operation.objects.create(
        kind="publish_image", actor=actor, params={"image": image.pk, "image_name": str(image)}
    )
    operations.enqueue_on_commit("provisioning.tasks.publish_image", op)
    return op


class VerifyError(Exception):
    pass


def _download_sha256(
    name: str, url: str, keep: list[bytes] | None = None, keeper: imagestore.Keeper | None = None
) -> str:
    """sha256 of the artifact at url, streamed; its bytes are appended to `keep` if given
    (the UKI, whose measurements are computed from its content) and written to `keeper`
    (the image store) if given."""
    cap = settings.CORRAL_IMAGE_MAX_BYTES
    sinks = [s for s in (keep.append if keep is not None else None, keeper and keeper.write) if s]

    def sink(chunk: bytes) -> None:
        for each in sinks:
            each(chunk)

    try:
        digest, _ = egress_http.sha256_of(url, egress.IMAGE, cap, "CORRAL_IMAGE_MAX_BYTES", sink)
    except egress_http.DownloadRefused as exc:
        log.warning("image artifact %s at %s not fetched: %s", name, redact_url(url), exc)
        raise VerifyError(f"{name}: {exc}") from None
    return digest


def _check(name: str, url: str, expected: str, keep: list[bytes] | None) -> None:
    """Download and check one artifact, keeping it in the image store (when there is one)
    only if its sha256 is the one expected."""
    where = imagestore.folder()
    keeper = imagestore.Keeper(where) if where is not None else None
    try:
        got = _download_sha256(name, url, keep, keeper)
        if got != expected:
            raise VerifyError(f"{name}: sha256 mismatch: expected {expected}, got {got}")
    except BaseException:
        if keeper is not None:
            keeper.discard()
        raise
    if keeper is not None:
        keeper.commit(expected)


def verify_signature(image: Image) -> None:
    try:
        signing.check(
            image.signature,
            manifest(image),
            settings.CORRAL_IMAGE_SIGNING_KEYS,
            settings.CORRAL_REQUIRE_SIGNED_IMAGES,
            keys_setting="CORRAL_IMAGE_SIGNING_KEYS",
            required_setting="CORRAL_REQUIRE_SIGNED_IMAGES",
        )
    except signing.Refused as exc:
        raise VerifyError(f"signature: {exc}") from None


def verify_and_publish(op: Operation) -> dict:
    """Run inside the publish task. Returns the result; raises VerifyError on any mismatch."""
    image = Image.objects.get(pk=op.params["image"])
    if image.state != ImageState.DRAFT:
        return {"state": image.state}
    artifacts = image.artifacts()
    measured: dict[str, str] = {}
    for index, (name, url, expected) in enumerate(artifacts):
        operations.report_progress(op, int(90 * index / len(artifacts)), f"checking {name}")
        content: list[bytes] | None = [] if name == "uki" else None
        _check(name, url, expected, content)
        if content is not None:
            try:
                measured = uki.measurements(b"".join(content))
            except uki.NotAUKI as exc:
                raise VerifyError(f"uki: {exc}") from None
    verify_signature(image)
    Image.objects.filter(pk=image.pk, state=ImageState.DRAFT).update(
        state=ImageState.PUBLISHED,
        published=timezone.now(),
        verify_error="",
        measurements=measured,
        stored=imagestore.folder() is not None,
    )
    return {"state": ImageState.PUBLISHED, "artifacts": [a[0] for a in artifacts]}


def publish_task_body(op_id: int) -> None:
    op = Operation.objects.get(pk=op_id)
    if op.is_finished:
        return
    operations.begin_operation(op)
    try:
        result = verify_and_publish(op)
    except VerifyError as exc:
        Image.objects.filter(pk=op.params["image"]).update(verify_error=str(exc))
        operations.finish_operation(op, OperationStatus.FAILED, error=f"not published: {exc}")
        return
    operations.finish_operation(op, OperationStatus.SUCCEEDED, result=result)
