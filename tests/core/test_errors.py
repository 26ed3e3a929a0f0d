"""Every refusal of the domain is a DomainConflict that carries its HTTP status and body, so
the API's handler maps them all without naming an app (it named six apps' exceptions)."""

import ast
from pathlib import Path

from django.conf import settings

from core.errors import DomainConflict


def subclasses(cls: type) -> set[type]:
    found = set(cls.__subclasses__())
    for sub in list(found):
        found |= subclasses(sub)
    return found


def test_the_refusals_people_meet_are_domain_conflicts():
    names = {c.__name__ for c in subclasses(DomainConflict)}
    assert {
        "ActionNotAllowed",
        "IllegalTransition",
        "NodeLocked",
        "CannotCancel",
        "DeleteRefused",
        "ImageImmutable",
        "IllegalCaseTransition",
        "ResolutionRequired",
        "IllegalCampaignTransition",
    } <= names
    assert all(c.http_status in (400, 409) for c in subclasses(DomainConflict))


def test_the_api_handler_names_no_app():
    source = (Path(settings.BASE_DIR) / "fleet" / "exceptions.py").read_text()
    imported = {
        node.module.split(".")[0]
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom) and node.module
    }
    assert imported <= {"__future__", "django", "rest_framework", "core", "fleet"}
