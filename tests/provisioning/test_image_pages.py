"""Image pages: an admin creates a draft, publishes it (the verification's progress on the
page) and deprecates it in the browser, with the API's rules and messages."""

import pytest
from auditlog.models import LogEntry
from django.urls import reverse

from inventory.models import Operation, SiteRole
from provisioning import images
from provisioning.models import Image
from tests.factories import ImageFactory, SiteFactory, user_in
from tests.provisioning.test_images import image_body

pytestmark = pytest.mark.django_db

NEW = reverse("provisioning:image_new")


def form_data(body: dict) -> dict:
    import json

    return {**body, "baseline": json.dumps(body.get("baseline", {}))}


@pytest.mark.parametrize("role", ["manager", "technician", "integration"])
def test_only_a_fleet_wide_admin_writes_images(client, users, role):
    client.force_login(users[role])
    assert client.get(NEW).status_code == 403
    assert client.post(NEW, {}).status_code == 403
    listing = client.get(reverse("provisioning:image_list")).content.decode()
    assert 'id="new-image"' not in listing


def test_a_site_admin_is_not_an_image_admin(client):
    # Images belong to no site, as in the API: a site role does not reach them.
    user = user_in(None, "site-admin")
    SiteRole.objects.create(user=user, site=SiteFactory(), role="admin")
    client.force_login(user)
    assert client.get(NEW).status_code == 403


def test_admin_creates_a_draft_then_publishes_it(client, users, artifact_server):
    client.force_login(users["admin"])
    assert 'id="new-image"' in client.get(reverse("provisioning:image_list")).content.decode()
    resp = client.post(NEW, form_data(image_body(artifact_server)))
    image = Image.objects.get(name="ubuntu-gpu")
    assert resp.status_code == 302 and resp["Location"] == image.get_absolute_url()
    assert image.state == "draft" and image.baseline == {"driver": "550.90.07", "cuda": "12.4"}
    assert LogEntry.objects.get_for_object(image).filter(actor=users["admin"]).exists()

    resp = client.post(reverse("provisioning:image_publish", args=[image.pk]))
    assert resp.status_code == 302
    op = Operation.objects.get(kind="publish_image")
    page = client.get(image.get_absolute_url()).content.decode()
    assert "waiting for a worker" in page and 'hx-trigger="every 1s"' in page
    images.publish_task_body(op.pk)  # what the worker runs
    page = client.get(image.get_absolute_url(), HTTP_HX_REQUEST="true").content.decode()
    assert 'id="image-state">published<' in page and "every 1s" not in page
    assert 'id="deprecate"' in page and 'id="publish"' not in page

    resp = client.post(reverse("provisioning:image_deprecate", args=[image.pk]), follow=True)
    assert "is deprecated" in resp.content.decode()
    assert Image.objects.get(pk=image.pk).state == "deprecated"


def test_a_failed_verification_is_shown_with_its_reason(client, users, artifact_server):
    client.force_login(users["admin"])
    body = image_body(artifact_server, initrd_sha256="0" * 64)
    client.post(NEW, form_data(body))
    image = Image.objects.get(name="ubuntu-gpu")
    client.post(reverse("provisioning:image_publish", args=[image.pk]))
    images.publish_task_body(Operation.objects.get(kind="publish_image").pk)
    page = client.get(image.get_absolute_url()).content.decode()
    assert "not published: initrd: sha256 mismatch" in page
    assert 'id="publish"' in page  # fix the draft and try again


def test_bad_input_shows_the_api_message_and_writes_nothing(client, users, api, artifact_server):
    client.force_login(users["admin"])
    body = image_body(artifact_server, kernel_sha256="not-a-hash", kernel_url="ftp:/x")
    api_errors = api("admin").post("/api/v1/images/", body, format="json").data
    page = client.post(NEW, form_data(body))
    assert page.status_code == 200
    html = page.content.decode()
    for field in ("kernel_sha256", "kernel_url"):
        message = str(api_errors[field][0])
        assert f'data-field="{field}">{message}' in html.replace("&#x27;", "'")
    assert not Image.objects.exists()
    assert "Not JSON" in client.post(NEW, {**form_data(body), "baseline": "{"}).content.decode()


def test_a_published_image_cannot_be_edited(client, users):
    client.force_login(users["admin"])
    image = ImageFactory()  # published
    resp = client.get(reverse("provisioning:image_edit", args=[image.pk]), follow=True)
    assert "immutable; create a new version" in resp.content.decode()
    resp = client.post(reverse("provisioning:image_publish", args=[image.pk]), follow=True)
    assert "immutable" in resp.content.decode()


@pytest.mark.parametrize(
    "baseline, says",
    [
        ('{"driver": "550\\u0000"}', "driver"),  # a NUL spelt as a JSON escape
        ('{"driver": "\\ud800"}', "driver"),  # half a surrogate pair
        ("[" * 5000 + "]" * 5000, "nested"),  # past the decoder's stack
    ],
)
def test_a_baseline_json_the_api_refuses_is_a_form_error_not_a_500(
    client, users, artifact_server, baseline, says
):
    client.force_login(users["admin"])
    body = image_body(artifact_server)
    resp = client.post(NEW, {**form_data(body), "baseline": baseline})
    assert resp.status_code == 200
    assert says in resp.content.decode()
    assert not Image.objects.exists()
