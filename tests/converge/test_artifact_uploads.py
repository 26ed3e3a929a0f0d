"""Firmware artifacts uploaded through the API (multipart): checked as they arrive,
accepted at once and served to BMCs; refused, keeping nothing, when the bytes are not the
sha256 given or are too many."""

from __future__ import annotations

import hashlib

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from converge.models import FirmwareArtifact

pytestmark = pytest.mark.django_db

IMAGE = b"\x7fELF an HGX GPU tray bundle, in spirit" * 1000
DIGEST = hashlib.sha256(IMAGE).hexdigest()


@pytest.fixture
def kept(tmp_path, settings):
    settings.CORRAL_ARTIFACT_DIR = tmp_path / "kept"
    return settings.CORRAL_ARTIFACT_DIR


def upload(api, sha256: str = DIGEST, role: str = "admin", data: bytes = IMAGE, **fields):
    body = {
        "file": SimpleUploadedFile("gpu-96.00.A6.bin", data),
        "name": "hgx-gpu",
        "version": "96.00.A6.00.01",
        "component": "GPU*",
        "fits": "PowerEdge XE9680",
        "activation": "ac_cycle",
        "sha256": sha256,
        **fields,
    }
    return api(role).post("/api/v1/firmware-artifacts/upload/", body, format="multipart")


def test_an_upload_is_checked_accepted_at_once_and_served(api, client, kept):
    resp = upload(api)
    assert resp.status_code == 201, resp.content
    assert (resp.data["state"], resp.data["size"], resp.data["url"]) == (
        "accepted",
        len(IMAGE),
        "",
    )
    served = client.get(resp.data["download_url"])  # no login: a BMC has none
    assert served.status_code == 200
    assert hashlib.sha256(b"".join(served.streaming_content)).hexdigest() == DIGEST
    assert [p.name for p in kept.iterdir()] == [DIGEST]


def test_an_upload_whose_sha256_differs_is_refused_naming_both_and_keeps_nothing(api, kept):
    claimed = "ab" * 32
    resp = upload(api, sha256=claimed)
    assert resp.status_code == 400
    assert resp.json()["sha256"] == [
        f"sha256 mismatch: expected {claimed}, the upload is {DIGEST}; nothing was kept"
    ]
    assert not FirmwareArtifact.objects.exists()
    assert list(kept.iterdir()) == []


def test_an_upload_over_the_limit_is_refused_keeping_nothing(api, kept, settings):
    settings.CORRAL_FIRMWARE_MAX_BYTES = 1000
    resp = upload(api)
    assert resp.status_code == 400
    assert "larger than CORRAL_FIRMWARE_MAX_BYTES (1000 bytes)" in resp.json()["file"][0]
    assert not FirmwareArtifact.objects.exists() and list(kept.iterdir()) == []


def test_a_second_upload_of_a_name_and_version_is_a_400_and_writes_nothing(api, kept):
    assert upload(api).status_code == 201
    again = upload(api, data=b"other bytes", sha256=hashlib.sha256(b"other bytes").hexdigest())
    assert again.status_code == 400, again.content
    assert again.json() == {
        "non_field_errors": ["The fields name, version must make a unique set."]
    }
    assert FirmwareArtifact.objects.count() == 1 and len(list(kept.iterdir())) == 1


@pytest.mark.parametrize("role", ["technician", "manager", "integration"])
def test_only_an_admin_uploads_what_bmcs_flash(api, kept, role):
    assert upload(api, role=role).status_code == 403
    assert not FirmwareArtifact.objects.exists()
