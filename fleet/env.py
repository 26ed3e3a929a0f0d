"""The one reader of the environment: every settings module asks it, by type.

Why not read os.environ (or django-environ's `Env`) in each module: a value that is not
of its type must stop start-up naming the variable and what it wants, with every other
such mistake in the same message ("CORRAL_SSH_PORT is 'twenty-two': it must be a whole
number"). django-environ answers `int('twenty-two')` with a bare ValueError naming neither,
and reads `DEBUG=maybe` as false without a word. So a bad value is recorded here, the
default stands in until the end of the settings module, and `settings_checks.refuse_bad`
refuses the start-up listing them all. Every variable read is recorded too, with its
type, so the docs test can check each one is documented.

django-environ stays for what it does well: reading the `.env` file and DATABASE_URL.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias, TypeVar

T = TypeVar("T")

TRUE = frozenset({"1", "true", "yes", "on"})
FALSE = frozenset({"0", "false", "no", "off", ""})


def _bool(raw: str) -> bool:
    word = raw.strip().lower()
    if word in TRUE:
        return True
    if word in FALSE:
        return False
    raise ValueError("true or false (also 1/0, yes/no, on/off)")


def _int(raw: str) -> int:
    try:
        return int(raw.strip())
    except ValueError:
        raise ValueError("a whole number") from None


def _float(raw: str) -> float:
    try:
        return float(raw.strip())
    except ValueError:
        raise ValueError("a number") from None


def _list(raw: str) -> list[str]:
    return [item.strip() for item in raw.split(",") if item.strip()]


def _numbers(raw: str) -> list[float]:
    try:
        return [float(item) for item in _list(raw)]
    except ValueError:
        raise ValueError("numbers separated by commas") from None


def _numbers_by_key(raw: str) -> dict[str, float]:
    out = {}
    for item in _list(raw):
        key, sep, value = item.partition("=")
        try:
            if not (sep and key.strip()):
                raise ValueError
            out[key.strip()] = float(value)
        except ValueError:
            raise ValueError("KEY=number pairs separated by commas") from None
    return out


# The class's methods are named for the types they read (env.str, env.int, as django-environ
# named them); inside it these names mean the types.
Text: TypeAlias = str
Flag: TypeAlias = bool
Whole: TypeAlias = int
Number: TypeAlias = float
List: TypeAlias = list


class Env:
    """Typed reads of one environment (os.environ unless given), remembering each
    variable read and each value that was not of its type."""

    def __init__(self, environ: Mapping[Text, Text] | None = None) -> None:
        self.environ = os.environ if environ is None else environ
        self.read: dict[Text, Text] = {}  # name -> type, in the order first read
        self.problems: dict[Text, Text] = {}  # name -> what is wrong, in words

    def _get(self, name: Text, kind: Text, parse: Callable[[Text], T], default: T) -> T:
        self.read.setdefault(name, kind)
        raw = self.environ.get(name)
        if raw is None:
            return default
        try:
            return parse(raw)
        except ValueError as exc:
            self.problems[name] = f"{name} is {raw!r}: it must be {exc}"
            return default

    def str(self, name: Text, default: Text = "") -> Text:
        return self._get(name, "text", Text, default)

    def bool(self, name: Text, default: Flag) -> Flag:
        return self._get(name, "true/false", _bool, default)

    def int(self, name: Text, default: Whole) -> Whole:
        return self._get(name, "whole number", _int, default)

    def float(self, name: Text, default: Number) -> Number:
        return self._get(name, "number", _float, default)

    def list(self, name: Text, default: List[Any]) -> List[Any]:
        return self._get(name, "comma-separated list", _list, default)

    def numbers(self, name: Text, default: List[Number]) -> List[Number]:
        return self._get(name, "comma-separated numbers", _numbers, default)

    def numbers_by_key(self, name: Text, default: dict[Text, Number]) -> dict[Text, Number]:
        return self._get(name, "KEY=number,…", _numbers_by_key, default)


# The process's reader: the settings modules import it, refuse_bad reads its problems.
env = Env()
