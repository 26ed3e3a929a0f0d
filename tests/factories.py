"""Test data. Nodes are placed in a state with `NodeFactory(state=...)` (see put_in), never
by writing `state` by hand: one path, consistent with what transition() leaves behind."""

import contextlib
import json
from datetime import timedelta
from pathlib import Path

import factory
from auditlog.context import disable_auditlog
from django.contrib.auth.models import Group, User
from django.utils import timezone

from inventory.lifecycle import deadline_for, transition
from inventory.models import (
    BMC,
    LifecycleEvent,
    NetworkInterface,
    Node,
    Operation,
    Rack,
    Site,
)
from provisioning.deployments import token_hash
from provisioning.models import BootRequest, Deployment, Image, Subnet
from rma.models import Case
from validation.models import CheckResult, GateProfile, GateRun


class ModelFactory(factory.django.DjangoModelFactory):
    """What the tests' factories make is the scene, not a change anyone made: no audit
    entry for it (a sixth of a page test's time went to writing them). A change the test
    makes through the app is audited as ever; the tests of the trail itself set
    AUDITED_SCENE (the `audited_scene` fixture) to have the scene in it too."""

    class Meta:
        abstract = True

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        with scene():
            return super()._create(model_class, *args, **kwargs)


AUDITED_SCENE = False


def scene():
    """Unaudited, unless the test asked for an audited scene."""
    return contextlib.nullcontext() if AUDITED_SCENE else disable_auditlog()


def audited(factory_class, **kwargs):
    """A row made with its audit entry (the audit API's spec reads a site's create entry)."""
    global AUDITED_SCENE
    before, AUDITED_SCENE = AUDITED_SCENE, True
    try:
        return factory_class(**kwargs)
    finally:
        AUDITED_SCENE = before


SHIPPED_PROFILE = (
    Path(__file__).resolve().parent.parent / "validation" / "profiles" / "hgx_h100_h200.json"
)


def put_in(node: Node, state: str, deadline=None) -> Node:
    """Place an existing node in `state` as transition() would leave it (state_changed now,
    the state's deadline unless one is given), without writing an event.

    Test setup only; production moves nodes with inventory.lifecycle.transition().
    """
    fields = {
        "state": state,
        "state_changed": timezone.now(),
        "deadline": deadline or deadline_for(state),
    }
    Node.objects.filter(pk=node.pk).update(**fields)
    for key, value in fields.items():
        setattr(node, key, value)
    return node


class SiteFactory(ModelFactory):
    class Meta:
        model = Site
        django_get_or_create = ("slug",)

    name = factory.Sequence(lambda n: f"Hall {n}")
    slug = factory.Sequence(lambda n: f"hall{n}")
    # The factory's machines have no TPM; attestation tests ask for "required".
    attestation = "allow_unattested"


class RackFactory(ModelFactory):
    class Meta:
        model = Rack

    site = factory.SubFactory(SiteFactory)
    name = factory.Sequence(lambda n: f"r{n:02d}")
    u_height = 42


class NodeFactory(ModelFactory):
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

    @factory.post_generation
    def state(node, create, extracted, **kwargs):
        """`NodeFactory(state="deploying")`; `deadline=` and `failed_step=` pass through."""
        if extracted and create:
            put_in(node, extracted, deadline=node.deadline)


class BMCFactory(ModelFactory):
    class Meta:
        model = BMC

    protocol = "redfish"
    address = factory.Sequence(lambda n: f"https://10.0.{n // 250}.{n % 250 + 1}")
    username = "admin"
    password = "s3cret-bmc-pass"


class InterfaceFactory(ModelFactory):
    class Meta:
        model = NetworkInterface

    mac = factory.Sequence(
        lambda n: f"52:54:00:{(n >> 16) & 255:02x}:{(n >> 8) & 255:02x}:{n & 255:02x}"
    )
    boot = True


class ImageFactory(ModelFactory):
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


class DraftImageFactory(ImageFactory):
    """An image not yet published: still editable and deletable."""

    version = factory.Sequence(lambda n: f"2026.{n}.0")
    state = "draft"


class SubnetFactory(ModelFactory):
    class Meta:
        model = Subnet

    site = factory.SubFactory(SiteFactory)
    cidr = factory.Sequence(lambda n: f"10.{100 + n // 250}.{n % 250}.0/24")
    gateway = factory.LazyAttribute(lambda o: o.cidr.replace(".0/24", ".1"))
    dns_servers = factory.LazyAttribute(lambda o: [o.cidr.replace(".0/24", ".2")])
    boot_base_url = "http://10.20.0.5:8000"


class DeploymentFactory(ModelFactory):
    """A deployment waiting for phone-home, its single-use token encrypted at rest."""

    class Meta:
        model = Deployment

    node = factory.SubFactory(NodeFactory, state="deploying")
    image = factory.SubFactory(ImageFactory)
    token = factory.Sequence(lambda n: f"tok-{n:08d}-" + "c0ffee" * 6)
    token_sha256 = factory.LazyAttribute(lambda o: token_hash(o.token))
    deadline = factory.LazyFunction(lambda: timezone.now() + timedelta(minutes=45))


class BootRequestFactory(ModelFactory):
    class Meta:
        model = BootRequest

    node = factory.SubFactory(NodeFactory)
    mac = factory.LazyAttribute(lambda o: o.node.interfaces.first().mac)
    state = "enrolled"
    answer = "local"
    client = "iPXE/1.21.1"
    remote_addr = "10.20.0.11"


class OperationFactory(ModelFactory):
    class Meta:
        model = Operation

    kind = "power_on"
    node = factory.SubFactory(NodeFactory)
    status = "succeeded"
    progress = 100
    actor = "user:alice"


class LifecycleEventFactory(ModelFactory):
    class Meta:
        model = LifecycleEvent

    node = factory.SubFactory(NodeFactory)
    from_state = "enrolled"
    to_state = "inspecting"
    event = "inspect"
    actor = "user:alice"


class RMACaseFactory(ModelFactory):
    """An open case, as `rma.services.open_case` leaves one (without its opening event)."""

    class Meta:
        model = Case

    node = factory.SubFactory(NodeFactory, state="rma")
    reason = "uncorrected ECC on GPU 3"
    evidence = {"gpu": 3, "ecc_uncorrected": 12}
    opened_by = "system"
    sla_due = factory.LazyFunction(lambda: timezone.now() + timedelta(hours=168))


class GateProfileFactory(ModelFactory):
    """The shipped HGX profile under another name (not the default)."""

    class Meta:
        model = GateProfile

    name = factory.Sequence(lambda n: f"profile-{n}")
    spec = factory.LazyAttribute(
        lambda o: {**json.loads(SHIPPED_PROFILE.read_text()), "name": o.name}
    )


class GateRunFactory(ModelFactory):
    class Meta:
        model = GateRun

    node = factory.SubFactory(NodeFactory, state="validating")
    profile = factory.SubFactory(GateProfileFactory)
    spec = factory.LazyAttribute(lambda o: o.profile.spec)
    context = {"gpu_model": "H100-SXM", "gpu_count": 8}


class CheckResultFactory(ModelFactory):
    class Meta:
        model = CheckResult

    run = factory.SubFactory(GateRunFactory)
    phase = "preflight"
    check_name = "gpu-health"
    tool = "nvidia-smi-csv"
    command = "nvidia-smi --query-gpu=name,ecc.errors.uncorrected.volatile.total --format=csv"
    exit_code = 0
    stdout = "name, ecc.errors.uncorrected.volatile.total\nNVIDIA H100 80GB HBM3, 0\n"
    status = "pass"
    reason = "8 GPUs healthy"


def start_deploy(node: Node, image: Image, token: str) -> Deployment:
    """A ready node moved to deploying by the real transition, with its deployment, as
    the deploy task leaves it (minus the BMC calls)."""
    put_in(node, "ready")
    transition(node, "deploy", "user:alice")
    return Deployment.objects.create(
        node=node,
        image=image,
        token=token,
        token_sha256=token_hash(token),
        deadline=timezone.now() + timedelta(hours=1),
    )


def user_in(role: str | None, username: str | None = None) -> User:
    """A user holding `role` fleet-wide (None: no group; give it site roles)."""
    with scene():  # ModelFactory says why
        user = User.objects.create_user(username or f"{role}-user", password="pw-for-tests-123")
        if role:
            user.groups.add(Group.objects.get_or_create(name=role)[0])
    return user


def api_token(user: User) -> str:
    """A new API token's key for the user (knox keeps only its hash: the key is shown once)."""
    from knox.models import AuthToken

    return AuthToken.objects.create(user=user)[1]
