"""What a machine sees at /boot/: per-node iPXE scripts, phone-home with its token."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from drift.models import DriftCell
from inventory.models import Fact
from provisioning.deployments import token_hash
from provisioning.models import BootRequest, Deployment
from tests.factories import ImageFactory, NodeFactory, put_in

pytestmark = pytest.mark.django_db
TOKEN = "tok-" + "a1b2c3d4" * 6


@pytest.fixture
def image(db):
    return ImageFactory(baseline={"driver": "550.90.07"})


def deploying(node, image, token=TOKEN, **kw) -> Deployment:
    put_in(node, "deploying", deadline=timezone.now() + timedelta(minutes=45))
    return Deployment.objects.create(
        node=node,
        image=image,
        token=token,
        token_sha256=token_hash(token),
        deadline=kw.get("deadline", node.deadline),
    )


def ipxe(client, mac, **query):
    return client.get(
        "/boot/ipxe",
        {"mac": mac, "arch": "x86_64", **query},
        HTTP_USER_AGENT="iPXE/1.0.0+git-20190125",
    )


def test_unknown_mac_gets_a_script_that_reveals_nothing(client, rack):
    NodeFactory(rack=rack, hostname="secret-host")
    resp = ipxe(client, "52:54:00:ff:ff:ff")
    body = resp.content.decode()
    assert resp.status_code == 200 and body.startswith("#!ipxe")
    assert "not enrolled in Corral" in body
    assert "secret-host" not in body and "http" not in body
    assert BootRequest.objects.get().answer == "unknown"


def test_enrolled_node_not_deploying_boots_from_disk(client, node):
    mac = node.interfaces.get().mac
    body = ipxe(client, mac.upper().replace(":", "-")).content.decode()
    assert "kernel" not in body and ("sanboot" in body or "exit" in body)
    req = BootRequest.objects.get()
    assert (req.node, req.state, req.answer, req.mac) == (node, "enrolled", "local", mac)
    assert req.client.startswith("iPXE/")


def test_deploying_node_gets_kernel_initrd_and_its_token(client, node, image):
    deploying(node, image)
    body = ipxe(client, node.interfaces.get().mac).content.decode()
    assert "kernel http://10.0.0.5/img/vmlinuz" in body
    assert "initrd http://10.0.0.5/img/initrd.gz" in body
    assert f"corral.token={TOKEN}" in body
    assert re.search(r"corral\.callback=http://testserver/boot/callback", body)
    assert BootRequest.objects.get().answer == "deploy"


def test_phone_home_facts_are_observed_and_compared_with_the_image_baseline(client, node, image):
    deploying(node, image)
    resp = callback(
        client,
        hostname=node.hostname,
        kernel="6.1.0-27-amd64",
        facts={"driver": "535.129.03", "gpus": [{"vbios": "96.00.89.00.01"}], "bad": {"x": {}}},
    )
    assert resp.status_code == 200
    seen = {(f.key, f.gpu): (f.value, f.source) for f in Fact.objects.filter(node=node)}
    assert seen == {
        ("driver", -1): ("535.129.03", "phone-home"),
        ("kernel", -1): ("6.1.0-27-amd64", "phone-home"),
        ("image", -1): (str(image), "phone-home"),
        ("gpu.vbios", 0): ("96.00.89.00.01", "phone-home"),
    }
    cell = DriftCell.objects.get(node=node, component="driver")
    assert (cell.expected, cell.observed, cell.status) == ("550.90.07", "535.129.03", "drift")


def callback(client, token=TOKEN, **report):
    return client.post(
        "/boot/callback", {"token": token, **report}, content_type="application/json"
    )


def test_phone_home_moves_the_node_to_validating_and_records_facts(client, node, image):
    deployment = deploying(node, image)
    resp = callback(
        client,
        hostname=node.hostname,
        image="ubuntu-gpu",
        version="2026.11.1",
        kernel="6.1.0-27-amd64",
        facts={"driver": "550.90.07"},
    )
    assert resp.status_code == 200 and resp.json()["status"] == "recorded"
    node.refresh_from_db()
    deployment.refresh_from_db()
    assert node.state == "validating"
    assert node.observed_facts["kernel"] == "6.1.0-27-amd64"
    assert node.observed_facts["driver"] == "550.90.07"
    assert deployment.status == "succeeded" and deployment.booted["version"] == "2026.11.1"
    event = node.events.get()
    assert (event.from_state, event.to_state, event.actor) == ("deploying", "validating", "system")
    assert "phoned home with ubuntu-gpu:2026.11.1" in event.reason
    # A node retrying after a lost reply changes nothing and is told so.
    again = callback(client, hostname=node.hostname)
    assert again.status_code == 200 and again.json()["status"] == "already recorded"
    assert node.events.count() == 1


def test_a_node_reporting_its_boot_failed_fails_the_deploy_at_once_in_its_words(
    client, node, image
):
    deployment = deploying(node, image)
    said = "root image sha256 mismatch: got " + "a" * 64 + ",\x1b[31m want " + "b" * 64
    resp = callback(client, hostname=node.hostname, failed=said)
    assert resp.status_code == 200 and resp.json()["status"] == "failure recorded"
    node.refresh_from_db()
    deployment.refresh_from_db()
    printable = said.replace("\x1b", " ")  # a terminal's escape is not kept
    assert (node.state, node.failure_reason) == ("failed", f"the node reported: {printable}")
    assert deployment.status == "failed" and printable in deployment.error
    # Its token is spent: a later phone-home (or report) is refused.
    assert callback(client, hostname=node.hostname).status_code == 403


@pytest.mark.parametrize("case", ["wrong", "expired", "other-node", "superseded", "no-token"])
def test_bad_tokens_are_refused_and_the_node_is_untouched(client, rack, image, case):
    node = NodeFactory(rack=rack)
    other = NodeFactory(rack=rack)
    deployment = deploying(node, image)
    token, report = TOKEN, {"hostname": node.hostname}
    if case == "wrong":
        token = "tok-" + "z" * 40
    elif case == "expired":
        Deployment.objects.filter(pk=deployment.pk).update(
            deadline=timezone.now() - timedelta(seconds=1)
        )
    elif case == "other-node":
        report = {"hostname": other.hostname}
    elif case == "superseded":
        Deployment.objects.filter(pk=deployment.pk).update(status="superseded")
    elif case == "no-token":
        token = None
    resp = callback(client, token=token, **report, failed="a report with a bad token")
    assert resp.status_code == 403
    assert resp.json() == {"detail": "Token refused."}
    node.refresh_from_db()
    assert node.state == "deploying" and not node.events.exists()


def test_malformed_callback_is_a_400(client):
    resp = client.post("/boot/callback", "not json", content_type="application/json")
    assert resp.status_code == 400 and "JSON object" in resp.json()["detail"]


def test_nocloud_and_grub_for_a_deploying_node(client, node, image):
    deploying(node, image)
    mac = node.interfaces.get().mac
    meta = client.get(f"/boot/nocloud/{mac}/meta-data")
    assert meta.status_code == 200 and node.hostname in meta.content.decode()
    user = client.get(f"/boot/nocloud/{mac}/user-data").content.decode()
    assert user.startswith("#cloud-config") and TOKEN in user
    grub = client.get("/boot/grub", {"mac": mac}).content.decode()
    assert "linux" in grub and TOKEN in grub
    assert client.get("/boot/nocloud/52:54:00:00:99:99/meta-data").status_code == 404


def test_chain_script_points_ipxe_at_the_per_node_script(client):
    body = client.get("/boot/chain.ipxe").content.decode()
    assert body.startswith("#!ipxe") and "http://testserver/boot/ipxe?mac=" in body


def test_the_django_boot_view_refuses_a_mac_that_is_not_one(client):
    resp = client.get("/boot/ipxe", {"mac": "\x00"})
    assert resp.status_code == 400 and b"mac must be a MAC address" in resp.content
    assert not BootRequest.objects.exists()
