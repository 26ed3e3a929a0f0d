"""Where a BMC keeps its Systems collection.

The service root links it, except where it does not: a Lite-On power shelf
(tests/corpus/redfish/liteon-powershelf-pf-1333-7r) answers /redfish/v1/Systems and lists
it only in its OData service document. DMTF fixes that path, so it is asked when the root
is silent; a BMC that has no such collection still reads as one without systems.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sushy import exceptions as sushy_exc

from provisioning.drivers.base import BMCResponseError

if TYPE_CHECKING:
    from provisioning.drivers.redfish.client import RedfishClient

STANDARD = "/redfish/v1/Systems"


def systems_collection(client: RedfishClient) -> str | None:
    linked: Any = (client.root.json.get("Systems") or {}).get("@odata.id")
    if linked:
        return str(linked)
    try:
        data = client.get_json(STANDARD)
    except (sushy_exc.SushyError, BMCResponseError, ValueError):
        return None
    return STANDARD if isinstance(data.get("Members"), list) else None
