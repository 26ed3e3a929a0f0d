"""One decision, two paths: what memory answers, the database answers the same way, and
what memory cannot settle it leaves to the database without recording anything."""

import pytest

from provisioning.bootserver import answers, records, serve
from provisioning.bootserver.answers import FALLBACK_SCRIPT
from provisioning.models import BootRequest
from tests.factories import ImageFactory, NodeFactory, put_in, start_deploy

pytestmark = pytest.mark.django_db(transaction=True)
BASE = "http://10.0.0.5:8000"


@pytest.fixture
def copy(boot_copy):
    return boot_copy


def from_memory(mac: str) -> str | None:
    return serve.memory_script(mac, "x86_64", BASE, "iPXE/1.21.1", "10.0.0.9")


def from_database(mac: str) -> str:
    return serve.ipxe_script(mac, "x86_64", BASE, "iPXE/1.21.1", "10.0.0.9")


def recorded() -> list[tuple[int | None, str]]:
    records.flush()
    return list(BootRequest.objects.order_by("id").values_list("node_id", "answer"))


def test_a_node_that_is_not_deploying_boots_its_disk_either_way(node, copy):
    copy.refresh()
    mac = node.interfaces.get().mac
    assert from_memory(mac.upper()) == from_database(mac)
    assert "booting from local disk" in from_database(mac)
    assert recorded() == [(node.pk, "local")] * 3


def test_a_deploying_node_gets_the_same_deploy_script_either_way(node, copy):
    token = "tok-" + "e" * 40
    start_deploy(node, ImageFactory(), token)
    copy.refresh()
    mac = node.interfaces.get().mac
    script = from_memory(mac)
    assert token in script and f"corral.callback={BASE}/boot/callback" in script
    answers._DEPLOY_SCRIPTS.clear()  # the database path renders it afresh
    assert from_database(mac) == script
    assert recorded() == [(node.pk, "deploy")] * 2


def test_a_deployment_memory_has_not_loaded_is_left_to_the_database(node, copy):
    token = "tok-" + "f" * 40
    start_deploy(node, ImageFactory(), token)
    copy.refresh()
    copy.deployments = {}  # as if created after the copy's last read of deployments
    mac = node.interfaces.get().mac
    assert from_memory(mac) is None
    assert recorded() == []  # nothing recorded: the database path answers and records
    assert token in from_database(mac)
    assert recorded() == [(node.pk, "deploy")]


def test_deploying_before_the_task_made_its_deployment_boots_the_disk(node, copy):
    put_in(node, "deploying")
    copy.refresh()
    mac = node.interfaces.get().mac
    assert from_memory(mac) is None
    assert "booting from local disk" in from_database(mac)
    assert recorded() == [(node.pk, "local")]


def test_a_script_that_cannot_render_fails_the_deploy_on_the_database_path(rack, copy):
    node = NodeFactory(rack=rack, serial="bad serial")  # a space: refused by the renderer
    start_deploy(node, ImageFactory(), "tok-" + "g" * 40)
    copy.refresh()
    mac = node.interfaces.get().mac
    assert from_memory(mac) is None
    assert from_database(mac) == FALLBACK_SCRIPT
    node.refresh_from_db()
    assert node.state == "failed"
    assert recorded() == [(node.pk, "error")]


def test_an_unknown_mac_gets_the_same_answer_either_way_and_learns_nothing(node, copy):
    copy.refresh()
    script = from_memory("52:54:00:de:ad:03")
    assert script == from_database("52:54:00:de:ad:03")
    assert "not enrolled in Corral" in script and node.hostname not in script
    assert from_memory("not-a-mac") is None  # the front doors refuse it (400)
    assert "not enrolled in Corral" in from_database("not-a-mac")
    # The same unknown MAC twice in a window is one row (test_unknown_bound.py).
    assert recorded() == [(None, "unknown")] * 2
