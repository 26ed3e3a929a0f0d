"""Docs that say who may call an endpoint say what the permission code enforces.

docs/webhooks.md said an integration token could subscribe while the server kept every
webhook write for admins (issue 29). A page that states roles now embeds the rows of the
role table for its endpoints between `<!-- role_table PREFIX -->` and `<!-- /role_table -->`,
written by `python manage.py role_table` (inventory/roletable.py) like docs/roles.md.
The webhooks page is read back here and compared with the code row by row, so a hand edit
or a changed permission fails until the page is regenerated (and its prose reread).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from inventory.roletable import rows

DOCS = Path(__file__).resolve().parent.parent / "docs"
ROW = re.compile(
    r"^\| (?P<method>[A-Z]+) \| `(?P<path>[^`]+)` \| (?P<needs>\w+) \|(?P<marks>.*)\|$"
)


def embedded_rows(text: str, prefix: str) -> set[tuple[str, str, str, tuple[str, ...]]]:
    block = re.search(
        rf"<!-- role_table {re.escape(prefix)} -->\n(.*?)<!-- /role_table -->", text, re.S
    )
    assert block, f"no role table for {prefix} in the page"
    lines = block[1].splitlines()
    roles = [cell.strip() for cell in lines[0].strip("|").split("|")][3:]
    found = set()
    for line in lines[2:]:
        row = ROW.match(line)
        assert row, f"not a row of the role table: {line!r}"
        marks = [cell.strip() for cell in row["marks"].split("|")]
        holders = tuple(role for role, mark in zip(roles, marks, strict=True) if mark == "yes")
        found.add((row["method"], row["path"], row["needs"], holders))
    return found


def test_the_webhooks_page_states_the_roles_the_server_enforces():
    expected = {
        (r.method, r.path, r.capability, r.roles)
        for r in rows()
        if r.path.startswith("/api/v1/webhooks/")
    }
    assert expected
    stated = embedded_rows((DOCS / "webhooks.md").read_text(), "/api/v1/webhooks/")
    assert stated == expected, "run `python manage.py role_table`, then reread the prose"


@pytest.mark.parametrize("doc", sorted(DOCS.glob("*.md")), ids=lambda p: p.name)
def test_every_embedded_role_table_is_current(doc):
    from inventory.roletable import refresh

    text = doc.read_text()
    assert refresh(text) == text, f"{doc.name} is stale: run `python manage.py role_table`"
