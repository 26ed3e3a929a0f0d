"""Reading fleet files: YAML or JSON, one or many, each checked against the schema, every
problem named by file, line and path (`fleet/racks.yaml:42 racks[3].site: ...`).

A file is parsed once into its data and a map from each path in it to the line it starts
on, so a problem found later (a site named but not found, a serial given twice) can still
say where. YAML's own dates are read as the text they are (the schema and the models
parse them); a key given twice in one mapping is refused, as YAML 1.2 says and PyYAML
does not.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema_rs
import yaml
from django.core.exceptions import ValidationError

from core.errors import DomainConflict

from .schema import KINDS, SECRET_KEYS, schema

SUFFIXES = (".yaml", ".yml", ".json")
MAX_FILE_BYTES = 64 * 1024 * 1024
Path_ = tuple[str | int, ...]


@contextmanager
def bulk() -> Iterator[None]:
    """Python's cyclic garbage collector off while a site's files are read and planned.

    A plan builds a few hundred thousand objects (YAML nodes, model instances, forms) that
    all live until it ends; each collection the allocations trigger walks all of them,
    which measured as half the time of a 12,500-node plan (devtools/bench_fleetfile.py).
    Nothing they make is a cycle to collect meanwhile; the collector is on again after,
    and nested or concurrent uses leave it as the outermost found it."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def render_path(path: Iterable[str | int]) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


@dataclass(frozen=True)
class Problem:
    """One thing to fix, where it is."""

    file: str
    line: int | None
    path: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        what = " ".join(part for part in (where, self.path) if part)
        return f"{what}: {self.message}" if what else self.message

    def as_api(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "path": self.path, "message": self.message}


class FleetFileError(DomainConflict):
    """The files cannot be planned or applied: every problem, in file and line order (the
    API's 400, with each problem's file, line and path)."""

    http_status = 400

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = sorted(problems, key=lambda p: (p.file, p.line or 0, p.path))
        super().__init__("\n".join(str(p) for p in self.problems))

    def payload(self) -> dict[str, Any]:
        count = len(self.problems)
        return {
            "detail": f"The fleet files have {count} problem{'s' if count != 1 else ''}; "
            "nothing was written.",
            "problems": [p.as_api() for p in self.problems],
        }


@dataclass
class Source:
    """One parsed file: its data, and its YAML node tree, which says on which line each
    path starts (looked up only for a problem: most files have none)."""

    name: str
    data: Any
    root: Any = field(default=None, repr=False)
    text: str = field(default="", repr=False)  # a JSON file's: its tree is made when asked

    def line_of(self, path: Path_) -> int | None:
        if self.root is None and self.text:
            loader = _Loader(self.text)
            try:
                self.root = loader.get_single_node()
            finally:
                loader.dispose()
        node, line = self.root, None
        for part in path:
            if node is None:
                break
            line = node.start_mark.line + 1
            node = _child(node, part)
        if node is not None:
            line = node.start_mark.line + 1
        return line

    def problem(self, path: Path_, message: str) -> Problem:
        return Problem(self.name, self.line_of(path), render_path(path), message)


@dataclass
class Item:
    """One object of a kind as a file gives it."""

    kind: str
    index: int
    data: dict[str, Any]
    source: Source

    def problem(self, message: str, *keys: str | int) -> Problem:
        return self.source.problem((self.kind, self.index, *keys), message)

    @property
    def where(self) -> str:
        line = self.source.line_of((self.kind, self.index))
        return f"{self.source.name}:{line}" if line else self.source.name


# libyaml's parser where it is built in (a 12,500-node file parses in seconds, not tens).
_BASE: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_BASE):
    """The safe loader without YAML 1.1 timestamps (`2026-09-01` stays the text it is)
    that names a key given twice in one mapping instead of keeping the last."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.repeated: list[tuple[Any, yaml.Node, int]] = []

    def construct_mapping(self, node: yaml.Node, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                line = key_node.start_mark.line + 1
                if key_node.value in seen:
                    self.repeated.append((key_node.value, key_node, seen[key_node.value]))
                seen.setdefault(key_node.value, line)
        return super().construct_mapping(node, deep=deep)


_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _child(node: Any, part: str | int) -> Any:
    if isinstance(node, yaml.MappingNode):
        return next((v for k, v in node.value if k.value == part), None)
    if isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
        return node.value[part]
    return None


def _path_to(root: yaml.Node, target: yaml.Node) -> Path_:
    """The path of the mapping that holds the key `target` (for a key given twice)."""
    stack: list[tuple[yaml.Node, Path_]] = [(root, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if key is target:
                    return path
                stack.append((value, (*path, key.value)))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, (*path, i)) for i, item in enumerate(node.value))
    return ()


class _Repeated(Exception):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found = dict(pairs)
    if len(found) != len(pairs):
        raise _Repeated
    return found


def parse(name: str, text: str) -> tuple[Source, list[Problem]]:
    """One file's text as data, keeping its node tree for lines (YAML, of which JSON is a
    subset). A `.json` file is read by the json module, some thirty times faster; its tree
    is made only if a line is asked for. One it cannot read is read as YAML, whose
    problems name their lines."""
    if name.endswith(".json"):
        try:
            data = json.loads(text, object_pairs_hook=_pairs)
            return Source(name, {} if data is None else data, text=text), []
        except (ValueError, _Repeated):
            pass
    source = Source(name, None)
    problems: list[Problem] = []
    try:
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
            if node is not None:
                source.root = node
                source.data = loader.construct_document(node)
                for key, key_node, first in loader.repeated:
                    path = (*_path_to(node, key_node), key)
                    problems.append(
                        Problem(
                            name,
                            key_node.start_mark.line + 1,
                            render_path(path),
                            f"given twice in one mapping (first on line {first})",
                        )
                    )
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        what = getattr(exc, "problem", None) or str(exc)
        source.data = None
        return source, [Problem(name, line, "", f"not YAML or JSON: {what}")]
    if source.data is None:  # an empty file
        source.data = {}
    return source, problems


@cache
def _validators() -> tuple[Any, Any]:
    """The schema in jsonschema-rs, some fifty times faster, answers whether a file is
    valid; only one that is not is walked again by the reference implementation, whose
    errors the messages below are written from. Built at first use: the schema names the
    webhook event types the apps register when they are ready."""
    return (
        jsonschema_rs.Draft202012Validator(schema()),
        jsonschema.Draft202012Validator(schema()),
    )


def _schema_message(error: jsonschema.ValidationError) -> str:
    """jsonschema's words, except that a secret's value is never repeated."""
    if error.path and error.path[-1] in SECRET_KEYS:
        return (
            "a secret is given as a reference, env:NAME or file:/path, never as its value "
            "(the value is not repeated here)"
        )
    if error.validator == "enum":
        return f"{error.instance!r} is not one of {', '.join(map(str, error.validator_value))}"
    return error.message


def check(source: Source) -> list[Problem]:
    """The file against the schema: every problem, not just the first."""
    fast, reference = _validators()
    if fast.is_valid(source.data):
        return []
    found = []
    for error in reference.iter_errors(source.data):
        path = tuple(error.absolute_path)
        if error.validator == "additionalProperties":  # one problem per key, on its line
            known = error.schema.get("properties", {})
            for key in sorted(set(error.instance) - set(known)):
                message = f"unknown key (known: {', '.join(known)})"
                found.append(source.problem((*path, key), message))
            continue
        found.append(source.problem(path, _schema_message(error)))
    return found


def items(sources: Iterable[Source]) -> Iterator[Item]:
    for source in sources:
        for kind in KINDS:
            for index, data in enumerate(source.data.get(kind) or []):
                yield Item(kind, index, data, source)


def read_texts(texts: Iterable[tuple[str, str]]) -> list[Source]:
    """Parse and check named texts (an API request's files); FleetFileError if anything is
    wrong in any of them."""
    sources, problems = [], []
    with bulk():
        for name, text in texts:
            source, found = parse(name, text)
            problems += found
            if source.data is not None:  # parsed, if with a repeated key: the schema too
                problems += check(source)
            sources.append(source)
    if problems:
        raise FleetFileError(problems)
    return sources


def files_under(paths: Iterable[str | Path]) -> list[Path]:
    """The fleet files given: files as named, directories' YAML and JSON files (sorted)."""
    found: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found += sorted(p for p in path.rglob("*") if p.suffix in SUFFIXES and p.is_file())
        else:
            found.append(path)
    return found


def read_paths(paths: Iterable[str | Path]) -> list[Source]:
    """Parse and check the files at `paths` (files or directories)."""
    texts, problems = [], []
    for path in files_under(paths):
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                problems.append(Problem(str(path), None, "", "larger than 64 MiB; split it"))
                continue
            texts.append((str(path), path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(Problem(str(path), None, "", f"cannot be read: {exc}"))
    if not texts and not problems:
        problems.append(Problem(", ".join(map(str, paths)), None, "", "no fleet file found"))
    if problems:
        raise FleetFileError(problems)
    return read_texts(texts)


def model_problems(
    item: Item, exc: ValidationError, rename: dict[str, tuple] | None = None
) -> list:
    """A model check's ValidationError as problems at the item's place in the file, each
    field's message at that field's path (`rename`: a model field the file calls otherwise)."""
    found = []
    for name, messages in exc.message_dict.items():
        path = (rename or {}).get(name) or tuple(path_of(name))
        for message in messages:
            found.append(item.problem(message, *path))
    return found


def path_of(name: str) -> list[str | int]:
    """'interfaces[0].mac' -> ['interfaces', 0, 'mac']; '__all__' -> []."""
    if name == "__all__":
        return []
    path: list[str | int] = []
    for part in name.split("."):
        head, _, index = part.partition("[")
        path.append(head)
        if index:
            path.append(int(index.rstrip("]")))
    return path
