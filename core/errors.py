"""One base for the refusals of the domain (NetBox's AbortRequest, Ironic's exceptions with
a code): an illegal transition, a busy node, a case that needs a resolution, an image that
cannot change. Each carries its HTTP status and the body the API answers with, so the
API's handler (fleet.exceptions) maps them all in one line and names no app, and a page
shows `str(exc)` for any of them: adding a refusal touches only the app that raises it.
"""

from __future__ import annotations

from typing import Any


class DomainConflict(Exception):
    """A request the domain's rules refuse; nothing was written."""

    http_status = 409  # the state of things forbids it (400: the request itself lacks something)

    def payload(self) -> dict[str, Any]:
        """The API's answer: at least `detail`, the sentence a person reads."""
        return {"detail": str(self)}
