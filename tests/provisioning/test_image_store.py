"""Corral keeps a published image's artifacts and serves them to nodes itself
(CORRAL_IMAGE_STORE, provisioning/imagestore.py): only bytes whose sha256 checked out are
kept, under that sha256, and boot scripts send nodes to Corral's copy."""

import hashlib

import pytest

from provisioning.models import Deployment, Image
from tests.factories import NodeFactory

from .test_images import image_body, publish

pytestmark = pytest.mark.django_db


@pytest.fixture
def store(settings, tmp_path):
    settings.CORRAL_IMAGE_STORE = str(tmp_path / "images")
    return tmp_path / "images"


def deploying(image: Image) -> str:
    """The MAC of a node now deploying `image`."""
    node = NodeFactory(state="deploying")
    Deployment.objects.create(
        node=node, image=image, token="t" * 32, token_sha256="a" * 64, deadline=node.deadline
    )
    return node.interfaces.get().mac


def test_a_published_image_is_kept_and_its_nodes_boot_from_corrals_copy(
    api, artifact_server, client, store
):
    root_url, root_sha = artifact_server.add("root.squashfs", b"squashfs-bytes" * 1000)
    body = image_body(
        artifact_server, deploy_mode="stateless", rootfs_url=root_url, rootfs_sha256=root_sha
    )
    created = api("admin").post("/api/v1/images/", body, format="json")
    assert publish(api, created.data["id"]).status == "succeeded"
    image = Image.objects.get()
    assert image.stored

    shas = {body["kernel_sha256"], body["initrd_sha256"], root_sha}
    assert {p.name for p in store.iterdir()} == shas  # nothing half-written left over
    for sha in shas:
        assert hashlib.sha256((store / sha).read_bytes()).hexdigest() == sha

    script = client.get("/boot/ipxe", {"mac": deploying(image)}).content.decode()
    base = "http://testserver/boot/images"
    assert f"kernel {base}/{body['kernel_sha256']} " in script
    assert f"initrd {base}/{body['initrd_sha256']}" in script
    assert f"corral.root={base}/{root_sha} corral.root_sha256={root_sha}" in script
    assert artifact_server.url not in script  # the node never goes to the artifact server

    # The URL serves the bytes that were checked (the production server's static files
    # answer it in tests/e2e; this is Django's own answer for any other server).
    served = client.get(f"/boot/images/{root_sha}")
    assert served.status_code == 200
    assert hashlib.sha256(b"".join(served.streaming_content)).hexdigest() == root_sha


def test_an_artifact_that_does_not_check_out_is_not_kept(api, artifact_server, store):
    body = image_body(artifact_server, initrd_sha256="0" * 64)
    created = api("admin").post("/api/v1/images/", body, format="json")
    op = publish(api, created.data["id"])
    assert op.status == "failed" and "initrd: sha256 mismatch" in op.error
    # The kernel checked out and is kept (a later image may share it); the initrd is not,
    # under any name.
    assert [p.name for p in store.iterdir()] == [body["kernel_sha256"]]
    assert not Image.objects.get().stored


def test_without_a_store_nodes_fetch_the_artifacts_own_urls(api, artifact_server, client):
    body = image_body(artifact_server)
    created = api("admin").post("/api/v1/images/", body, format="json")
    assert publish(api, created.data["id"]).status == "succeeded"
    image = Image.objects.get()
    assert not image.stored
    script = client.get("/boot/ipxe", {"mac": deploying(image)}).content.decode()
    assert f"kernel {body['kernel_url']} " in script


@pytest.mark.parametrize("name", ["0" * 64, "../../etc/passwd", "ABC"])
def test_anything_but_a_kept_artifact_is_a_404(client, store, name):
    store.mkdir()
    (store / "notes.txt").write_text("not an artifact")
    assert client.get(f"/boot/images/{name}").status_code == 404
    assert client.get("/boot/images/notes.txt").status_code == 404


def test_a_store_unset_since_sends_nodes_back_to_the_artifacts_urls(
    api, artifact_server, client, store, settings
):
    body = image_body(artifact_server)
    created = api("admin").post("/api/v1/images/", body, format="json")
    assert publish(api, created.data["id"]).status == "succeeded"
    settings.CORRAL_IMAGE_STORE = ""  # nothing answers /boot/images/ now
    script = client.get("/boot/ipxe", {"mac": deploying(Image.objects.get())}).content.decode()
    assert f"kernel {body['kernel_url']} " in script
