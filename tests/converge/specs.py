"""The converge API's viewsets for tests/api/specs.py (kept here: that file is full)."""

from __future__ import annotations

from converge.models import BaselineArtifact, FirmwareArtifact
from drift.models import Baseline
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


def make_choice() -> BaselineArtifact:
    artifact = make_artifact()
    count = Baseline.objects.count()
    baseline = Baseline.objects.create(
        name=f"xe9680-{count}",
        node_model=f"PowerEdge XE9680 rev {count}",
        components={"firmware.BMC": artifact.version},
    )
    return BaselineArtifact.objects.create(
        baseline=baseline, component="firmware.BMC", artifact=artifact
    )


def another_choice() -> dict:
    made = make_choice()
    body = {"baseline": made.baseline_id, "component": "firmware.BMC", "artifact": made.artifact_id}
    made.delete()
    return body


def same_version_elsewhere(choice: BaselineArtifact) -> dict:
    """Another package of the version the baseline expects (a rebuilt image, say)."""
    other = FirmwareArtifact.objects.create(
        name="xe9680-bmc-rebuilt",
        version=choice.artifact.version,
        component="BMC",
        url="http://10.0.0.5/fw/bmc-rebuilt.bin",
        sha256="e" * 64,
    )
    return {"artifact": other.pk}


BASELINE_ARTIFACTS = ViewSetSpec(
    basename="baseline-artifact",
    access=(R, R, D, D, D),  # what a baseline's nodes are flashed with: admins, like baselines
    url="/api/v1/baseline-artifacts/",
    model=BaselineArtifact,
    make=make_choice,
    offers=frozenset({"list", "retrieve", "create", "update", "delete"}),
    create=another_choice,
    update=same_version_elsewhere,
    list_queries=6,
    detail_queries=5,
)
