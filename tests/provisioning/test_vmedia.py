"""Virtual-media deploys (provisioning/vmedia.py): the site's policy against what the BMC
has, artifacts that are not what the image says, and the ISO served to its BMC only.
The whole flow, with QEMU booting the ISO: tests/e2e/test_virtual_media_deploy.py."""

from __future__ import annotations

import hashlib

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


def test_the_iso_is_refused_to_anyone_else_to_a_wrong_key_and_once_it_ended(client, served):
    deployment, path = served
    assert client.get(path, REMOTE_ADDR="10.1.2.4").status_code == 404  # another machine
    wrong = path.replace(vmedia.media_key(deployment), "0" * 40)
    assert client.get(wrong, REMOTE_ADDR="10.1.2.3").status_code == 404
    Deployment.objects.filter(pk=deployment.pk).update(status="succeeded")
    assert client.get(path, REMOTE_ADDR="10.1.2.3").status_code == 404
