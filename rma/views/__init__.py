"""RMA pages: the queue (queue.py) and a case with its writes (case.py). Permission is
checked in the views, never only in templates."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied

from inventory.permissions import can


def require(request, capability: str) -> None:
    if not can(request.user, capability):
        raise PermissionDenied(f"Your role does not allow '{capability}'.")
