"""A stateless node has no disk to boot (docs/boot-modes.md): a boot it makes on its own
(a power loss, a reset) is answered with its image again, as a deploy of its own: a new
token, the `rebooted` event, the phone-home that ends it, and the gates the profile's
`after_reboot` asks for."""

import pytest

from inventory.models import LifecycleEvent, Node, Operation
from provisioning import deployments
from provisioning.models import Deployment
from tests.api.specs import profile_spec
from tests.factories import ImageFactory, NodeFactory, put_in, start_deploy
from validation import tasks as gate_tasks
from validation.models import GateProfile, GateRun

from .test_answers import from_database, from_memory, recorded

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = "http://10.0.0.5/img/root.squashfs"


def stateless_image(**fields):
    return ImageFactory(
        name="compute-ram",
        deploy_mode="stateless",
        rootfs_url=ROOT,
        rootfs_sha256="3" * 64,
        **fields,
    )


def running(image, state="in_service") -> Node:
    """A node that deployed `image`, phoned home with it and is now in `state`."""
    node = NodeFactory()
    token = "first-" + "a" * 40
    start_deploy(node, image, token)
    deployments.phone_home(token, {"hostname": node.hostname}, None)
    put_in(node, state)
    node.refresh_from_db()
    return node


def use_profile(**changes) -> GateProfile:
    GateProfile.objects.update(is_default=False)
    profile = GateProfile(name="gates", spec=profile_spec("gates", **changes), is_default=True)
    profile.full_clean()
    profile.save()
    return profile


def test_a_stateless_node_that_boots_on_its_own_is_deployed_its_image_again(boot_copy):
    image = stateless_image()
    node = running(image)
    assert node.stateless
    mac = node.interfaces.get().mac

    boot_copy.refresh()
    assert from_memory(mac) is None  # it writes: left to the database path
    script = from_database(mac)

    node.refresh_from_db()
    assert node.state == "deploying" and node.deadline is not None
    deployment = Deployment.objects.get(node=node, status="waiting")
    assert deployment.reboot and deployment.image == image
    assert deployment.token in script and f"corral.root={ROOT}" in script
    event = LifecycleEvent.objects.filter(node=node).latest("pk")
    assert (event.event, event.from_state, event.actor) == ("rebooted", "in_service", "system")
    assert "a stateless node's every boot is a deploy of compute-ram" in event.reason
    assert event.operation.kind == "deploy" and event.operation.status == "succeeded"
    # iPXE asking again (a retry, its next stage) gets the same deploy: one deployment.
    assert from_database(mac) == script
    assert Deployment.objects.filter(node=node, reboot=True).count() == 1
    assert [kind for _, kind in recorded()][-2:] == ["reboot", "deploy"]


def test_its_phone_home_asks_for_the_gates_marked_after_a_reboot(boot_copy):
    node = running(stateless_image())
    from_database(node.interfaces.get().mac)
    deployment = Deployment.objects.get(node=node, status="waiting")

    deployments.phone_home(deployment.token, {"hostname": node.hostname}, None)

    node.refresh_from_db()
    assert node.state == "validating" and node.stateless
    gates = Operation.objects.filter(node=node, kind="validate").latest("pk")
    assert gates.params == {"after": "reboot"}
    assert gates.message == "acceptance gates after a reboot"


def test_a_profile_that_skips_the_gates_after_a_reboot_admits_the_node_saying_why(boot_copy):
    use_profile(after_reboot="skip")
    node = running(stateless_image())
    from_database(node.interfaces.get().mac)
    deployments.phone_home(
        Deployment.objects.get(node=node, status="waiting").token, {"hostname": node.hostname}, None
    )
    gates = Operation.objects.filter(node=node, kind="validate").latest("pk")

    assert gate_tasks.start_gate(gates.pk) == "skipped: after a reboot"

    node.refresh_from_db()
    assert node.state == "in_service"
    assert not GateRun.objects.filter(node=node).exists()
    gates.refresh_from_db()
    assert gates.status == "succeeded"
    said = "gates not run after a reboot: gate profile gates says after_reboot: skip"
    assert LifecycleEvent.objects.filter(node=node).latest("pk").reason == said
    assert Operation.objects.filter(node=node, kind="admit").exists()  # resumed in Slurm


def test_the_gates_after_a_first_deploy_run_whatever_after_reboot_says(boot_copy):
    use_profile(after_reboot="skip")
    node = NodeFactory()
    start_deploy(node, stateless_image(), "first-" + "b" * 40)
    deployments.phone_home("first-" + "b" * 40, {"hostname": node.hostname}, None)
    gates = Operation.objects.filter(node=node, kind="validate").latest("pk")
    assert gates.params == {}
    assert gate_tasks.start_gate(gates.pk) == "started"
    assert GateRun.objects.filter(node=node).exists()


def test_after_reboot_is_run_or_skip_and_says_so(api):
    spec = profile_spec("odd", after_reboot="sometimes")
    resp = api("admin").post("/api/v1/gate-profiles/", {"name": "odd", "spec": spec}, format="json")
    assert resp.status_code == 400
    assert (
        "profile.after_reboot: must be 'run' (a stateless node's reboot runs the gates) or "
        "'skip' (it returns to service once it phoned home), got 'sometimes'" in str(resp.data)
    )


@pytest.mark.parametrize("state", ["drained", "failed"])
def test_a_stateless_node_out_of_service_is_not_redeployed_by_its_boot(boot_copy, state):
    node = running(stateless_image(), state=state)
    script = from_database(node.interfaces.get().mac)
    node.refresh_from_db()
    assert node.state == state and "booting from local disk" in script
    assert not Deployment.objects.filter(node=node, reboot=True).exists()


def test_a_node_running_a_disk_image_boots_its_disk(boot_copy):
    node = running(ImageFactory())
    assert not node.stateless
    assert "booting from local disk" in from_database(node.interfaces.get().mac)
    node.refresh_from_db()
    assert node.state == "in_service"


def test_a_disk_deploy_after_a_stateless_one_makes_the_node_boot_its_disk_again(boot_copy):
    node = running(stateless_image(), state="ready")
    start_deploy(node, ImageFactory(), "second-" + "c" * 40)
    deployments.phone_home("second-" + "c" * 40, {"hostname": node.hostname}, None)
    node.refresh_from_db()
    assert not node.stateless


def test_the_api_says_a_node_runs_from_ram_and_refuses_to_be_told(api, boot_copy):
    node = running(stateless_image())
    url = f"/api/v1/nodes/{node.pk}/"
    assert api("manager").get(url).data["stateless"] is True
    api("admin").patch(url, {"stateless": False}, format="json")
    node.refresh_from_db()
    assert node.stateless  # Corral's observation: a phone-home sets it, nobody else
