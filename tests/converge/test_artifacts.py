"""Firmware artifacts: created through the API, fetched and checked (sha256) from a real
HTTP server on loopback, kept, and served to BMCs from Corral's artifact server."""

from __future__ import annotations

import hashlib

import pytest

from converge import artifacts
from converge.models import FirmwareArtifact
from tests.provisioning.conftest import ArtifactServer

pytestmark = pytest.mark.django_db

IMAGE = b"\x7fELF not really a BMC image, but bytes all the same" * 100


@pytest.fixture
def store(tmp_path, settings):
    settings.CORRAL_ARTIFACT_DIR = tmp_path / "kept"
    server = ArtifactServer(tmp_path)
    yield server
    server.stop()


def create(api, url: str, sha256: str, **fields):
    body = {
        "name": "xe9680-bmc",
        "version": "1.52.00",
        "component": "BMC",
        "activation": "reset",
        "url": url,
        "sha256": sha256,
        **fields,
    }
    return api("admin").post("/api/v1/firmware-artifacts/", body, format="json")


def test_an_artifact_is_checked_kept_and_served_to_bmcs(api, client, store):
    url, digest = store.add("bmc-1.52.00.bin", IMAGE)
    resp = create(api, url, digest)
    assert resp.status_code == 201, resp.content
    assert resp.data["state"] == "pending"
    assert client.get(resp.data["download_url"]).status_code == 404  # not checked yet

    artifact = artifacts.verify(resp.data["id"])  # what the task does on a worker

    assert (artifact.state, artifact.size, artifact.reason) == ("accepted", len(IMAGE), "")
    served = client.get(resp.data["download_url"])  # no login: a BMC has none
    assert served.status_code == 200
    assert hashlib.sha256(b"".join(served.streaming_content)).hexdigest() == digest
    assert resp.data["download_url"] == f"/artifacts/firmware/{digest}/bmc-1.52.00.bin"


def test_a_file_whose_sha256_differs_is_refused_naming_both_and_nothing_is_kept(
    api, client, store, settings
):
    url, digest = store.add("bmc-1.52.00.bin", IMAGE)
    claimed = "0" * 64
    resp = create(api, url, claimed)
    artifact = artifacts.verify(resp.data["id"])
    assert artifact.state == "refused"
    assert artifact.reason == (
        f"sha256 mismatch: expected {claimed}, got {digest}; nothing was kept"
    )
    assert list(settings.CORRAL_ARTIFACT_DIR.iterdir()) == []
    assert client.get(f"/artifacts/firmware/{claimed}/x.bin").status_code == 404
    assert client.get(f"/artifacts/firmware/{digest}/x.bin").status_code == 404


def test_a_url_that_answers_404_is_refused_with_the_answer(api, store):
    resp = create(api, f"{store.url}/missing.bin", "a" * 64)
    artifact = artifacts.verify(resp.data["id"])
    assert (artifact.state, artifact.reason) == (
        "refused",
        f"{store.url}/missing.bin answered HTTP 404",
    )


def test_bad_input_is_a_400_naming_the_field_and_writes_nothing(api, store):
    url, digest = store.add("bmc.bin", IMAGE)
    resp = create(api, url, "ABC", activation="sometimes", fits=0)
    assert resp.status_code == 400
    assert set(resp.data) == {"sha256", "activation", "fits"}  # fits: a number is no text
    assert not FirmwareArtifact.objects.exists()
    assert create(api, url, digest).status_code == 201
    again = create(api, url, digest)
    assert again.status_code == 400
    assert again.data["non_field_errors"] == ["The fields name, version must make a unique set."]


def test_deleting_an_artifact_removes_its_file_unless_another_has_the_same_bytes(api, store):
    url, digest = store.add("bmc.bin", IMAGE)
    first = artifacts.verify(create(api, url, digest).data["id"])
    second = artifacts.verify(create(api, url, digest, version="1.52.01").data["id"])
    assert api("admin").delete(f"/api/v1/firmware-artifacts/{first.pk}/").status_code == 204
    assert second.path.exists()
    assert api("admin").delete(f"/api/v1/firmware-artifacts/{second.pk}/").status_code == 204
    assert not second.path.exists()


def test_who_added_and_removed_an_artifact_is_in_the_audit_trail(api, store, audited_scene):
    url, digest = store.add("bmc.bin", IMAGE)
    created = create(api, url, digest).data["id"]
    artifacts.verify(created)  # the machinery's write: no entry of its own
    assert api("admin").delete(f"/api/v1/firmware-artifacts/{created}/").status_code == 204
    entries = api("admin").get("/api/v1/audit-log/", {"model": "converge.firmwareartifact"})
    assert entries.status_code == 200, entries.content
    actions = sorted(e["action"] for e in entries.data["results"])
    assert actions == ["create", "delete"]


def test_a_url_the_egress_policy_refuses_is_a_400_naming_it(api, store):
    resp = create(api, "http://169.254.169.254/latest/bmc.bin", "a" * 64)
    assert resp.status_code == 400, resp.content
    assert list(resp.data) == ["url"] and "169.254.169.254" in str(resp.data["url"])
    assert not FirmwareArtifact.objects.exists()
