"""Where a BMC keeps its Systems collection.

The service root links it, except where it does not: a Lite-On power shelf
(tests/corpus/redfish/liteon-powershelf-pf-1333-7r) answers /redfish/v1/Systems and lists
it only in its OData service document. DMTF fixes that path, so it is asked when the root
is silent; a BMC that has no such collection still reads as one without systems.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from sushy import exceptions as sushy_exc

from provisioning.drivers.base import BMCResponseError

if TYPE_CHECKING:
    from provisioning.drivers.redfish.client import RedfishClient

STANDARD = "/redfish/v1/Systems"
# One answer per client (one inspection or firmware read): the collection was read up to
# four times per inspection, by the system lookup, the vendor profiles and firmware scope.
_PATHS: WeakKeyDictionary[RedfishClient, list[str]] = WeakKeyDictionary()


def systems_collection(client: RedfishClient) -> str | None:
    linked: Any = (client.root.json.get("Systems") or {}).get("@odata.id")
    if linked:
        return str(linked)
    try:
        data = client.get_json(STANDARD)
    except (sushy_exc.SushyError, BMCResponseError, ValueError):
        return None
    return STANDARD if isinstance(data.get("Members"), list) else None


def system_paths(client: RedfishClient) -> list[str]:
    """The member paths of the BMC's Systems collection (none if it has no collection)."""
    if client not in _PATHS:
        collection = systems_collection(client)
        _PATHS[client] = client.members(collection) if collection else []
    return _PATHS[client]
