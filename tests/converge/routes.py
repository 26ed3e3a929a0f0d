"""Converge's API routes beyond CRUD, set up for tests/api/test_contract.py's role table."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from django.core.files.uploadedfile import SimpleUploadedFile

from converge.models import FirmwareArtifact


def artifact_upload() -> tuple[str, dict, Callable[[], object]]:
    data = b"firmware bytes for the role table"
    body = {
        "file": SimpleUploadedFile("bmc.bin", data),
        "name": "contract-bmc",
        "version": "1.0",
        "component": "BMC",
        "activation": "reset",
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    return "/api/v1/firmware-artifacts/upload/", body, FirmwareArtifact.objects.count
