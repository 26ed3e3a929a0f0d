"""The schema tells the truth: schemathesis calls every operation of /api/schema/ with
generated requests (valid and invalid), as an admin and as an integration, and runs all
its checks on every answer: no 5xx, status codes and bodies as declared.

In process (WSGI): the requests see the test's database, seeded with one of everything.
Actions reach BMCs and queue Celery tasks; no worker runs, so an action is accepted (202)
or refused (409) and both answers are declared.
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, settings

from fleet.wsgi import application

EXAMPLES = 10
# Loaded once at collection (the schema needs no database); each generated test then runs
# in its own transaction on the seeded fleet.
schema = schemathesis.openapi.from_wsgi("/api/schema/?format=json", application)
BOUNDED = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: a failure is reported as found
    suppress_health_check=list(HealthCheck),
)


def token(seeded_fleet: dict[str, str], role: str) -> dict[str, str]:
    return {"Authorization": f"Token {seeded_fleet[role]}"}


@pytest.mark.slow
@pytest.mark.django_db
@schema.parametrize()
@BOUNDED
def test_every_operation_answers_as_declared_to_an_admin(case, seeded_fleet):
    case.call_and_validate(headers=token(seeded_fleet, "admin"))


@pytest.mark.slow
@pytest.mark.django_db
@schema.parametrize()
@BOUNDED
def test_every_operation_answers_as_declared_to_an_integration(case, seeded_fleet):
    case.call_and_validate(headers=token(seeded_fleet, "integration"))
