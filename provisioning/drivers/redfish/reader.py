"""Tolerant reads of optional Redfish resources, with what could not be read written down.

Vendor trees are full of dangling links: a collection lists a member that answers 404, a
500, or an error body instead of the resource. One such member must cost that member
only, never the whole inspection, and never silently: each one is recorded (part -> the
URL and what it answered) so the node's facts show an incomplete inventory as incomplete.

A BMC that cannot be reached, times out, or rejects the credentials is a different thing:
those errors are not caught here and end the whole read, so the caller's retry and
error policy applies.
"""

from __future__ import annotations

from typing import Any

from sushy import exceptions as sushy_exc

from provisioning.drivers.base import BMCResponseError
from provisioning.drivers.redfish.client import RedfishClient

MAX_MEMBERS = 512  # a collection longer than this is a broken BMC, not a bigger server


def link(data: dict[str, Any] | None, name: str) -> str | None:
    """The @odata.id of a single navigation property, or None."""
    value = (data or {}).get(name)
    return value.get("@odata.id") if isinstance(value, dict) else None


def links(data: dict[str, Any] | None, name: str) -> list[str]:
    """The @odata.ids of a navigation property that may be a list or a single link."""
    value = (data or {}).get(name)
    items = value if isinstance(value, list) else [value]
    return [i["@odata.id"] for i in items if isinstance(i, dict) and i.get("@odata.id")]


def same_or_under(path: str, prefix: str) -> bool:
    """Whether path is prefix or a resource below it (segment-wise: Blade1 is not Blade10)."""
    path, prefix = path.rstrip("/"), prefix.rstrip("/")
    return path == prefix or path.startswith(prefix + "/")


def last_segment(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


class Reader:
    """GETs through one client; failures of single resources land in ``unavailable``."""

    def __init__(self, client: RedfishClient) -> None:
        self.client = client
        self.unavailable: dict[str, str] = {}
        self._failed: set[str] = set()  # asked once, noted once

    def note(self, part: str, why: str) -> None:
        previous = self.unavailable.get(part)
        self.unavailable[part] = f"{previous}; {why}" if previous else why

    def get(self, path: str, part: str) -> dict[str, Any] | None:
        """The resource at path, or None (and a note under part) when it cannot be read."""
        if path in self._failed:
            return None
        data = self._get(path, part)
        if data is None:
            self._failed.add(path)
        return data

    def _get(self, path: str, part: str) -> dict[str, Any] | None:
        at = f"BMC at {self.client.address}"
        try:
            data = self.client.get_json(path)
        except sushy_exc.AccessError as exc:
            if exc.status_code == 401:
                raise  # the credentials, not this resource: the whole read fails
            self.note(part, f"{at} refused {path} (HTTP {exc.status_code})")
            return None
        except sushy_exc.HTTPError as exc:
            self.note(part, f"{at} answered HTTP {exc.status_code} for {path}")
            return None
        except (ValueError, BMCResponseError) as exc:  # not JSON, or not an object
            self.note(part, f"{at} answered {path} with something that is not a resource: {exc}")
            return None
        error = data.get("error")
        if isinstance(error, dict) and "@odata.id" not in data:
            message = error.get("message") or error.get("code") or "no message"
            self.note(
                part, f"{at} answered {path} with an error instead of the resource: {message}"
            )
            return None
        return data

    def members(self, collection: str | None, part: str) -> list[dict[str, Any]]:
        """The readable members of an optional collection.

        A collection that answers 404 is one the BMC does not have (nothing to note);
        any other failure of the collection, or of a member, is noted under part.
        """
        if not collection:
            return []
        try:
            data = self.client.get_json(collection)
        except sushy_exc.ResourceNotFoundError:
            return []
        except sushy_exc.AccessError as exc:
            if exc.status_code == 401:
                raise
            self.note(part, f"BMC at {self.client.address} refused {collection} (HTTP 403)")
            return []
        except sushy_exc.HTTPError as exc:
            self.note(
                part,
                f"BMC at {self.client.address} answered HTTP {exc.status_code} for {collection}",
            )
            return []
        except (ValueError, BMCResponseError) as exc:
            self.note(part, f"BMC at {self.client.address} answered {collection} with {exc}")
            return []
        raw = data.get("Members")
        if not isinstance(raw, list):
            if "Members" in data or "error" in data:
                self.note(
                    part, f"BMC at {self.client.address} answered {collection} without members"
                )
            return []
        paths = links({"Members": raw}, "Members")[:MAX_MEMBERS]
        found = [(p, self.get(p, part)) for p in paths]
        return [
            dict(d, **{"@odata.id": d.get("@odata.id") or p}) for p, d in found if d is not None
        ]
