"""What a sign-in that logs nobody in returns (no model imported: the views use it)."""

from __future__ import annotations


class Refusal:
    """What the backend returns for a person the provider vouched for and Corral turns
    away: not None, so Django does not count a failed password against their address
    (django-axes), and not active, so the library's callback does not log them in."""

    is_active = False
    is_authenticated = False

    def __init__(self, reason: str, who: str) -> None:
        self.reason = reason  # "no_role"
        self.who = who
