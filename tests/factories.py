from datetime import timedelta

import factory
from django.contrib.auth.models import Group, User
from django.utils import timezone

from inventory.models import BMC, NetworkInterface, Node, Rack, Site
from provisioning.models import Deployment, Image


class SiteFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Site
        django_get_or_create = ("slug",)

    name = factory.Sequence(lambda n: f"Hall {n}")
    slug = factory.Sequence(lambda n: f"hall{n}")


class RackFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Rack

    site = factory.SubFactory(SiteFactory)
    name = factory.Sequence(lambda n: f"r{n:02d}")
    u_height = 42


class NodeFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Node
        skip_postgeneration_save = True

    rack = factory.SubFactory(RackFactory)
    rack_unit = None
    u_height = 1
    serial = factory.Sequence(lambda n: f"SN{n:07d}")
    hostname = factory.Sequence(lambda n: f"gpu{n:05d}")
    model = "HGX H100 8-GPU"
    gpu_model = "H100-SXM"
    gpu_count = 8
    bmc = factory.RelatedFactory("tests.factories.BMCFactory", factory_related_name="node")
    nic = factory.RelatedFactory("tests.factories.InterfaceFactory", factory_related_name="node")


class BMCFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = BMC

    protocol = "redfish"
    address = factory.Sequence(lambda n: f"https://10.0.{n // 250}.{n % 250 + 1}")
    username = "admin"
    password = "s3cret-bmc-pass"


class InterfaceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = NetworkInterface

    mac = factory.Sequence(
        lambda n: f"52:54:00:{(n >> 16) & 255:02x}:{(n >> 8) & 255:02x}:{n & 255:02x}"
    )
    boot = True


class ImageFactory(factory.django.DjangoModelFactory):
    """A published golden image (its artifacts are never fetched by these tests)."""

    class Meta:
        model = Image
        django_get_or_create = ("name", "version")

    name = "ubuntu-gpu"
    version = "2026.11.1"
    state = "published"
    kernel_url = "http://10.0.0.5/img/vmlinuz"
    initrd_url = "http://10.0.0.5/img/initrd.gz"
    kernel_sha256 = "1" * 64
    initrd_sha256 = "2" * 64


def start_deploy(node: Node, image: Image, token: str) -> Deployment:
    """A ready node moved to deploying by the real transition, with its deployment, as
    the deploy task leaves it (minus the BMC calls)."""
    from inventory.lifecycle import transition
    from provisioning.deployments import token_hash

    Node.objects.filter(pk=node.pk).update(state="ready")
    node.refresh_from_db()
    transition(node, "deploy", "user:alice")
    return Deployment.objects.create(
        node=node,
        image=image,
        token=token,
        token_sha256=token_hash(token),
        deadline=timezone.now() + timedelta(hours=1),
    )


def user_in(role: str, username: str | None = None) -> User:
    user = User.objects.create_user(username or f"{role}-user", password="pw-for-tests-123")
    user.groups.add(Group.objects.get_or_create(name=role)[0])
    return user
