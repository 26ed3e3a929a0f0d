"""The schema tells the truth: schemathesis calls every operation of /api/schema/ with
generated requests (valid and invalid), as an admin, and runs all its checks on every
answer: no 5xx, status codes and bodies as declared.

As an admin every operation gets past its permission check, so every answer the schema
declares can be reached. The other roles' answers are proven where they differ: which
role may call what by the role walks (tests/test_roles.py: every write for every role,
tests/test_site_scope_*.py: reads and writes across sites). A second pass as an
integration used to re-ask every operation, mostly to hear its 403 again.

In process (WSGI): the requests see the test's database, seeded with one of everything.
Actions reach BMCs and queue Celery tasks; no worker runs, so an action is accepted (202)
or refused (409) and both answers are declared.
"""

from __future__ import annotations

import contextlib
import os
import zlib

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections, transaction
from hypothesis import HealthCheck, Phase, settings

from fleet.wsgi import application

EXAMPLES = 5  # per operation, as admin

# positive_data_acceptance (a schema-valid request must not be a 4xx) is kept on for every
# operation; these also may answer 400 to schema-valid data, because what they refuse
# depends on the database or on a document the schema cannot describe. The 400 is declared
# (ValidationError) and names the field; every other check stays on for them.
BUSINESS_RULE_400 = {
    # Filters naming an object by id: an id no object has is a 400 naming the filter
    # (django-filter), not an empty list.
    **{
        f"GET /api/v1/{path}/": "filters by object id: an unknown id is a 400"
        for path in (
            "boot-requests",
            "check-results",
            "deployments",
            "drift/events",
            "events",
            "gate-runs",
            "interfaces",
            "operations",
            "subnets",
            "baseline-artifacts",
        )
    },
    **{
        f"GET /api/v1/reports/{path}/": "filters by rack id: an unknown rack is a 400"
        for path in ("gpu-hours", "rack-to-revenue", "reliability", "revenue", "summary", "yield")
    },
    "POST /api/v1/nodes/": "its rack and site must exist; hostname, serial and MACs unique",
    "POST /api/v1/interfaces/": "its node must exist; the MAC must be unique",
    **{
        f"{method} /api/v1/nodes/{{id}}/": "bmc: null does not remove a node's BMC (the "
        "admin's), so it is refused on a node that has one"
        for method in ("PUT", "PATCH")
    },
    "POST /api/v1/sites/": "name and slug unique",
    "POST /api/v1/reports/prices/": "one price per GPU model",
    "POST /api/v1/racks/": "its site must exist; names unique in the site",
    # The same rule on a replace, found once more objects were seeded: ids are not reset
    # between tests, so whether the generated rack 1000 exists depends on what ran before.
    # Then a generated If-Match that is not its ETag is the declared 412 too.
    "PUT /api/v1/racks/{id}/": "its site must exist; names unique in the site; If-Match",
    # Likewise for an interface moved to a node (seen once tests ran on two processes:
    # whether interface 1 exists there depends on which tests that process ran first).
    **{
        f"{method} /api/v1/interfaces/{{id}}/": "its node must exist; the MAC must be unique"
        for method in ("PUT", "PATCH")
    },
    "POST /api/v1/rack-templates/": "slots named once, inside the rack's units and not "
    "overlapping; `within` names a slot with a unit; the name unique",
    "POST /api/v1/rack-layouts/": "the site and template must exist; each tray fills one of "
    "the template's slots once; serials, hostnames and BMC addresses unique in the fleet; "
    "each BMC valid for its driver once the rack's defaults are merged in",
    "POST /api/v1/subnets/": "its site must exist; the CIDR a network, pool and gateway in it",
    "POST /api/v1/images/": "name and version unique together; artifact hosts the egress "
    "policy allows (docs/egress.md)",
    # A URL's host must pass the egress policy: the cloud metadata and unspecified
    # addresses in any spelling (`http://0`), link-local, what the settings add; and a name
    # is judged by what it resolves to. No pattern can say that.
    **{
        f"{method} /api/v1/{path}": "the URL's host must pass the egress policy (docs/egress.md)"
        for method, path in (
            ("POST", "webhooks/"),
            ("PUT", "webhooks/{id}/"),
            ("PATCH", "webhooks/{id}/"),
            ("PUT", "images/{id}/"),
            ("PATCH", "images/{id}/"),
        )
    },
    "POST /api/v1/firmware-artifacts/": "name and version unique together; the URL's host "
    "must pass the egress policy (docs/egress.md) and Django's URL rules",
    "POST /api/v1/firmware-artifacts/upload/": "the sha256 must be the uploaded file's (a "
    "generated one never is); name and version unique together",
    **{
        f"{method} /api/v1/baseline-artifacts/{path}": "the baseline and artifact must exist; "
        "the artifact must be the component's and of a version the baseline expects "
        "(converge.pins); one per component of a baseline"
        for method, path in (("POST", ""), ("PUT", "{id}/"), ("PATCH", "{id}/"))
    },
    "POST /api/v1/gate-profiles/": "the spec is a gate profile document (phases, checks) "
    "checked on load; one profile only is the default",
    "POST /api/v1/baselines/": "components are component names with versions",
    "POST /api/v1/nodes/import/": "the file is CSV text with the import's columns",
    **{
        f"POST /api/v1/fleet/{verb}/": "each file is YAML or JSON following the fleet file's "
        "own JSON Schema (docs/fleet-file.schema.json), its sites and racks exist"
        for verb in ("plan", "apply")
    },
    "POST /api/v1/nodes/actions/{name}/": "the nodes named must exist",
    "POST /api/v1/rma-cases/assign/": "the cases and the assignee must exist, and the "
    "assignee may work them (rma.selectors.assignable_users)",
    "POST /api/v1/health-events/": "the hostnames must exist; an XID code is a number; "
    "`at` not in the future",
    "POST /api/v1/nodes/{id}/health-events/": "an XID code is a number; `at` not in the future",
    **{
        f"POST /api/v1/campaigns/{path}": "a reimage's image must exist and be published (a "
        "converge takes none); the selection names existing nodes (one of nodes, rack, site)"
        for path in ("", "plan/")
    },
    **{
        f"POST /api/v1/campaigns/{{id}}/{verb}/": "the campaign's status must allow it (409)"
        for verb in ("pause", "resume", "cancel")
    },
    "POST /api/v1/operations/{id}/cancel/": "a running chain (recycle), or work that waits "
    "(before it starts, between two attempts); else 409",
    **{
        f"{method} /api/v1/health-policies/{path}": "a watch row needs count, window and "
        "escalation, any other row none of them"
        for method, path in (("POST", ""), ("PUT", "{id}/"), ("PATCH", "{id}/"))
    },
}
# One seed for every run, so CI tests the same requests each time: without it schemathesis
# draws a new seed per run for the requests it builds from the schema's edges (empty,
# extreme, odd characters), and a run found or missed a disagreement by chance. To look
# further, run with another: CORRAL_SCHEMATHESIS_SEED=7 .venv/bin/pytest tests/api/...
SEED = int(os.environ.get("CORRAL_SCHEMATHESIS_SEED", "20261127"))


def config(phases: dict) -> schemathesis.config.SchemathesisConfig:
    return schemathesis.config.SchemathesisConfig.from_dict(
        {
            "seed": SEED,
            "phases": phases,
            "operations": [
                {
                    "include-name": name,
                    "checks": {
                        "positive_data_acceptance": {
                            "expected-statuses": ["2xx", "3xx", 400, 401, 403, 404, 409, 412, 429]
                        }
                    },
                }
                for name in BUSINESS_RULE_400
            ],
        }
    )


# Two passes over every operation. The generated one (random requests, EXAMPLES each) is
# built when pytest collects, which every xdist process does: it must stay cheap. The
# coverage phase's cases (each parameter's and property's edges: missing, wrong type,
# boundary lengths and values, enum members, unexpected methods; about 60 an operation)
# took 55 s of CPU to build at collection, in each process, so they are built when their
# test runs, once, in shards the processes share (COVERAGE_SHARDS below).
schema = schemathesis.openapi.from_wsgi(
    "/api/schema/?format=json", application, config=config({"coverage": {"enabled": False}})
)
BOUNDED = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: a failure is reported as found
    suppress_health_check=list(HealthCheck),
)
COVERAGE_SHARDS = 12
EDGES = settings(deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def coverage_schema():
    """The same schema with only the coverage phase on, loaded when a shard first runs
    (perhaps inside the seeded fleet's transaction: its request must not close that)."""
    with kept_connection():
        return schemathesis.openapi.from_wsgi(
            "/api/schema/?format=json",
            application,
            config=config({"examples": {"enabled": False}, "fuzzing": {"enabled": False}}),
        )


coverage = schemathesis.pytest.from_fixture("coverage_schema")


@pytest.fixture(autouse=True)
def item_id_for_subtests(request):
    """Schemathesis 4.32 names each operation's subtest of a lazy test through the item's
    ``_nodeid``, an attribute pytest 9 items no longer have: give it the item's id."""
    if not hasattr(request.node, "_nodeid"):
        request.node._nodeid = request.node.nodeid


def token(seeded_fleet: dict[str, str], role: str) -> dict[str, str]:
    return {"Authorization": f"Token {seeded_fleet[role]}"}


@contextlib.contextmanager
def kept_connection():
    """The WSGI handler closes the database connection after each request; in a test that
    would drop the transaction holding the seeded fleet. Django's own test client does the
    same as this."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture(autouse=True)
def keep_the_test_connection():
    with kept_connection():
        yield


@pytest.mark.slow
@pytest.mark.django_db
@schema.parametrize()
@BOUNDED
def test_every_operation_answers_as_declared_to_an_admin(case, seeded_fleet_once):
    case.call_and_validate(headers=token(seeded_fleet_once, "admin"))


def shard(label: str) -> int:
    """Which coverage shard an operation's cases run in: fixed by its label."""
    return zlib.crc32(label.encode()) % COVERAGE_SHARDS


def edge_cases_of(number: int):
    """The coverage test of one shard: each operation a subtest named by its label, each
    case in a savepoint of its own (the shard's test shares one seeded fleet)."""

    @EDGES
    @coverage.include(lambda ctx: shard(ctx.operation.label) == number).parametrize()
    def test(case, seeded_fleet_once):
        with transaction.atomic():
            case.call_and_validate(headers=token(seeded_fleet_once, "admin"))
            transaction.set_rollback(True)

    test.__name__ = f"test_every_operations_edge_cases_answer_as_declared_{number:02d}"
    return pytest.mark.slow(pytest.mark.django_db(test))


for _number in range(COVERAGE_SHARDS):
    _test = edge_cases_of(_number)
    globals()[_test.__name__] = _test
