"""What the ASGI entry point and the apps it hands a connection to (the console socket)
read from an ASGI scope."""

from __future__ import annotations


def header(scope: dict, name: bytes) -> str:
    """The request header `name` (lower case, bytes), or ""."""
    for key, value in scope["headers"]:
        if key == name:
            return value.decode("latin-1")
    return ""
