"""Signed firmware packages: a detached ed25519 signature over the artifact's manifest
(docs/converge.md), checked before any byte is fetched or kept. The manifest is built
here as a release tool would, from the documented fields, not with Corral's code."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from django.core.files.uploadedfile import SimpleUploadedFile

from converge import artifacts
from converge.models import FirmwareArtifact

pytestmark = pytest.mark.django_db

IMAGE = b"MZ a signed NIC firmware package, in spirit" * 500
DIGEST = hashlib.sha256(IMAGE).hexdigest()
FIELDS = {
    "name": "cx7-nic",
    "version": "28.39.1002",
    "component": "NIC.Slot.*",
    "fits": "",
    "activation": "reset",
    "sha256": DIGEST,
}


@pytest.fixture
def release_key(settings, tmp_path):
    settings.CORRAL_ARTIFACT_DIR = tmp_path / "kept"
    key = Ed25519PrivateKey.generate()
    raw = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    settings.CORRAL_FIRMWARE_SIGNING_KEYS = [base64.b64encode(raw).decode()]
    return key


def signed(key: Ed25519PrivateKey, **changed: str) -> str:
    manifest = json.dumps({**FIELDS, **changed}, sort_keys=True, separators=(",", ":"))
    return base64.b64encode(key.sign(manifest.encode())).decode()


def upload(api, signature: str):
    body = {"file": SimpleUploadedFile("cx7.bin", IMAGE), **FIELDS, "signature": signature}
    return api("admin").post("/api/v1/firmware-artifacts/upload/", body, format="multipart")


def test_a_signed_upload_is_accepted_and_keeps_its_signature(api, release_key):
    signature = signed(release_key)
    resp = upload(api, signature)
    assert resp.status_code == 201, resp.content
    assert (resp.data["state"], resp.data["signature"]) == ("accepted", signature)


def test_a_signature_made_for_another_package_is_refused_and_nothing_is_kept(
    api, release_key, settings
):
    resp = upload(api, signed(release_key, version="28.39.1000"))  # signed an older release
    assert resp.status_code == 400
    assert resp.json()["signature"] == [
        "does not verify against any configured signing key (CORRAL_FIRMWARE_SIGNING_KEYS)"
    ]
    assert not FirmwareArtifact.objects.exists()
    assert not settings.CORRAL_ARTIFACT_DIR.exists() or not any(
        settings.CORRAL_ARTIFACT_DIR.iterdir()
    )


def test_a_signed_download_is_accepted_once_its_bytes_check_out(api, release_key, tmp_path):
    from tests.provisioning.conftest import ArtifactServer

    server = ArtifactServer(tmp_path)
    try:
        url, _ = server.add("cx7.bin", IMAGE)
        body = {**FIELDS, "url": url, "signature": signed(release_key)}
        resp = api("admin").post("/api/v1/firmware-artifacts/", body, format="json")
        assert resp.status_code == 201, resp.content
        assert artifacts.verify(resp.data["id"]).state == "accepted"
    finally:
        server.stop()


def test_with_signatures_required_an_unsigned_package_is_a_400_before_any_download(
    api, release_key, settings
):
    settings.CORRAL_REQUIRE_SIGNED_FIRMWARE = True
    # Nothing answers at this address: a download attempted would be a refused artifact,
    # not this 400.
    body = {**FIELDS, "url": "http://127.0.0.1:9/cx7.bin"}
    resp = api("admin").post("/api/v1/firmware-artifacts/", body, format="json")
    assert resp.status_code == 400
    assert resp.json()["signature"] == ["unsigned, and CORRAL_REQUIRE_SIGNED_FIRMWARE is on"]
    assert not FirmwareArtifact.objects.exists()


def test_a_signature_with_no_key_to_check_it_is_refused_not_trusted(api, release_key, settings):
    settings.CORRAL_FIRMWARE_SIGNING_KEYS = []
    resp = upload(api, signed(release_key))
    assert resp.status_code == 400
    assert resp.json()["signature"] == ["present but no CORRAL_FIRMWARE_SIGNING_KEYS configured"]
