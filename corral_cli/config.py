"""Where the CLI finds its Corral: `$XDG_CONFIG_HOME/corral/config.json` (by default
`~/.config/corral/config.json`), written by `corral login` readable by its owner only;
CORRAL_URL and CORRAL_TOKEN override what the file says, one by one."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from .errors import CorralError

HOW_TO = (
    "run `corral login --url URL --token TOKEN`, or set CORRAL_URL and CORRAL_TOKEN "
    "(an API token: `manage.py corral_token NAME --group ROLE` on the Corral host)"
)


@dataclass(frozen=True)
class Config:
    url: str
    token: str


def config_path(environ: Mapping[str, str]) -> Path:
    base = environ.get("XDG_CONFIG_HOME") or ""
    root = Path(base) if base else Path(environ.get("HOME") or Path.home()) / ".config"
    return root / "corral" / "config.json"


def normalise_url(url: str) -> str:
    """The Corral's base URL: scheme and host (and a prefix it is served under), without a
    trailing slash or the API's own path, so `https://corral/api/v1/` works too."""
    url = url.strip().rstrip("/")
    if url.endswith("/api/v1"):
        url = url[: -len("/api/v1")]
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise CorralError(f"{url!r} is not a Corral URL: give http(s)://host[:port]")
    if parts.query or parts.fragment:
        raise CorralError(f"{url!r}: give the Corral's URL without a query or fragment")
    return url


def read_file(path: Path) -> dict[str, str]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise CorralError(f"{path}: cannot be read ({exc.__class__.__name__}); {HOW_TO}")
    try:
        data = json.loads(text)
    except ValueError:
        raise CorralError(f"{path}: not JSON; {HOW_TO}") from None
    if not isinstance(data, dict):
        raise CorralError(f"{path}: not a JSON object; {HOW_TO}")
    return {k: v for k, v in data.items() if isinstance(v, str)}


def load(environ: Mapping[str, str]) -> Config:
    """The configuration in force: the environment's values over the file's."""
    path = config_path(environ)
    stored = read_file(path)
    url = environ.get("CORRAL_URL") or stored.get("url", "")
    token = environ.get("CORRAL_TOKEN") or stored.get("token", "")
    missing = [name for name, value in (("a URL", url), ("a token", token)) if not value]
    if missing:
        raise CorralError(
            f"No Corral configured ({' and '.join(missing)} missing; looked in CORRAL_URL, "
            f"CORRAL_TOKEN and {path}): {HOW_TO}."
        )
    return Config(normalise_url(url), token.strip())


def save(environ: Mapping[str, str], config: Config) -> Path:
    """Write the file readable and writable by its owner only (0600, in a 0700 folder),
    replacing any earlier one at once: it holds a token."""
    path = config_path(environ)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    body = json.dumps({"url": config.url, "token": config.token}, indent=2) + "\n"
    fd, temp = tempfile.mkstemp(prefix=".config-", suffix=".json", dir=path.parent)
    try:
        os.fchmod(fd, 0o600)  # mkstemp makes it 0600 already; said here, not assumed
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(body)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return path
