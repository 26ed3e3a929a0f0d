"""Converging a node whose BMC takes firmware only pushed to it (the GB200 and GH200
trays' BMCs, stock OpenBMC: no SimpleUpdate, a MultipartHttpPushUri), through the real
worker: the accepted artifact's own file is sent, and the update is followed as any."""

from __future__ import annotations

import hashlib

import pytest
from django.conf import settings

from converge.models import FirmwareArtifact
from drift import baselines
from tests.converge.packages import ready_fx1
from tests.peers.updating_bmc import PUSH_URI
from tests.workers import wait_operation

pytestmark = pytest.mark.django_db(transaction=True)

BUNDLE = b"\x00GB200 compute tray BMC bundle" * 8192


def test_a_push_only_bmc_is_sent_the_artifact_and_converges(api, updating_bmc, celery_worker):
    updating_bmc.push = True
    digest = hashlib.sha256(BUNDLE).hexdigest()
    updating_bmc.images[digest] = ("BMC", "1.52.00")
    # Accepted and kept where the worker serves (and now pushes) artifacts from.
    (settings.CORRAL_ARTIFACT_DIR / digest).write_bytes(BUNDLE)
    FirmwareArtifact.objects.create(
        name="gb200-bmc",
        version="1.52.00",
        component="BMC",
        activation="immediate",
        sha256=digest,
        size=len(BUNDLE),
        state="accepted",
    )
    baselines.save(
        {"name": "fx-1", "node_model": "FX-1", "components": {"firmware.BMC": "1.52.00"}},
        "user:admin",
    )
    node = ready_fx1(updating_bmc)

    resp = api("technician").post(
        f"/api/v1/nodes/{node.pk}/actions/apply_firmware/", {}, format="json"
    )
    op = wait_operation(resp.data["id"], timeout=60)

    assert op.status == "succeeded", op.error
    assert op.result["updated"] == {"BMC": ["1.45.00", "1.52.00"]}
    [(_, parts)] = [(p, b) for p, b in updating_bmc.sent("POST") if p == PUSH_URI]
    assert parts["UpdateFile"] == BUNDLE
