"""What a command runs with: its streams, its environment, and a client of the configured
Corral (made when first asked for, so `corral completion` needs no configuration)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TextIO

from . import config
from .client import Client
from .output import emit


@dataclass
class Context:
    stdin: TextIO
    stdout: TextIO
    stderr: TextIO
    environ: Mapping[str, str]
    _client: Client | None = field(default=None, repr=False)

    def client(self) -> Client:
        if self._client is None:
            found = config.load(self.environ)
            self._client = Client(found.url, found.token)
        return self._client

    def out(self, text: str) -> None:
        """A result: stdout."""
        emit(self.stdout, text)

    def note(self, text: str) -> None:
        """Progress, prompts and errors: stderr, so stdout stays the result."""
        emit(self.stderr, text)

    def interactive(self) -> bool:
        isatty = getattr(self.stdin, "isatty", None)
        return bool(isatty and isatty())

    def confirm(self, question: str) -> bool:
        """Ask on stderr, read one line: only y or yes (any case) is a yes."""
        self.stderr.write(f"{question} [y/N] ")
        self.stderr.flush()
        answer = self.stdin.readline()
        return answer.strip().lower() in ("y", "yes")
