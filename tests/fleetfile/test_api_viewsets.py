from tests.api.base import ViewSetTests
from tests.fleetfile.specs import FLEET_APPLIES


class TestFleetApplies(ViewSetTests):
    spec = FLEET_APPLIES
