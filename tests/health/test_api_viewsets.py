"""The health viewsets x every role through the shared base (see tests/api/base.py)."""

from tests.api import specs
from tests.api.base import ViewSetTests


class TestHealthEvents(ViewSetTests):
    spec = specs.HEALTH_EVENTS


class TestHealthPolicies(ViewSetTests):
    spec = specs.HEALTH_POLICIES
