"""Production configuration: `check --deploy` is clean with production variables set."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parent.parent

PRODUCTION = {
    "SECRET_KEY": "p" * 20 + "-Zq8vN3xK0rT5yW2bL7mC4fH9jD1sG6aE-" + "x" * 20,
    "FIELD_ENCRYPTION_KEYS": Fernet.generate_key().decode(),
    "DEBUG": "false",
    "ALLOWED_HOSTS": "corral.example.net",
    "SECURE_SSL_REDIRECT": "true",  # TLS configured: the cookies are Secure by themselves
    "SECURE_HSTS_SECONDS": "31536000",
    "CORRAL_ENV_FILE": "/nonexistent",
}


def check_deploy(extra: dict) -> subprocess.CompletedProcess:
    # DJANGO_ALLOW_ASYNC_UNSAFE is set by the browser tests (Playwright's loop), not prod.
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in PRODUCTION and k != "DJANGO_ALLOW_ASYNC_UNSAFE"
    }
    env.update(extra)
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.slow  # 3 s on its own (docs/testing.md: Markers)
def test_check_deploy_is_clean_with_production_variables():
    result = check_deploy(PRODUCTION)
    assert result.returncode == 0, result.stderr + result.stdout
    assert "no issues" in result.stdout


@pytest.mark.slow  # 2 s on its own (docs/testing.md: Markers)
def test_check_deploy_refuses_a_missing_encryption_key():
    result = check_deploy({**PRODUCTION, "FIELD_ENCRYPTION_KEYS": ""})
    assert result.returncode != 0
    assert "corral.E001" in result.stderr + result.stdout


def settings_under(extra: dict, *names: str) -> dict:
    """The named settings as fleet.settings computes them with this environment."""
    env = {k: v for k, v in os.environ.items() if k not in PRODUCTION}
    env.update({"CORRAL_ENV_FILE": "/nonexistent", **extra})
    code = (
        "import json, django; django.setup(); from django.conf import settings as s; "
        f"print(json.dumps({{n: getattr(s, n) for n in {list(names)!r}}}))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "fleet.settings"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


COOKIES = ("SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE")


@pytest.mark.slow  # 5 s on its own (docs/testing.md: Markers)
def test_cookies_are_secure_whenever_tls_is_configured():
    for tls in ({"SECURE_SSL_REDIRECT": "true"}, {"BEHIND_TLS_PROXY": "true"}):
        got = settings_under(tls, *COOKIES, "SESSION_COOKIE_HTTPONLY", "SESSION_COOKIE_SAMESITE")
        assert got == {
            "SESSION_COOKIE_SECURE": True,
            "CSRF_COOKIE_SECURE": True,
            "SESSION_COOKIE_HTTPONLY": True,
            "SESSION_COOKIE_SAMESITE": "Lax",
        }, tls
    # Plain http on a laptop: a Secure cookie would never come back, so none is set.
    assert settings_under({}, *COOKIES) == dict.fromkeys(COOKIES, False)


@pytest.mark.slow  # 3 s on its own (docs/testing.md: Markers)
def test_check_deploy_is_clean_behind_a_tls_proxy():
    """TLS ends at a proxy (BEHIND_TLS_PROXY) that redirects http itself."""
    behind = {k: v for k, v in PRODUCTION.items() if k not in ("SESSION_COOKIE_SECURE",)}
    behind.update({"SECURE_SSL_REDIRECT": "false", "BEHIND_TLS_PROXY": "true"})
    result = check_deploy(behind)
    # security.W008 (no SECURE_SSL_REDIRECT) is the one warning left: the proxy redirects.
    assert "W008" in result.stdout + result.stderr
    assert "W012" not in result.stdout + result.stderr  # session cookie Secure
    assert "W016" not in result.stdout + result.stderr  # CSRF cookie Secure
