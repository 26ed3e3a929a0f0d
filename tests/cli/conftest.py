"""Running the `corral` CLI in-process (corral_cli.main.main), with its own streams and
environment, against a real Corral (the `corral_web` fixture: the production web server on
the test database)."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import pytest

from corral_cli.main import main


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err


class Terminal(io.StringIO):
    """A stdin that says it is a terminal; `before_answer` runs when the CLI reads the
    answer (what a person does while the prompt waits)."""

    def __init__(self, answer: str, before_answer=None) -> None:
        super().__init__(answer)
        self.before_answer = before_answer

    def isatty(self) -> bool:
        return True

    def readline(self, *args) -> str:
        if self.before_answer is not None:
            self.before_answer()
        return super().readline(*args)


class CLI:
    """cli("nodes", "list") -> Result; `env` is the CLI's whole environment."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env

    def __call__(self, *argv: str, stdin: io.StringIO | None = None, **env: str) -> Result:
        out, err = io.StringIO(), io.StringIO()
        code = main(
            list(argv),
            stdin=stdin if stdin is not None else io.StringIO(""),
            stdout=out,
            stderr=err,
            environ={**self.env, **env},
        )
        return Result(code, out.getvalue(), err.getvalue())


@pytest.fixture
def config_home(tmp_path) -> Path:
    return tmp_path / "xdg"


@pytest.fixture
def cli(config_home) -> CLI:
    """The CLI with no Corral configured (an empty XDG_CONFIG_HOME)."""
    return CLI({"XDG_CONFIG_HOME": str(config_home), "HOME": str(config_home.parent)})


@pytest.fixture
def corral(cli, corral_web, users) -> CLI:
    """The CLI pointed at the running server with an admin's token (CORRAL_URL and
    CORRAL_TOKEN, as a CI job sets them)."""
    from tests.conftest import token_for

    return CLI({**cli.env, "CORRAL_URL": corral_web, "CORRAL_TOKEN": token_for(users["admin"])})
