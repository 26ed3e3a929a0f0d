"""The converge API's viewsets for tests/api/specs.py (kept here: that file is full)."""

from __future__ import annotations

from converge.models import FirmwareArtifact
from tests.api.base import ADMINS, READERS, ViewSetSpec

R, D = READERS, ADMINS


def make_artifact() -> FirmwareArtifact:
    count = FirmwareArtifact.objects.count()
    return FirmwareArtifact.objects.create(
        name="xe9680-bmc",
        version=f"1.{count}.0",
        component="BMC",
        url=f"http://10.0.0.5/fw/bmc-1.{count}.0.bin",
        sha256="c" * 64,
        created_by="user:factory",
    )


FIRMWARE_ARTIFACTS = ViewSetSpec(
    basename="firmware-artifact",
    access=(R, R, D, D, D),  # what BMCs flash: admins only
    url="/api/v1/firmware-artifacts/",
    model=FirmwareArtifact,
    make=make_artifact,
    offers=frozenset({"list", "retrieve", "create", "delete"}),
    create=lambda: {
        "name": "xe9680-bios",
        "version": "2.19.1",
        "component": "BIOS",
        "url": "http://10.0.0.5/fw/bios-2.19.1.exe",
        "sha256": "d" * 64,
    },
    list_queries=6,
    detail_queries=5,
)
