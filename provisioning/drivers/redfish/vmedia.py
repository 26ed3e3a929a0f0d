"""Redfish virtual media: the BMC fetches a boot image from a URL and serves it to the
machine as a CD (DSP0266 `VirtualMedia.InsertMedia` / `EjectMedia`), then the machine
boots from it once (`BootSourceOverrideTarget: Cd`). Where a site has no DHCP/PXE, this
is how a machine boots what Corral built for it (docs/boot-modes.md).

The CD is found on the ComputerSystem's `VirtualMedia` (ComputerSystem v1.13 and later)
or else on its Manager's (the older place, Dell iDRAC and HPE iLO 5 among them): the
member whose `MediaTypes` holds CD or DVD. A BMC that lists none is said to offer no
virtual media; one that refuses the insert (it could not fetch the URL, say) fails with
its own message.
"""

from __future__ import annotations

from typing import Any

import sushy

from provisioning.drivers.base import BMCUnsupportedError, VirtualMediaInterface
from provisioning.drivers.redfish.client import RedfishClient

CD_TYPES = {sushy.VirtualMediaType.CD, sushy.VirtualMediaType.DVD}


class RedfishVirtualMedia(VirtualMediaInterface):
    def __init__(self, client: RedfishClient) -> None:
        self.client = client

    def _cd(self) -> Any:
        """The sushy VirtualMedia resource of the machine's CD."""
        system = self.client.system()
        if system.json.get("VirtualMedia"):
            places = [system.virtual_media]
        else:  # the older place: read the managers only where the system names none
            places = [m.virtual_media for m in system.managers if m.json.get("VirtualMedia")]
        for place in places:
            for member in place.get_members():
                if CD_TYPES & set(member.media_types):
                    return member
        raise BMCUnsupportedError(
            f"BMC at {self.client.address} offers no virtual CD (no VirtualMedia member "
            "of MediaTypes CD or DVD on its system or manager)",
            address=self.client.address,
        )

    def insert(self, url: str) -> None:
        with self.client.translate("finding its virtual CD"):
            cd = self._cd()
        with self.client.translate("inserting the boot image as its virtual CD"):
            if cd.inserted:  # a stale image from an earlier boot: replaced, not stacked
                cd.eject_media()
            cd.insert_media(url, inserted=True, write_protected=True)
        with self.client.translate("setting the boot device to its virtual CD once"):
            self.client.system().set_system_boot_options(
                sushy.BootSource.CD, enabled=sushy.BootSourceOverrideEnabled.ONCE
            )

    def eject(self) -> None:
        with self.client.translate("finding its virtual CD"):
            cd = self._cd()
        if not cd.inserted:
            return
        with self.client.translate("ejecting its virtual CD"):
            cd.eject_media()

    def inserted(self) -> str:
        with self.client.translate("reading its virtual CD"):
            cd = self._cd()
        return str(cd.image or "") if cd.inserted else ""
