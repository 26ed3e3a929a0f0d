"""Virtual-media deploys (provisioning/vmedia.py): the site's policy against what the BMC
has, artifacts that are not what the image says, and the ISO served to its BMC only.
The whole flow, with QEMU booting the ISO: tests/e2e/test_virtual_media_deploy.py."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

import pytest
from django.utils import timezone

from inventory.choices import BootMedia
from inventory.models import Operation
from provisioning import deployments, vmedia
from provisioning.drivers import BMCFatalError
from provisioning.models import Deployment, Image
from tests.consoles.helpers import ipmi_node
from tests.factories import ImageFactory, NodeFactory, RackFactory, SiteFactory, put_in
from tests.peers.http_answers import answering
from tests.peers.util import free_port

pytestmark = pytest.mark.django_db


def deploy_of(node):
    """The deploy operation of `node`, as the action leaves it for the worker."""
    put_in(node, "deploying")
    image = ImageFactory()
    return Operation.objects.create(kind="deploy", node=node, actor="t", params={"image": image.pk})


def test_a_site_deploying_through_virtual_media_only_fails_an_ipmi_node_saying_why(
    ipmi_sim_factory,
):
    bmc = ipmi_sim_factory(password="vmedia-only-pw")
    site = SiteFactory(name="Edge hall", boot_media=BootMedia.VIRTUAL_MEDIA)
    node = ipmi_node(bmc, rack=RackFactory(site=site))
    op = deploy_of(node)
    with pytest.raises(BMCFatalError) as refused:
        deployments.deploy(node, op)
    assert str(refused.value) == (
        f"Edge hall deploys through virtual media only, and BMC at 127.0.0.1:{bmc.port} "
        "offers no virtual media over ipmi: IPMI has no standard virtual media (use Redfish)"
    )
    assert bmc.sets() == []  # nothing was asked of the machine


def test_a_site_that_allows_it_boots_a_node_without_virtual_media_from_the_network(
    ipmi_sim_factory,
):
    bmc = ipmi_sim_factory(password="vmedia-or-pxe-pw")
    site = SiteFactory(boot_media=BootMedia.VIRTUAL_MEDIA_OR_PXE)
    node = ipmi_node(bmc, rack=RackFactory(site=site))
    op = deploy_of(node)
    deployments.deploy(node, op)
    assert bmc.sets()[0] == "set boot pxe"
    assert "set power 1" in bmc.sets()
    assert Deployment.objects.get(operation=op).media_url == ""


def test_a_kernel_that_is_not_the_images_fails_the_deploy_naming_both_digests(tmp_path, settings):
    settings.CORRAL_VMEDIA_DIR = str(tmp_path)
    node = NodeFactory(state="deploying")
    kernel, initrd = b"not the kernel that was published", b"initrd"
    with answering() as files:
        image = Image.objects.create(
            name="tampered",
            version="1",
            state="published",
            kernel_url=files.answer("/vmlinuz", body=kernel),
            initrd_url=files.answer("/initrd", body=initrd),
            kernel_sha256="a" * 64,
            initrd_sha256=hashlib.sha256(initrd).hexdigest(),
        )
        deployment = Deployment.objects.create(
            node=node, image=image, token="t" * 32, token_sha256="b" * 64, deadline=timezone.now()
        )
        with pytest.raises(BMCFatalError) as refused:
            vmedia.prepare(deployment, node)
    digest = hashlib.sha256(kernel).hexdigest()
    assert f"has sha256 {digest}, not the image's {'a' * 64}" in str(refused.value)
    assert str(refused.value).startswith("the boot ISO of tampered:1 was not built: the kernel")
    assert list(tmp_path.iterdir()) == []  # no ISO


@pytest.fixture
def served(settings, tmp_path):
    """A waiting virtual-media deployment whose ISO is on disk, its BMC at 10.1.2.3."""
    settings.CORRAL_VMEDIA_DIR = str(tmp_path)
    node = NodeFactory(state="deploying", bmc__address="10.1.2.3")
    deployment = Deployment.objects.create(
        node=node,
        image=ImageFactory(),
        token="t" * 32,
        token_sha256="c" * 64,
        deadline=timezone.now(),
    )
    vmedia.iso_path(deployment.pk).write_bytes(b"ISO bytes")
    url = vmedia.media_url(deployment)
    return deployment, "/" + url.split("/", 3)[3]


def test_the_iso_is_served_to_its_bmc_while_the_deployment_waits(client, served):
    deployment, path = served
    reply = client.get(path, REMOTE_ADDR="10.1.2.3")
    assert reply.status_code == 200
    assert b"".join(reply.streaming_content) == b"ISO bytes"


def test_the_iso_is_refused_to_anyone_else_to_a_wrong_key_once_deleted_or_ended(client, served):
    deployment, path = served
    assert client.get(path, REMOTE_ADDR="10.1.2.4").status_code == 404  # another machine
    wrong = path.replace(vmedia.media_key(deployment), "0" * 40)
    assert client.get(wrong, REMOTE_ADDR="10.1.2.3").status_code == 404
    vmedia.iso_path(deployment.pk).rename(vmedia.iso_path(deployment.pk).with_suffix(".kept"))
    assert client.get(path, REMOTE_ADDR="10.1.2.3").status_code == 404  # the sweep deleted it
    vmedia.iso_path(deployment.pk).with_suffix(".kept").rename(vmedia.iso_path(deployment.pk))
    Deployment.objects.filter(pk=deployment.pk).update(status="succeeded")
    assert client.get(path, REMOTE_ADDR="10.1.2.3").status_code == 404


def test_an_ended_deploys_iso_is_deleted_and_a_silent_bmc_given_up_on_after_a_day(
    settings, tmp_path
):
    settings.CORRAL_VMEDIA_DIR = str(tmp_path)
    silent = f"127.0.0.1:{free_port()}"  # nothing listens: the BMC is gone

    def ended(age: timedelta) -> Deployment:
        deployment = Deployment.objects.create(
            node=NodeFactory(bmc__address=silent),
            image=ImageFactory(),
            token=secrets.token_urlsafe(24),
            token_sha256=secrets.token_hex(32),
            deadline=timezone.now(),
            status="failed",
        )
        Deployment.objects.filter(pk=deployment.pk).update(
            created=timezone.now() - age, media_url=vmedia.media_url(deployment)
        )
        vmedia.iso_path(deployment.pk).write_bytes(b"ISO bytes")
        return deployment

    recent, old = ended(timedelta(minutes=5)), ended(timedelta(days=2))
    assert vmedia.eject_ended() == 1
    assert list(tmp_path.iterdir()) == []  # both ISOs: their tokens are no good any more
    assert Deployment.objects.get(pk=recent.pk).media_ejected is None  # asked again later
    assert Deployment.objects.get(pk=old.pk).media_ejected is not None  # not any more


def test_only_an_admin_changes_how_a_sites_deploys_boot_and_the_site_page_sets_it(
    api, client, users
):
    site = SiteFactory(name="Hall V", slug="hall-v")
    url = f"/api/v1/sites/{site.pk}/"
    refused = api("integration").patch(url, {"boot_media": "virtual_media"}, format="json")
    assert refused.status_code == 400
    assert refused.data["boot_media"] == [
        "Only an admin may change how a site's deploys boot (docs/boot-modes.md)."
    ]
    bad = api("admin").patch(url, {"boot_media": "usb_stick"}, format="json")
    assert bad.status_code == 400 and "boot_media" in bad.data
    client.force_login(users["admin"])
    assert b'name="boot_media"' in client.get(f"/sites/{site.pk}/edit/").content
    body = {"name": "Hall V", "slug": "hall-v", "boot_media": "virtual_media_or_pxe"}
    assert client.post(f"/sites/{site.pk}/edit/", body).status_code == 302
    site.refresh_from_db()
    assert site.boot_media == "virtual_media_or_pxe"
    # A form that does not send it keeps the policy.
    assert (
        client.post(f"/sites/{site.pk}/edit/", {"name": "Hall V", "slug": "hall-v"}).status_code
        == 302
    )
    site.refresh_from_db()
    assert site.boot_media == "virtual_media_or_pxe"


def test_an_image_corral_keeps_is_built_from_its_store_and_a_damaged_copy_is_said(
    tmp_path, settings
):
    """A stored image's ISO is built from the image store, not downloaded (its artifacts'
    URLs answer nothing here); a kept file whose bytes changed on disk is never used."""
    settings.CORRAL_VMEDIA_DIR = str(tmp_path / "vmedia")
    settings.CORRAL_IMAGE_STORE = str(tmp_path / "images")
    kernel, initrd = b"kernel as published", b"initrd as published"
    shas = [hashlib.sha256(kernel).hexdigest(), hashlib.sha256(initrd).hexdigest()]
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / shas[0]).write_bytes(b"kernel, a bit flipped on disk")
    (tmp_path / "images" / shas[1]).write_bytes(initrd)
    node = NodeFactory(state="deploying")
    image = ImageFactory(name="kept", kernel_sha256=shas[0], initrd_sha256=shas[1], stored=True)
    deployment = Deployment.objects.create(
        node=node, image=image, token="t" * 32, token_sha256="d" * 64, deadline=timezone.now()
    )
    with pytest.raises(BMCFatalError) as refused:
        vmedia.prepare(deployment, node)
    damaged = hashlib.sha256(b"kernel, a bit flipped on disk").hexdigest()
    assert str(refused.value) == (
        f"the boot ISO of kept:2026.11.1 was not built: the kernel kept at "
        f"{tmp_path / 'images' / shas[0]} has sha256 {damaged}, not {shas[0]}"
    )
    assert not (tmp_path / "vmedia").exists() or list((tmp_path / "vmedia").iterdir()) == []


def test_the_beat_sends_each_site_its_own_ejects_and_ejects_unracked_nodes_itself(
    settings, tmp_path
):
    """Only a site's workers reach its BMCs and share its web servers' ISO folder: the
    beat's sweep (on the central queue) does no site's eject, it sends each its own."""
    from celery import current_app

    from provisioning import tasks

    settings.CORRAL_VMEDIA_DIR = str(tmp_path)

    def ended(rack) -> Deployment:
        deployment = Deployment.objects.create(
            node=NodeFactory(rack=rack, bmc__address=f"127.0.0.1:{free_port()}"),
            image=ImageFactory(),
            token=secrets.token_urlsafe(24),
            token_sha256=secrets.token_hex(32),
            deadline=timezone.now(),
            status="succeeded",
        )
        Deployment.objects.filter(pk=deployment.pk).update(media_url=vmedia.media_url(deployment))
        vmedia.iso_path(deployment.pk).write_bytes(b"ISO bytes")
        return deployment

    for slug in ("eject-east", "eject-west"):
        ended(RackFactory(site=SiteFactory(slug=slug)))
    unracked = ended(None)

    assert tasks.eject_media() == 2
    # The unracked node's ISO went here; each site's waits for its own worker.
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f"deploy-{d.pk}.iso" for d in Deployment.objects.exclude(pk=unracked.pk)
    )
    with current_app.connection_for_read() as broker:  # whichever broker this run has
        for slug in ("eject-east", "eject-west"):
            queue = broker.SimpleQueue(f"site.{slug}")
            message = queue.get(timeout=5)
            assert message.headers["task"] == "provisioning.tasks.eject_media"
            assert message.decode()[1] == {"site": slug}
            message.ack()
            queue.close()
