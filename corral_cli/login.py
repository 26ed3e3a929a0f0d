"""`corral login`: check a token against a Corral, then keep both in the configuration
file (0600). The token is never printed."""

from __future__ import annotations

import argparse
import getpass
from typing import Any

from . import config
from .client import Client
from .context import Context
from .errors import ApiError, CorralError


def add_parsers(commands: Any) -> None:
    login = commands.add_parser(
        "login",
        help="check a URL and API token and save them",
        description="Check the token (GET /api/v1/) and write the URL and token to "
        "$XDG_CONFIG_HOME/corral/config.json (~/.config/corral/config.json), readable by "
        "you only. Without --token it is read from CORRAL_TOKEN, asked for on a terminal, "
        "or read from stdin (`corral login --url URL < token-file`).",
    )
    login.add_argument("--url", help="Corral's address, e.g. https://corral.example.net")
    login.add_argument("--token", help="an API token (`manage.py corral_token`)")
    login.set_defaults(run=login_command)


def read_token(ctx: Context, given: str | None) -> str:
    if given:
        return given.strip()
    if ctx.environ.get("CORRAL_TOKEN"):
        return ctx.environ["CORRAL_TOKEN"].strip()
    if ctx.interactive():
        return getpass.getpass("API token: ", stream=ctx.stderr).strip()
    return ctx.stdin.readline().strip()


def login_command(ctx: Context, args: argparse.Namespace) -> int:
    url = args.url or ctx.environ.get("CORRAL_URL") or ""
    if not url:
        raise CorralError("Give Corral's address: corral login --url URL --token TOKEN")
    url = config.normalise_url(url)
    token = read_token(ctx, args.token)
    if not token:
        raise CorralError("Give an API token: --token TOKEN, CORRAL_TOKEN, or on stdin.")
    try:
        Client(url, token).get("/api/v1/")
    except ApiError as exc:
        raise CorralError(
            f"Corral at {url} refused the token: {exc.detail or f'HTTP {exc.status}'}"
            " (nothing was written)."
        ) from None
    path = config.save(ctx.environ, config.Config(url, token))
    ctx.out(f"Logged in to {url}; configuration written to {path} (readable by you only).")
    overriding = [n for n in ("CORRAL_URL", "CORRAL_TOKEN") if ctx.environ.get(n)]
    if overriding:
        ctx.note(f"Note: {' and '.join(overriding)} set here override the file.")
    return 0
