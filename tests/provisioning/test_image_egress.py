"""Image sources keep to the egress policy (issue 36, finding 15): an artifact URL the
policy refuses is a 400 naming its field, and publishing re-checks every redirect hop
(a real HTTP server on 127.0.0.1 answering 302) before it is followed."""

from __future__ import annotations

import hashlib
import logging

import pytest

from provisioning.models import Image
from tests.peers.http_answers import answering

from .test_images import image_body, publish

pytestmark = pytest.mark.django_db
KERNEL = b"kernel-bytes" * 1000


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
        "http://[fd00:ec2::254]/latest/",
        "http://169.254.7.7/vmlinuz",
    ],
)
def test_an_artifact_url_the_policy_refuses_is_a_400_naming_it(api, artifact_server, url):
    body = image_body(artifact_server, initrd_url=url)
    resp = api("admin").post("/api/v1/images/", body, format="json")
    assert resp.status_code == 400, resp.content
    assert "Refused by the egress policy" in str(resp.data["initrd_url"][0])
    assert not Image.objects.exists()


def test_a_redirect_to_the_metadata_address_is_refused_at_the_hop(api, artifact_server, caplog):
    with answering() as peer:
        kernel_url = peer.redirect("/vmlinuz", "http://169.254.169.254/latest/meta-data/")
        body = image_body(artifact_server, kernel_url=kernel_url)
        resp = api("admin").post("/api/v1/images/", body, format="json")
        assert resp.status_code == 201, resp.content  # the URL itself is on 127.0.0.1
        with caplog.at_level(logging.WARNING, logger="provisioning.images"):
            op = publish(api, resp.data["id"])
        assert peer.asked == [("GET", "/vmlinuz")]  # the hop was never asked
    assert op.status == "failed"
    assert op.error.startswith(f"not published: kernel: {kernel_url} was not fetched: ")
    assert "169.254.169.254 is a cloud metadata address" in op.error
    assert Image.objects.get().state == "draft"
    assert "169.254.169.254 is a cloud metadata address" in caplog.text


def test_a_redirect_to_an_allowed_place_is_followed_and_checked(api, artifact_server):
    with answering() as peer:
        peer.answer("/store/vmlinuz", body=KERNEL)
        kernel_url = peer.redirect("/vmlinuz", "/store/vmlinuz", status=301)
        body = image_body(
            artifact_server, kernel_url=kernel_url, kernel_sha256=hashlib.sha256(KERNEL).hexdigest()
        )
        op = publish(api, api("admin").post("/api/v1/images/", body, format="json").data["id"])
        assert peer.asked == [("GET", "/vmlinuz"), ("GET", "/store/vmlinuz")]
    assert op.status == "succeeded", op.error


def test_a_name_refused_since_it_was_written_is_not_fetched(api, artifact_server, settings):
    """Written while allowed; at publish time the name resolves to a denied address."""
    kernel_url, _ = artifact_server.add("vmlinuz", b"kernel-bytes" * 1000)
    body = image_body(artifact_server, kernel_url=kernel_url.replace("127.0.0.1", "localhost"))
    image_id = api("admin").post("/api/v1/images/", body, format="json").data["id"]
    settings.CORRAL_EGRESS_DENY = ("127.0.0.0/8", "::1/128")
    op = publish(api, image_id)
    assert op.status == "failed"
    assert "kernel: " in op.error and "localhost resolves to " in op.error, op.error


def test_redirects_are_followed_a_few_times_only(api, artifact_server):
    with answering() as peer:
        for hop in range(8):
            peer.redirect(f"/hop{hop}", f"/hop{hop + 1}")
        body = image_body(artifact_server, kernel_url=f"{peer.url}/hop0")
        op = publish(api, api("admin").post("/api/v1/images/", body, format="json").data["id"])
        assert len(peer.asked) == 6  # the URL and five redirects
    assert op.status == "failed" and "TooManyRedirects" in op.error
