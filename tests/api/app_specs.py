"""The viewsets specified in their apps' test folders (tests/api/specs.py is full)."""

from tests.attestation.specs import ATTESTATIONS, FIRMWARE_REFERENCES
from tests.converge.specs import BASELINE_ARTIFACTS, FIRMWARE_ARTIFACTS
from tests.fleetfile.specs import FLEET_APPLIES

APP_SPECS = (
    ATTESTATIONS,
    FIRMWARE_REFERENCES,
    FIRMWARE_ARTIFACTS,
    BASELINE_ARTIFACTS,
    FLEET_APPLIES,
)
