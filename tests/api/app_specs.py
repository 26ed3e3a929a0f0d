"""The viewsets specified in their apps' test folders (tests/api/specs.py is full)."""

from tests.attestation.specs import ATTESTATIONS, FIRMWARE_REFERENCES
from tests.converge.specs import BASELINE_ARTIFACTS, FIRMWARE_ARTIFACTS
from tests.fleetfile.specs import FLEET_APPLIES
from tests.trays.specs import RACK_LAYOUTS, RACK_TEMPLATES

APP_SPECS = (
    ATTESTATIONS,
    FIRMWARE_REFERENCES,
    FIRMWARE_ARTIFACTS,
    BASELINE_ARTIFACTS,
    FLEET_APPLIES,
    RACK_TEMPLATES,
    RACK_LAYOUTS,
)
