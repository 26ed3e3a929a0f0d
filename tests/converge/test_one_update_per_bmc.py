"""Two nodes behind one BMC (a multi-node chassis): their firmware updates take turns."""

from __future__ import annotations

import pytest

from converge import firmware
from inventory import operations, services
from provisioning.drivers import BMCTransientError
from tests.converge.test_firmware_flow import artifact, node  # noqa: F401
from tests.factories import NodeFactory

pytestmark = pytest.mark.django_db


def running(target):
    op = services.start_action(target, "apply_firmware", actor="user:tech")
    assert operations.begin_operation(op, worker="celery@w pid 1")
    op.refresh_from_db()
    return op


def test_an_update_waits_while_another_runs_through_the_same_bmc(updating_bmc, node, settings):  # noqa: F811
    settings.CORRAL_CONVERGE_POLL_SECONDS = 0.05  # the test BMC's tasks end in two polls
    image = artifact(updating_bmc, "BMC", "1.52.00", "immediate")
    artifact(updating_bmc, "GPU*", "96.00.A6.00.01", "reset", installs="GPU0")
    sibling = NodeFactory(
        rack=node.rack, model="FX-1", state="ready", bmc__address=updating_bmc.address
    )
    first, second = running(node), running(sibling)
    operations.report_progress(first, 5, "updating BMC to 1.52.00")  # it holds the BMC

    with pytest.raises(BMCTransientError) as waiting:
        firmware.apply(sibling, second)
    assert f"({node}, operation #{first.pk}); this one waits for it" in str(waiting.value)
    assert updating_bmc.tasks == {}  # nothing was sent to the BMC

    operations.finish_operation(first, "succeeded")
    done = firmware.apply(sibling, second)
    assert done["updated"]["BMC"] == ["1.45.00", "1.52.00"]
    assert [b["ImageURI"] for p, b in updating_bmc.sent("POST") if "SimpleUpdate" in p][0] == image
