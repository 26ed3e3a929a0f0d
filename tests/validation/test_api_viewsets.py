"""Every validation viewset × every role through the shared base (see tests/api/base.py)."""

from tests.api import specs
from tests.api.base import ViewSetTests


class TestGateProfiles(ViewSetTests):
    spec = specs.GATE_PROFILES


class TestGateRuns(ViewSetTests):
    spec = specs.GATE_RUNS


class TestCheckResults(ViewSetTests):
    spec = specs.CHECK_RESULTS
