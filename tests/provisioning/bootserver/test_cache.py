"""The per-process node copy that memory answers from, and the scripts kept per node."""

import time

import pytest

from inventory.lifecycle import transition
from provisioning.bootserver.cache import SubjectCache

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_copy_follows_a_transition_within_one_refresh(node):
    mac = node.interfaces.get().mac
    copy = SubjectCache(interval=3600, full_interval=3600)
    copy.refresh()
    assert copy.get(mac).state == "enrolled"
    time.sleep(0.01)
    transition(node, "inspect", "user:alice")
    copy.refresh()  # an incremental refresh: only rows updated since the last one
    assert copy.get(mac).state == "inspecting"
    assert copy.get("52:54:00:99:99:99") is None  # unknown: the caller asks the database


def test_the_copy_warms_the_scripts_of_what_it_loads(node):
    warmed = []
    copy = SubjectCache(interval=3600, full_interval=3600, warm=warmed.extend)
    copy.refresh()
    assert [s.hostname for s in warmed] == [node.hostname]


def test_a_kept_deploy_script_ends_with_the_deploy(client, node):
    from tests.factories import ImageFactory, start_deploy

    token = "tok-" + "c" * 40
    start_deploy(node, ImageFactory(), token)
    mac = node.interfaces.get().mac
    first = client.get("/boot/ipxe", {"mac": mac}).content.decode()
    again = client.get("/boot/ipxe", {"mac": mac}).content.decode()
    assert token in first and first == again
    transition(node, "fail", "system", "no phone-home")
    after = client.get("/boot/ipxe", {"mac": mac}).content.decode()
    assert token not in after and "kernel" not in after


@pytest.mark.slow  # 2 s on its own (docs/testing.md: Markers)
def test_a_transition_that_commits_late_is_not_missed(node):
    """A lifecycle write stamps Node.updated when it runs and becomes visible when its
    transaction commits; a refresh that read in between must not move past it (a node
    left 'not deploying' in the copy is told to boot its disk and sits at iPXE)."""
    import psycopg
    from django.db import connection

    from tests.workers import database_url

    mac = node.interfaces.get().mac
    copy = SubjectCache(interval=3600, full_interval=3600)
    copy.refresh()
    with psycopg.connect(database_url()) as slow:  # another process's transaction
        slow.execute(
            "UPDATE inventory_node SET state = 'inspecting', updated = now() WHERE id = %s",
            [node.pk],
        )
        time.sleep(1.5)  # a commit held back (a loaded database, a long transaction)
        copy.refresh()  # reads while the write is still uncommitted
        assert copy.get(mac).state == "enrolled"
        slow.commit()
    assert connection.vendor == "postgresql"
    copy.refresh()
    assert copy.get(mac).state == "inspecting"
