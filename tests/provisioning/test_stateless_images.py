"""Stateless images (docs/boot-modes.md): a root image, checked when published, whose URL and
sha256 every boot script gives the initrd; refused without one."""

import re

import pytest

from provisioning import images
from provisioning.models import Deployment, Image
from tests.factories import NodeFactory

from .test_images import image_body, publish

pytestmark = pytest.mark.django_db


def test_a_stateless_image_without_a_root_image_is_a_400_saying_what_to_give(api, artifact_server):
    body = image_body(artifact_server, deploy_mode="stateless")
    resp = api("admin").post("/api/v1/images/", body, format="json")
    assert resp.status_code == 400
    assert resp.data["rootfs_url"] == [
        "A stateless image runs from its root image: give rootfs_url (a squashfs) and its "
        "rootfs_sha256."
    ]
    assert not Image.objects.exists()


def test_a_stateless_images_root_is_checked_on_publish_and_given_to_every_boot(
    api, artifact_server, client
):
    root_url, root_sha = artifact_server.add("root.squashfs", b"squashfs-bytes" * 1000)
    body = image_body(
        artifact_server, deploy_mode="stateless", rootfs_url=root_url, rootfs_sha256=root_sha
    )
    resp = api("admin").post("/api/v1/images/", body, format="json")
    assert resp.status_code == 201, resp.content
    assert publish(api, resp.data["id"]).status == "succeeded"
    image = Image.objects.get()
    assert images.manifest(image).count(b'"mode":"stateless"') == 1  # the signature covers it

    node = NodeFactory(state="deploying")
    Deployment.objects.create(
        node=node, image=image, token="t" * 32, token_sha256="a" * 64, deadline=node.deadline
    )
    script = client.get("/boot/ipxe", {"mac": node.interfaces.get().mac}).content.decode()
    assert f"corral.root={root_url} corral.root_sha256={root_sha}" in script


def test_a_disk_images_manifest_is_what_it_was_before_modes_existed(api, artifact_server):
    resp = api("admin").post("/api/v1/images/", image_body(artifact_server), format="json")
    image = Image.objects.get(pk=resp.data["id"])
    assert image.deploy_mode == "disk"
    assert not re.search(rb'"mode"', images.manifest(image))


def test_a_stateless_ukis_measured_load_options_name_its_root_image(client):
    """Attestation measures a UKI's load options (PCR 9, docs/attestation.md): for a
    stateless image they carry the root image's sha256, so the root it runs is attested
    with the kernel that checked it."""
    from provisioning.bootserver import serve
    from tests.factories import ImageFactory

    root, sha = "http://10.0.0.5/img/root.squashfs", "3" * 64
    image = ImageFactory(
        name="uki-ram",
        deploy_mode="stateless",
        rootfs_url=root,
        rootfs_sha256=sha,
        uki_url="http://10.0.0.5/img/linux.efi",
        uki_sha256="4" * 64,
    )
    node = NodeFactory(state="deploying")
    deployment = Deployment.objects.create(
        node=node, image=image, token="t" * 32, token_sha256="b" * 64, deadline=node.deadline
    )
    script = client.get("/boot/ipxe", {"mac": node.interfaces.get().mac}).content.decode()
    uki = next(line for line in script.splitlines() if line.startswith("kernel --name uki"))
    assert f"corral.root={root} corral.root_sha256={sha}" in uki
    measured = serve.deploy_load_options(deployment.pk, "http://testserver")
    assert measured.startswith("uki ") and f"corral.root_sha256={sha}" in measured
