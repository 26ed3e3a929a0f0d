"""A real OpenID Provider for the single sign-on tests: panva's oidc-provider (OpenID
Certified) on Node.js, from tests/peers/oidc/ (provider.mjs; package.json and
package-lock.json pin it). Its node_modules is installed with `npm ci` the first time a
test needs it (one xdist worker at a time), so `make test` on a clean clone works alone.
No node or npm: the fixture fails, never skips (docs/testing.md: real peers).

The issuer is http://localhost:PORT while Corral is served at 127.0.0.1: to the browser
these are two sites, as a real provider and Corral are, so the session cookie's SameSite
rule is exercised on the way back. The process listens on 127.0.0.1 only.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests

from tests.peers.util import LOOPBACK, free_port, stop_process, wait_until

PEER_DIR = Path(__file__).resolve().parent / "oidc"
CLIENT_ID = "corral"
CLIENT_SECRET = "corral-test-client-secret-0123456789"


def npm_ci() -> None:
    """Install the provider's pinned packages unless they are there (under a lock: two
    xdist workers may both need them at once)."""
    installed = PEER_DIR / "node_modules" / "oidc-provider" / "package.json"
    if installed.exists():
        return
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is not installed: the OpenID provider peer needs Node.js")
    with open(PEER_DIR / ".npm-ci.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not installed.exists():
            subprocess.run(
                ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=PEER_DIR,
                check=True,
                timeout=300,
            )


@dataclass
class Account:
    login: str
    password: str
    claims: dict[str, Any]


@dataclass
class OpenIDProvider:
    """A provider whose port and issuer are known before it starts, so a Corral server
    can be given them first (Corral reads the discovery document at the first login);
    start() once the redirect URI is known."""

    port: int
    log: Path
    client_id: str = CLIENT_ID
    client_secret: str = CLIENT_SECRET
    process: subprocess.Popen | None = None

    @property
    def issuer(self) -> str:
        return f"http://localhost:{self.port}"

    def corral_env(self, role_map: str, **extra: str) -> dict[str, str]:
        """The environment that points Corral at this provider."""
        return {
            "CORRAL_OIDC_ISSUER": self.issuer,
            "CORRAL_OIDC_CLIENT_ID": self.client_id,
            "CORRAL_OIDC_CLIENT_SECRET": self.client_secret,
            "CORRAL_OIDC_SCOPES": "openid email profile groups",
            "CORRAL_OIDC_NAME": "Test IdP",
            "CORRAL_OIDC_ROLE_MAP": role_map,
            **extra,
        }

    def start(self, redirect_uris: list[str], accounts: list[Account]) -> None:
        config = {
            "host": LOOPBACK,
            "port": self.port,
            "issuer": self.issuer,
            "clients": [
                {
                    "client_id": self.client_id,
                    "client_secret": self.client_secret,
                    "redirect_uris": redirect_uris,
                }
            ],
            "accounts": {a.login: {"password": a.password, "claims": a.claims} for a in accounts},
        }
        env = {**os.environ, "OIDC_PEER_CONFIG": json.dumps(config)}
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(
                ["node", "provider.mjs"],
                cwd=PEER_DIR,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        wait_until(self._listening, timeout=20, what="the OpenID provider listening")

    def set_accounts(self, accounts: list[Account]) -> None:
        """What the provider knows of people from now on (their groups, say), as an
        admin changes it at a real provider."""
        body = {a.login: {"password": a.password, "claims": a.claims} for a in accounts}
        resp = requests.put(f"http://{LOOPBACK}:{self.port}/peer/accounts", json=body, timeout=5)
        resp.raise_for_status()

    def _listening(self) -> bool:
        assert self.process is not None
        if self.process.poll() is not None:
            raise RuntimeError(f"the OpenID provider exited:\n{self.output()}")
        return f"listening on {LOOPBACK}:{self.port}" in self.output()

    def stop(self) -> None:
        if self.process is not None:
            stop_process(self.process)
            self.process = None

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""


@pytest.fixture
def oidc_provider(tmp_path) -> Iterator[OpenIDProvider]:
    """A provider on a free loopback port, not started yet (start(redirect_uris,
    accounts)); stopped after the test."""
    npm_ci()
    provider = OpenIDProvider(port=free_port(), log=tmp_path / "oidc-provider.log")
    try:
        yield provider
    finally:
        provider.stop()
