"""Settings for the BMC driver tests (the peers are registered in tests/conftest.py)."""

from __future__ import annotations

import pytest

from provisioning.drivers import BMCSettings


@pytest.fixture
def redfish_settings():
    """Build Redfish settings for a peer; short timeout keeps fault tests fast."""

    def make(peer, system_id=None, username="admin", password="any-password", timeout=3.0):
        return BMCSettings(
            protocol="redfish",
            address=peer.address,
            username=username,
            password=password,
            system_id=system_id,
            timeout=timeout,
        )

    return make
