"""A BMC that refuses (a wrong password, in `make run`'s demo gpu-r02-07) is an expected
answer, not an error of Corral's: it is recorded on the node and said once in the log at
WARNING, without a traceback (issue 29: the demo's worker log had 63 "Authentication to
the session service failed" ERROR lines, sushy's, one per power refresh). Each test drives
the real task body against a real sushy-emulator behind basic auth."""

from __future__ import annotations

import logging

import pytest

from inventory import services as inventory
from inventory.models import Node
from provisioning import services, tasks
from tests.factories import NodeFactory

pytestmark = pytest.mark.django_db

REFUSED = "rejected the credentials of user 'admin'"


def with_wrong_password(emulator, **fields) -> Node:
    node = NodeFactory(gpu_count=0, **fields)
    node.bmc.address, node.bmc.system_id = emulator.address, emulator.systems[0].uuid
    node.bmc.verify_tls = False
    node.bmc.username = emulator.username
    node.bmc.give_password("ADMIN")  # the vendor's factory password, as in the demo
    node.bmc.save()
    return Node.objects.select_related("bmc").get(pk=node.pk)


def logged(caplog, level: int) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno >= level]


def test_power_refresh_of_a_refusing_bmc_warns_once_and_records_the_refusal(
    sushy_emulator_auth, caplog
):
    caplog.set_level(logging.INFO)
    node = with_wrong_password(sushy_emulator_auth, state="enrolled")
    for _ in range(3):  # beat's refresh comes back every few minutes
        services.refresh_power(Node.objects.select_related("bmc").get(pk=node.pk))

    node.refresh_from_db()
    assert REFUSED in node.bmc_message and node.bmc_health == "error"
    assert logged(caplog, logging.ERROR) == []
    warnings = logged(caplog, logging.WARNING)
    assert [(r.name, r.exc_info) for r in warnings] == [("provisioning.services", None)]
    assert node.hostname in warnings[0].getMessage() and REFUSED in warnings[0].getMessage()


def test_a_refused_inspection_fails_with_one_warning_and_no_error(sushy_emulator_auth, caplog):
    caplog.set_level(logging.INFO)
    node = with_wrong_password(sushy_emulator_auth, state="enrolled")
    op = inventory.start_action(node, "inspect", actor="tech")

    assert tasks.inspect_node.apply(args=[op.pk]).get() == "failed"

    node.refresh_from_db()
    op.refresh_from_db()
    assert node.state == "failed" and REFUSED in node.bmc_message
    assert op.status == "failed" and REFUSED in op.error
    assert logged(caplog, logging.ERROR) == []
    warnings = logged(caplog, logging.WARNING)
    assert [(r.name, r.exc_info) for r in warnings] == [("provisioning.runner", None)]
    assert REFUSED in warnings[0].getMessage()


def test_sushys_narration_is_kept_for_debugging_and_our_errors_stay_errors(caplog):
    """sushy's lines about a request are DEBUG: there when asked for (LOG_LEVEL=DEBUG),
    gone at INFO. Corral's own ERROR lines (a bug's traceback) are left as they are."""
    from provisioning.drivers.redfish import client  # noqa: F401  (quiets sushy)

    caplog.set_level(logging.DEBUG)
    logging.getLogger("sushy.connector").error("Authentication to the session service failed.")
    logging.getLogger("provisioning.runner").error("operation 1 failed")
    assert [(r.name, r.levelname) for r in caplog.records] == [
        ("sushy.connector", "DEBUG"),
        ("provisioning.runner", "ERROR"),
    ]

    caplog.clear()
    caplog.set_level(logging.INFO)
    logging.getLogger("sushy.connector").error("Authentication to the session service failed.")
    assert caplog.records == []
