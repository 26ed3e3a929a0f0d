"""Converge settings (docs/converge.md), read from the environment like the rest of
fleet.settings, which imports everything here."""

from __future__ import annotations

from pathlib import Path

from fleet.env import env

BASE_DIR = Path(__file__).resolve().parent.parent

# Where accepted firmware artifacts are kept (one file per sha256) and served from to BMCs.
CORRAL_ARTIFACT_DIR = Path(env.str("CORRAL_ARTIFACT_DIR", default=str(BASE_DIR / "artifacts")))
# The largest firmware artifact Corral downloads (bytes): a GPU tray bundle is ~1 GiB.
CORRAL_FIRMWARE_MAX_BYTES = env.int("CORRAL_FIRMWARE_MAX_BYTES", default=4 * 1024**3)
