"""AMI MegaRAC (Gigabyte and other boards that run AMI's BMC firmware)."""

from __future__ import annotations

from provisioning.drivers.redfish.vendors.base import Profile, Signals


class AmiMegaRac(Profile):
    """Nothing to override yet: its quirks are placeholders, which rules.py reads as
    unknown for every vendor. The profile names them and the trees that prove them, and
    is where an AMI-only quirk goes when one turns up."""

    name = "AMI MegaRAC"
    handles = (
        (
            "made-up serials (`01234567890123456789AB`) and `To be filled by O.E.M.`, read as "
            "unknown by rules.serial and rules.text",
            ("gigabyte-h262-z63", "gigabyte-h262-z63-cray"),
        ),
    )

    def matches(self, signals: Signals) -> bool:
        """When the service root names AMI (Vendor or an Oem key; a DGX H100's does too)."""
        return signals.vendor == "ami" or "ami" in signals.oem
