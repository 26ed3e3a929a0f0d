from tests.peers.ipmi import ipmi_bmc, ipmi_sim, ipmi_sim_factory  # noqa: F401
from tests.peers.redfish import (  # noqa: F401
    sushy_emulator,
    sushy_emulator_factory,
    sushy_static,
)
