from tests.api.base import ViewSetTests
from tests.converge.specs import BASELINE_ARTIFACTS, FIRMWARE_ARTIFACTS


class TestFirmwareArtifacts(ViewSetTests):
    spec = FIRMWARE_ARTIFACTS


class TestBaselineArtifacts(ViewSetTests):
    spec = BASELINE_ARTIFACTS
