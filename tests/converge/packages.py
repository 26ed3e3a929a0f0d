"""Firmware packages for converge tests: accepted artifacts made directly (their check is
tests/converge/test_artifacts.py's business)."""

from __future__ import annotations

import hashlib

from converge.models import FirmwareArtifact


def package(name: str, version: str = "1.52.00", component: str = "BMC", **fields):
    defaults = {
        "url": f"https://repo.example.net/fx1/{name}.bin",
        "sha256": hashlib.sha256(name.encode()).hexdigest(),
        "state": "accepted",
        "activation": "immediate",
    }
    return FirmwareArtifact.objects.create(
        name=name, version=version, component=component, **{**defaults, **fields}
    )
