"""What stops a command, and the lines a person reads for it (on stderr; exit status 1)."""

from __future__ import annotations

from typing import Any


class CorralError(Exception):
    """A command cannot go on; its message says why and, where it can, what to do."""

    def lines(self) -> list[str]:
        return str(self).splitlines() or [self.__class__.__name__]


class UsageError(CorralError):
    """The command line itself is wrong (argparse's error, exit 1 here, not argparse's 2:
    2 means "the plan has changes")."""


class ApiError(CorralError):
    """Corral answered with an HTTP error: its `detail`, and what else the body says."""

    def __init__(self, status: int, method: str, url: str, body: Any) -> None:
        self.status, self.method, self.url, self.body = status, method, url, body
        super().__init__(f"{method} {url}: HTTP {status}")

    @property
    def detail(self) -> str:
        if isinstance(self.body, dict) and isinstance(self.body.get("detail"), str):
            return self.body["detail"]
        return ""

    def lines(self) -> list[str]:
        body = self.body
        head = self.detail or f"Corral answered HTTP {self.status} to {self.method} {self.url}"
        if self.status == 401:
            head += " (the token was refused: run `corral login` with a valid token)"
        found = [head]
        if not isinstance(body, dict):
            if isinstance(body, list):  # DRF's answer to a ValidationError of a list
                found += [f"  {item}" for item in body]
            elif body and not self.detail:
                found.append(f"  (not JSON: {str(body)[:200]!r})")
            return found
        for problem in body.get("problems") or []:
            found.append(problem_line(problem))
        for key, label in (("refusals", "refused"), ("destructive", "destructive")):
            found += [f"! {label}: {why}" for why in body.get(key) or []]
        if body.get("allowed") is not None:
            found.append(f"allowed now: {', '.join(body['allowed']) or 'none'}")
        if not self.detail:  # a 400 naming fields: {"reason": ["..."]}
            found += [f"{key}: {flatten(value)}" for key, value in body.items()]
        return found


def problem_line(problem: Any) -> str:
    """`file:line path: message`, as the server's own command prints a problem (an editor
    or CI annotates the line)."""
    if not isinstance(problem, dict):
        return str(problem)
    file, line = problem.get("file") or "", problem.get("line")
    where = f"{file}:{line}" if line else file
    path, message = problem.get("path") or "", problem.get("message") or ""
    if path:
        return f"{where} {path}: {message}" if where else f"{path}: {message}"
    return f"{where}: {message}" if where else message


def flatten(value: Any) -> str:
    if isinstance(value, list):
        return " ".join(flatten(v) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{k}: {flatten(v)}" for k, v in value.items())
    return str(value)
