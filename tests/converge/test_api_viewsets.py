from tests.api import specs
from tests.api.base import ViewSetTests


class TestFirmwareArtifacts(ViewSetTests):
    spec = specs.FIRMWARE_ARTIFACTS


class TestBaselineArtifacts(ViewSetTests):
    spec = specs.BASELINE_ARTIFACTS
