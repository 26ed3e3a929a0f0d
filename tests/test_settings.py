"""Production configuration: `check --deploy` is clean with production variables set."""

import os
import subprocess
import sys
from pathlib import Path

from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parent.parent

PRODUCTION = {
    "SECRET_KEY": "p" * 20 + "-Zq8vN3xK0rT5yW2bL7mC4fH9jD1sG6aE-" + "x" * 20,
    "FIELD_ENCRYPTION_KEYS": Fernet.generate_key().decode(),
    "DEBUG": "false",
    "ALLOWED_HOSTS": "corral.example.net",
    "SECURE_SSL_REDIRECT": "true",
    "SESSION_COOKIE_SECURE": "true",
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


def test_check_deploy_is_clean_with_production_variables():
    result = check_deploy(PRODUCTION)
    assert result.returncode == 0, result.stderr + result.stdout
    assert "no issues" in result.stdout


def test_check_deploy_refuses_a_missing_encryption_key():
    result = check_deploy({**PRODUCTION, "FIELD_ENCRYPTION_KEYS": ""})
    assert result.returncode != 0
    assert "corral.E001" in result.stderr + result.stdout
