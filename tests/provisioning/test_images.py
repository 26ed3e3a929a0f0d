"""Golden images: published only when every byte checks out; immutable afterwards."""

import base64
import json

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from inventory.models import Operation
from provisioning import images
from provisioning.models import Image

pytestmark = pytest.mark.django_db


def image_body(server, **overrides):
    kernel_url, kernel_sha = server.add("vmlinuz", b"kernel-bytes" * 1000)
    initrd_url, initrd_sha = server.add("initrd.gz", b"initrd-bytes" * 1000)
    body = {
        "name": "ubuntu-gpu",
        "version": "2026.11.1",
        "kernel_url": kernel_url,
        "initrd_url": initrd_url,
        "kernel_sha256": kernel_sha,
        "initrd_sha256": initrd_sha,
        "baseline": {"driver": "550.90.07", "cuda": "12.4"},
    }
    body.update(overrides)
    return body


def publish(api, image_id: int) -> Operation:
    resp = api("admin").post(f"/api/v1/images/{image_id}/publish/")
    assert resp.status_code == 202, resp.content
    # The task body, as the worker runs it (the worker path itself is in tests/e2e).
    images.publish_task_body(resp.data["id"])
    return Operation.objects.get(pk=resp.data["id"])


def test_publish_verifies_and_then_the_image_is_immutable(api, artifact_server):
    resp = api("admin").post("/api/v1/images/", image_body(artifact_server), format="json")
    assert resp.status_code == 201, resp.content
    assert resp.data["state"] == "draft"
    op = publish(api, resp.data["id"])
    assert op.status == "succeeded", op.error
    image = Image.objects.get()
    assert image.state == "published" and image.published
    edit = api("admin").patch(f"/api/v1/images/{image.pk}/", {"cmdline": "x"}, format="json")
    assert edit.status_code == 409
    assert "immutable; create a new version" in edit.data["detail"]
    assert api("admin").delete(f"/api/v1/images/{image.pk}/").status_code == 409


def test_sha_mismatch_refuses_publication_naming_the_artifact(api, artifact_server):
    body = image_body(artifact_server, initrd_sha256="0" * 64)
    image_id = api("admin").post("/api/v1/images/", body, format="json").data["id"]
    op = publish(api, image_id)
    assert op.status == "failed"
    assert op.error.startswith("not published: initrd: sha256 mismatch")
    image = Image.objects.get(pk=image_id)
    assert image.state == "draft" and "initrd" in image.verify_error


def test_missing_artifact_is_named(api, artifact_server):
    body = image_body(artifact_server, kernel_url=f"{artifact_server.url}/nope")
    image_id = api("admin").post("/api/v1/images/", body, format="json").data["id"]
    op = publish(api, image_id)
    assert op.status == "failed" and "kernel:" in op.error and "HTTP 404" in op.error


def test_size_cap(api, artifact_server, settings):
    settings.CORRAL_IMAGE_MAX_BYTES = 1000
    image_id = (
        api("admin").post("/api/v1/images/", image_body(artifact_server), format="json").data["id"]
    )
    op = publish(api, image_id)
    assert op.status == "failed" and "larger than the 1000 byte cap" in op.error


@pytest.fixture
def signing_key(settings):
    key = Ed25519PrivateKey.generate()
    raw = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    settings.CORRAL_IMAGE_SIGNING_KEYS = [base64.b64encode(raw).decode()]
    return key


def test_signed_image_publishes_and_a_tampered_one_does_not(api, artifact_server, signing_key):
    client = api("admin")
    good = client.post("/api/v1/images/", image_body(artifact_server), format="json").data
    image = Image.objects.get(pk=good["id"])
    signature = base64.b64encode(signing_key.sign(images.manifest(image))).decode()
    client.patch(f"/api/v1/images/{image.pk}/", {"signature": signature}, format="json")
    assert publish(api, image.pk).status == "succeeded"

    bad = client.post(
        "/api/v1/images/", image_body(artifact_server, version="2026.11.2"), format="json"
    ).data
    client.patch(
        f"/api/v1/images/{bad['id']}/",
        {"signature": signature, "cmdline": "console=ttyS0 corral.token={token}"},
        format="json",
    )  # signed manifest was for another image
    op = publish(api, bad["id"])
    assert op.status == "failed"
    assert "does not verify against any configured signing key" in op.error


def test_unsigned_refused_when_signatures_are_required(api, artifact_server, settings):
    settings.CORRAL_REQUIRE_SIGNED_IMAGES = True
    image_id = (
        api("admin").post("/api/v1/images/", image_body(artifact_server), format="json").data["id"]
    )
    assert "unsigned" in publish(api, image_id).error


def test_bad_input_is_a_400(api):
    resp = api("admin").post(
        "/api/v1/images/",
        {
            "name": "Ubuntu GPU",
            "version": "1",
            "kernel_url": "not a url",
            "initrd_url": "http://x/i",
            "kernel_sha256": "abc",
            "initrd_sha256": "0" * 64,
        },
        format="json",
    )
    assert resp.status_code == 400
    assert {"name", "kernel_url", "kernel_sha256"} <= set(resp.data)
    assert json.dumps(resp.data).count("sha256 is 64") == 1
