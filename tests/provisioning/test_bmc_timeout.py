"""How long Corral waits for one BMC answer is the deployment's to set
(CORRAL_BMC_TIMEOUT_SECONDS): a site of slow BMCs raises it, a lab lowers it."""

from __future__ import annotations

import pytest

from inventory.models import BMC, Node
from provisioning import services
from provisioning.drivers import BMCTransientError, get_driver
from tests.factories import NodeFactory
from tests.peers.http_answers import TCPListener

pytestmark = pytest.mark.django_db


def test_a_bmc_that_accepts_but_never_answers_is_given_up_on_after_the_set_timeout(settings):
    settings.CORRAL_BMC_TIMEOUT_SECONDS = 0.5
    silent = TCPListener()
    try:
        node = NodeFactory(rack=None)
        BMC.objects.filter(node=node).update(
            address=f"http://127.0.0.1:{silent.port}", verify_tls=False
        )
        node = Node.objects.select_related("bmc").get(pk=node.pk)
        found = services.bmc_settings(node)
        assert found.timeout == 0.5
        with get_driver(found) as driver, pytest.raises(BMCTransientError) as raised:
            driver.inspect.inspect()
    finally:
        silent.stop()
    assert str(raised.value).startswith(
        f"Could not reach the BMC at 127.0.0.1:{silent.port} while connecting: no Redfish answer"
    )
