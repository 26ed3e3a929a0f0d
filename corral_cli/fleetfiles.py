"""The fleet files as the client reads them (docs/fleet-as-code.md): the files and folders
given, every secret reference they name, and each reference's value read HERE, on the
operator's machine, as `manage.py fleet` reads them on the server's. The server never
reads its own environment or files for a client: it gets the values in `secrets`.

A value read here is sent in the request body and nowhere else: never printed, never in a
message (a message names the reference and why it has no value)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path

import yaml

from .errors import CorralError

SUFFIXES = (".yaml", ".yml", ".json")
SCHEMES = ("env:", "file:")
MAX_SECRET_BYTES = 4096  # as the server's fleetfile.secrets
Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's when built with it


def files_under(paths: Iterable[str]) -> list[Path]:
    """Files as named; a folder's .yaml, .yml and .json files (any depth), sorted by path,
    as the server's `manage.py fleet` reads a folder. A file given twice is read once."""
    found: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            under = sorted(p for p in path.rglob("*") if p.suffix in SUFFIXES and p.is_file())
            if not under:
                raise CorralError(f"{given}: no .yaml, .yml or .json file under it")
            found += under
        elif path.is_file():
            found.append(path)
        else:
            raise CorralError(f"{given}: no such file or folder")
    seen: set[Path] = set()
    unique = []
    for path in found:
        key = path.resolve()
        if key not in seen:
            seen.add(key)
            unique.append(path)
    return unique


def read_files(paths: Iterable[str]) -> list[dict[str, str]]:
    """`[{"name", "content"}]` for the API, each named by its path as given (`fleet/`
    gives `fleet/nodes/dc1.yaml`): the server's problems name files by these names."""
    files = []
    for path in files_under(paths):
        try:
            content = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise CorralError(f"{path}: not UTF-8 text") from None
        except OSError as exc:
            raise CorralError(f"{path}: cannot be read ({exc.strerror or exc})") from None
        files.append({"name": str(path), "content": content})
    return files


def parse(name: str, content: str) -> object:
    """A file's data, or None when it cannot be parsed (the server names that problem, at
    its line)."""
    try:
        if name.endswith(".json"):
            return json.loads(content)
        return yaml.load(content, Loader=Loader)  # noqa: S506 (a safe loader)
    except (ValueError, yaml.YAMLError):
        return None


def references(files: Iterable[Mapping[str, str]]) -> dict[str, list[str]]:
    """Every secret reference the files name (a node's `bmc.password`: `env:NAME` or
    `file:/path`) -> the files naming it. A password that is no reference is not one: the
    server refuses it as a literal, without repeating it."""
    found: dict[str, list[str]] = {}
    for file in files:
        name, content = file["name"], file["content"]
        if "env:" not in content and "file:" not in content:
            continue  # no reference in it: no need to parse it here
        data = parse(name, content)
        nodes = data.get("nodes") if isinstance(data, dict) else None
        for node in nodes if isinstance(nodes, list) else []:
            bmc = node.get("bmc") if isinstance(node, dict) else None
            password = bmc.get("password") if isinstance(bmc, dict) else None
            if isinstance(password, str) and password.startswith(SCHEMES):
                where = found.setdefault(password, [])
                if name not in where:
                    where.append(name)
    return found


class Unresolved(Exception):
    """A reference without a value here; the message says which and why, never a value."""


def resolve(reference: str, environ: Mapping[str, str]) -> str:
    """`env:NAME`: the variable's value; `file:/path`: the file's text, its last newline
    dropped (the server's `manage.py fleet` reads them the same way)."""
    scheme, _, name = reference.partition(":")
    if scheme == "env":
        value = environ.get(name)
        if not value:
            raise Unresolved(f"the variable {name} is not set (or is empty)")
        return value
    path = Path(name)
    try:
        if path.stat().st_size > MAX_SECRET_BYTES:
            raise Unresolved(f"larger than {MAX_SECRET_BYTES} bytes")
        value = path.read_text(encoding="utf-8").rstrip("\r\n")
    except FileNotFoundError:
        raise Unresolved(f"no such file {name}") from None
    except UnicodeDecodeError:
        raise Unresolved("not UTF-8 text") from None
    except OSError as exc:
        raise Unresolved(f"cannot be read ({exc.strerror or exc.__class__.__name__})") from None
    if not value:
        raise Unresolved("the file is empty")
    return value


def secrets_for(files: list[dict[str, str]], environ: Mapping[str, str]) -> dict[str, str]:
    """The value of every reference the files name; CorralError naming each one that has
    none (all of them at once), before anything is sent."""
    values: dict[str, str] = {}
    missing: list[str] = []
    for reference, named_in in sorted(references(files).items()):
        try:
            values[reference] = resolve(reference, environ)
        except Unresolved as exc:
            missing.append(f"  {reference} (in {', '.join(named_in)}): {exc}")
    if missing:
        count = len(missing)
        raise CorralError(
            f"{count} secret reference{'s' if count != 1 else ''} cannot be resolved on "
            "this machine; nothing was sent:\n" + "\n".join(missing)
        )
    return values
