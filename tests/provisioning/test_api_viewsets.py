"""Every provisioning viewset × every role through the shared base (see tests/api/base.py)."""

from tests.api import specs
from tests.api.base import ViewSetTests


class TestImages(ViewSetTests):
    spec = specs.IMAGES


class TestDeployments(ViewSetTests):
    spec = specs.DEPLOYMENTS


class TestBootRequests(ViewSetTests):
    spec = specs.BOOT_REQUESTS


class TestSubnets(ViewSetTests):
    spec = specs.SUBNETS
