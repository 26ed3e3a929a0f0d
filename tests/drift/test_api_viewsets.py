"""The drift viewsets x every role through the shared base (see tests/api/base.py)."""

from tests.api import specs
from tests.api.base import ViewSetTests


class TestBaselines(ViewSetTests):
    spec = specs.BASELINES


class TestDriftEvents(ViewSetTests):
    spec = specs.DRIFT_EVENTS
