"""Tolerant reads of optional Redfish resources, with what could not be read written down.

Vendor trees are full of dangling links: a collection lists a member that answers 404, a
500, or an error body instead of the resource. One such member must cost that member
only, never the whole inspection, and never silently: each one is recorded (part -> the
URL and what it answered) so the node's facts show an incomplete inventory as incomplete.

A BMC that cannot be reached, times out, or rejects the credentials is a different thing:
those errors are not caught here and end the whole read, so the caller's retry and
error policy applies.

Bad input is bounded here and in client.py (docs/inspection.md, "Bad input"): a document
is fetched at most once per walk (links that loop, a collection listing itself, a chassis
Contains its parent, cost nothing more), and one walk makes at most MAX_WALK_REQUESTS GETs
in at most MAX_WALK_SECONDS; after that every part still to be read is noted unavailable
("walk stopped after ...") instead of read.
"""

from __future__ import annotations

import time
from typing import Any

from sushy import exceptions as sushy_exc

from provisioning.drivers.base import BMCResponseError
from provisioning.drivers.redfish.client import RedfishClient

MAX_MEMBERS = 512  # a collection longer than this is a broken BMC, not a bigger server
MAX_WALK_REQUESTS = 2000
"""GETs one walk (an inventory read, a firmware read) may make. The biggest real tree in
tests/corpus/redfish (an NVIDIA DGX H100: 742 documents in all) takes a few hundred GETs
to inspect; a tree that needs more is one whose links fan out without end (a hostile or
broken BMC: 64 chassis x 512 devices x 512 functions is millions of GETs)."""
MAX_WALK_SECONDS = 300.0
"""Wall time one walk may take (5 min). A healthy BMC answers a GET in well under a second,
so the biggest real tree reads in tens of seconds even on a slow BMC; one that answers
each GET just inside the timeout must not hold a worker for hours."""


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
    """GETs through one client; failures of single resources land in ``unavailable``.

    Each document is fetched once per Reader (what it answered, or that it failed, is
    kept), and the Reader's GETs are bounded by MAX_WALK_REQUESTS and MAX_WALK_SECONDS.
    """

    def __init__(self, client: RedfishClient) -> None:
        self.client = client
        self.unavailable: dict[str, str] = {}
        self._docs: dict[str, dict[str, Any]] = {}  # fetched once, answered from here after
        self._failed: set[str] = set()  # asked once, noted once
        self._stopped: set[str] = set()  # parts noted as not read for the walk's budget
        self._started = time.monotonic()
        self._first_get = client.gets
        self.max_requests = MAX_WALK_REQUESTS
        self.max_seconds = MAX_WALK_SECONDS

    def note(self, part: str, why: str) -> None:
        previous = self.unavailable.get(part)
        self.unavailable[part] = f"{previous}; {why}" if previous else why

    def get(self, path: str, part: str) -> dict[str, Any] | None:
        """The resource at path, or None (and a note under part) when it cannot be read."""
        return self._fetch(path, part, missing_ok=False)

    def _fetch(self, path: str, part: str, missing_ok: bool) -> dict[str, Any] | None:
        key = path.split("#", 1)[0].rstrip("/")
        if key in self._docs:
            return self._docs[key]
        if key in self._failed or self._over_budget(path, part):
            return None
        data = self._get(path, part, missing_ok)
        if data is None:
            self._failed.add(key)
        else:
            self._docs[key] = data
        return data

    def _over_budget(self, path: str, part: str) -> bool:
        """Whether the walk is spent; the first part denied a GET by it is noted so."""
        made = self.client.gets - self._first_get
        took = time.monotonic() - self._started
        if made < self.max_requests and took < self.max_seconds:
            return False
        if part not in self._stopped:
            self._stopped.add(part)
            self.note(
                part,
                f"walk stopped after {made} requests / {took:.0f} s (at most "
                f"{self.max_requests} requests and {self.max_seconds:g} s per inspection); "
                f"{path} and the rest of {part} not read",
            )
        return True

    def _get(self, path: str, part: str, missing_ok: bool) -> dict[str, Any] | None:
        at = f"BMC at {self.client.address}"
        try:
            data = self.client.get_json(path)
        except sushy_exc.ResourceNotFoundError:
            if missing_ok:
                return None
            self.note(part, f"{at} answered HTTP 404 for {path}")
            return None
        except sushy_exc.AccessError as exc:
            if exc.status_code == 401:
                raise  # the credentials, not this resource: the whole read fails
            self.note(part, f"{at} refused {path} (HTTP {exc.status_code})")
            return None
        except sushy_exc.HTTPError as exc:
            self.note(part, f"{at} answered HTTP {exc.status_code} for {path}")
            return None
        except BMCResponseError as exc:  # too large, not UTF-8, not an object: says why
            self.note(part, str(exc))
            return None
        except ValueError as exc:  # not JSON
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

    def _expanded(self, collection: str, part: str) -> dict[str, Any] | None:
        """The collection read with its members in one GET ($expand=.($levels=1)) where the
        BMC says it can: each member's document is kept as if fetched on its own, so a
        collection of 30 costs one GET, not 31. None (read it the plain way) where the BMC
        cannot, or its expanded answer fails: expansion is an optimisation, never a new way
        to lose an inventory."""
        key = collection.split("#", 1)[0].rstrip("/")
        if key in self._docs or key in self._failed or not self.client.expands:
            return None
        if self._over_budget(collection, part):
            return None
        try:
            data = self.client.get_json(f"{key}?$expand=.($levels=1)")
        except (sushy_exc.SushyError, BMCResponseError, ValueError):
            return None
        raw = data.get("Members")
        if not isinstance(raw, list):
            return None
        for member in raw:
            path = member.get("@odata.id") if isinstance(member, dict) else None
            # A member with its Id or Name is its document (both are required of every
            # resource); a bare link is read on its own later.
            expanded = isinstance(member, dict) and ("Id" in member or "Name" in member)
            if path and expanded and not isinstance(member.get("error"), dict):
                self._docs.setdefault(path.split("#", 1)[0].rstrip("/"), member)
        self._docs[key] = data
        return data

    def members(self, collection: str | None, part: str) -> list[dict[str, Any]]:
        """The readable members of an optional collection.

        A collection that answers 404 is one the BMC does not have (nothing to note);
        any other failure of the collection, or of a member, is noted under part.
        """
        if not collection:
            return []
        data = self._expanded(collection, part)
        if data is None:
            data = self._fetch(collection, part, missing_ok=True)
        if data is None:
            return []
        raw = data.get("Members")
        if not isinstance(raw, list):
            if "Members" in data:
                self.note(
                    part, f"BMC at {self.client.address} answered {collection} without members"
                )
            return []
        paths = links({"Members": raw}, "Members")[:MAX_MEMBERS]
        found = [(p, self.get(p, part)) for p in paths]
        return [
            dict(d, **{"@odata.id": d.get("@odata.id") or p}) for p, d in found if d is not None
        ]
