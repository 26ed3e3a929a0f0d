"""Mutated fixtures must either parse or raise ParseError: never another exception."""

import contextlib
import random

import pytest

from validation.parsers import ParseError, parse

from .helpers import FIXTURES
from .test_registry_cli import VALID

NOISE = "|+-#:,.{}[]\"'\t \n0123456789abcXYZ/N/A\x7f"


def _mutations(text: str, rng: random.Random):
    for _ in range(60):
        kind = rng.randrange(5)
        pos = rng.randrange(len(text))
        if kind == 0:
            yield text[:pos]
        elif kind == 1:
            yield text[:pos] + rng.choice(NOISE) + text[pos + 1 :]
        elif kind == 2:
            yield text[:pos] + text[pos + rng.randrange(1, 40) :]
        elif kind == 3:
            lines = text.splitlines(keepends=True)
            i = rng.randrange(len(lines))
            yield "".join(lines[:i] + lines[i + 1 :])
        else:
            chunk = "".join(rng.choice(NOISE) for _ in range(rng.randrange(1, 30)))
            yield text[:pos] + chunk + text[pos:]


@pytest.mark.parametrize("tool,name", VALID)
def test_mutations_never_crash(tool, name):
    text = (FIXTURES / name).read_text()
    rng = random.Random(f"{tool}:{name}")
    for mutated in _mutations(text, rng):
        with contextlib.suppress(ParseError):
            parse(tool, mutated)
