"""Recycle from the node page: the image chooser may be left on the node's golden image."""

import pytest
from django.urls import reverse

from inventory.models import Operation
from tests.factories import NodeFactory

pytestmark = pytest.mark.django_db


def test_the_node_page_recycles_onto_the_golden_image_by_default(client, users, rack):
    node = NodeFactory(rack=rack, state="in_service")
    client.force_login(users["technician"])
    html = client.get(reverse("inventory:node_detail", args=[node.pk])).content.decode()
    form = html.split('action="' + reverse("inventory:node_action", args=[node.pk, "recycle"]))[1]
    form = form.split("</form>")[0]
    assert '<option value="">its golden image</option>' in form
    assert " required" not in form.split("<select")[1].split(">")[0]  # may be left as is
    assert "disabled" not in form  # no published image yet: the golden one still serves

    resp = client.post(
        reverse("inventory:node_action", args=[node.pk, "recycle"]),
        {"param.image": ""},
        HTTP_HX_REQUEST="true",
    )
    assert resp.status_code == 200
    op = Operation.objects.get(node=node, kind="recycle")
    assert op.status == "running" and not op.params.get("image")
    # Its first step, the drain, started with it; the image is chosen when the deploy's
    # turn comes.
    assert list(op.children.values_list("kind", flat=True)) == ["drain"]
