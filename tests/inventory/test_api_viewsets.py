"""Every inventory viewset × every role through the shared base (see tests/api/base.py)."""

from tests.api import specs
from tests.api.base import ViewSetTests


class TestSites(ViewSetTests):
    spec = specs.SITES


class TestRacks(ViewSetTests):
    spec = specs.RACKS


class TestNodes(ViewSetTests):
    spec = specs.NODES


class TestInterfaces(ViewSetTests):
    spec = specs.INTERFACES


class TestEvents(ViewSetTests):
    spec = specs.EVENTS


class TestOperations(ViewSetTests):
    spec = specs.OPERATIONS


class TestRMACases(ViewSetTests):
    spec = specs.RMA_CASES
