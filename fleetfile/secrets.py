"""Secrets in a fleet file are references (`env:NAME`, `file:/path`), resolved where apply
runs and never written anywhere by Corral.

Where they are read depends on who runs the plan:
- `manage.py fleet` and the `corral` CLI read them on the machine they run on: the
  operator's environment and files (`Local`);
- the API never reads its own environment or files for a client: the server's environment
  holds the database's and the signing key's secrets, and a reference a caller controls
  must not carry one of those to a BMC address the same caller chose. A client sends each
  reference's value beside the files (`Given`), as the CLI does.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

MAX_SECRET_BYTES = 4096


class Unresolved(Exception):
    """A reference that has no value here; its message says which and why."""


class Secrets:
    def resolve(self, reference: str) -> str:
        raise NotImplementedError


class Local(Secrets):
    """This machine's environment and files."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self.environ = os.environ if environ is None else environ

    def resolve(self, reference: str) -> str:
        scheme, _, name = reference.partition(":")
        if scheme == "env":
            value = self.environ.get(name)
            if not value:
                raise Unresolved(f"{reference}: the variable {name} is not set (or is empty)")
            return value
        if scheme == "file":
            path = Path(name)
            try:
                if path.stat().st_size > MAX_SECRET_BYTES:
                    raise Unresolved(f"{reference}: larger than {MAX_SECRET_BYTES} bytes")
                value = path.read_text(encoding="utf-8").rstrip("\r\n")
            except (OSError, UnicodeDecodeError) as exc:
                raise Unresolved(f"{reference}: cannot be read ({exc.__class__.__name__})")
            if not value:
                raise Unresolved(f"{reference}: the file is empty")
            return value
        raise Unresolved(f"{reference}: not env:NAME or file:/path")


class Given(Secrets):
    """The values a client sent with its files, by reference."""

    def __init__(self, values: Mapping[str, str]) -> None:
        self.values = dict(values)

    def resolve(self, reference: str) -> str:
        value = self.values.get(reference)
        if not value:
            raise Unresolved(f"{reference}: no value was sent for it (`secrets` of the request)")
        return value


def references(sources_data: list) -> set[str]:
    """Every secret reference the files name (what a client must send values for)."""
    found: set[str] = set()
    for data in sources_data:
        for node in data.get("nodes") or []:
            password = (node.get("bmc") or {}).get("password")
            if password:
                found.add(password)
    return found
