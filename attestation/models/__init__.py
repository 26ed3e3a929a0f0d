from .attestations import Attestation, AttestationStatus
from .identities import TPMIdentity
from .references import FirmwareReference

__all__ = ["Attestation", "AttestationStatus", "FirmwareReference", "TPMIdentity"]
