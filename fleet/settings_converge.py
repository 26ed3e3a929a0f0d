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
# Firmware packages may carry a detached ed25519 signature over their manifest (checked
# like images'); these are the keys that verify it (default: the image signing keys), and
# with CORRAL_REQUIRE_SIGNED_FIRMWARE on an unsigned package is refused.
CORRAL_FIRMWARE_SIGNING_KEYS = env.list(
    "CORRAL_FIRMWARE_SIGNING_KEYS", default=env.list("CORRAL_IMAGE_SIGNING_KEYS", default=[])
)
CORRAL_REQUIRE_SIGNED_FIRMWARE = env.bool("CORRAL_REQUIRE_SIGNED_FIRMWARE", default=False)
# Converging firmware: how often a BMC's update task is asked where it stands, and how long
# an update (its task, the BMC's restart after it) may take before the step fails.
CORRAL_CONVERGE_POLL_SECONDS = env.float("CORRAL_CONVERGE_POLL_SECONDS", default=5.0)
CORRAL_CONVERGE_UPDATE_SECONDS = env.float("CORRAL_CONVERGE_UPDATE_SECONDS", default=3600.0)
# How long one run of a firmware step follows an update before it lets go of its worker
# thread and is run again every poll instead (0: at once). A short update ends within it.
CORRAL_CONVERGE_HOLD_SECONDS = env.float("CORRAL_CONVERGE_HOLD_SECONDS", default=60.0)
# How long a node's firmware update waits for its turn on a BMC it shares with other nodes
# (a multi-node chassis: one update through a BMC at a time) before it fails saying so.
CORRAL_CONVERGE_BMC_WAIT_SECONDS = env.float("CORRAL_CONVERGE_BMC_WAIT_SECONDS", default=14400.0)
