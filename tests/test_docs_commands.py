"""The commands the README and docs/ give work as written, from a fresh shell in the
checkout (issue 29: `python manage.py corral_user …` failed with "No module named django"
unless the venv was active), and every `manage.py NAME` they name exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.core.management import get_commands

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BARE = re.compile(r"(?<![\w/.-])python3? manage\.py")
NAMED = re.compile(r"manage\.py ([a-z_]+)")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_manage_py_commands_run_from_the_checkout_s_venv(page):
    bare = [
        f"{page.name}:{n}: {line.strip()}"
        for n, line in enumerate(page.read_text().splitlines(), 1)
        if BARE.search(line)
    ]
    assert not bare, "write .venv/bin/python manage.py …:\n" + "\n".join(bare)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_manage_py_command_the_docs_name_exists(page):
    known = set(get_commands())
    unknown = sorted(set(NAMED.findall(page.read_text())) - known)
    assert not unknown, f"{page.name} names commands that do not exist: {unknown}"
