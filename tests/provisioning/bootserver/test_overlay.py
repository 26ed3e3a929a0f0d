"""A stateless node's overlay (provisioning/overlay.py): its own files, to its waiting
deployment's token only, from its own addresses only."""

import io
import json
import subprocess
import tarfile

import pytest

from inventory.models import NetworkInterface
from provisioning.models import Deployment
from tests.factories import ImageFactory

from .test_endpoints import TOKEN, deploying

pytestmark = pytest.mark.django_db


@pytest.fixture
def image(db):
    return ImageFactory()


def fetch(client, token=TOKEN, address="127.0.0.1"):
    return client.post(
        "/boot/overlay", {"token": token}, content_type="application/json", REMOTE_ADDR=address
    )


def test_the_node_gets_its_name_and_where_it_phones_home(client, node, image):
    deploying(node, image)
    resp = fetch(client)
    assert resp.status_code == 200 and resp["Content-Type"] == "application/gzip"
    with tarfile.open(fileobj=io.BytesIO(resp.content), mode="r:gz") as tar:
        files = {m.name: tar.extractfile(m).read().decode() for m in tar if m.isfile()}
    assert files["etc/hostname"] == f"{node.hostname}\n"
    assert f"127.0.1.1\t{node.hostname}\n" in files["etc/hosts"]
    about = json.loads(files["etc/corral/node.json"])
    assert about == {
        "hostname": node.hostname,
        "serial": node.serial,
        "site": node.rack.site.slug,
        "image": str(image),
        "callback_url": "http://testserver/boot/callback",
    }
    assert TOKEN not in resp.content.decode("latin-1")  # the token stays on its command line


def test_a_spent_or_unknown_token_and_another_address_are_refused(client, node, image):
    deployment = deploying(node, image)
    assert fetch(client, token="tok-" + "z" * 40).status_code == 403
    NetworkInterface.objects.filter(node=node).update(ip="10.9.0.7")
    elsewhere = fetch(client, address="10.9.0.8")
    assert elsewhere.status_code == 403 and "10.9.0.8" in elsewhere.json()["detail"]
    assert fetch(client, address="10.9.0.7").status_code == 200
    deployment.status = "succeeded"
    deployment.save(update_fields=["status"])
    assert fetch(client, address="10.9.0.7").status_code == 403
    assert client.get("/boot/overlay").status_code == 405


def test_the_node_keeps_its_ssh_host_key_from_one_boot_to_the_next(client, node, image, tmp_path):
    def host_key(deployment_token):
        resp = fetch(client, token=deployment_token)
        assert resp.status_code == 200
        with tarfile.open(fileobj=io.BytesIO(resp.content), mode="r:gz") as tar:
            private = tar.getmember("etc/ssh/ssh_host_ed25519_key")
            assert private.mode == 0o600
            return (
                tar.extractfile(private).read(),
                tar.extractfile("etc/ssh/ssh_host_ed25519_key.pub").read().decode(),
            )

    first = deploying(node, image)
    private, public = host_key(TOKEN)
    # OpenSSH reads the key, and it is the pair of the public one.
    (tmp_path / "key").write_bytes(private)
    (tmp_path / "key").chmod(0o600)
    derived = subprocess.run(
        ["ssh-keygen", "-y", "-f", str(tmp_path / "key")], capture_output=True, text=True
    )
    assert derived.returncode == 0, derived.stderr
    assert public.startswith(derived.stdout.strip() + " ")
    assert public.endswith(f" root@{node.hostname}\n")
    # The next boot (a new deployment, a new token): the same key.
    Deployment.objects.filter(pk=first.pk).update(status="succeeded")
    second_token = "tok-" + "e5f6a7b8" * 6
    deploying(node, image, token=second_token)
    assert host_key(second_token) == (private, public)
