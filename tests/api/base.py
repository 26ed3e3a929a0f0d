"""NetBox-style API tests: describe a viewset once (ViewSetSpec), inherit its tests.

A test class names its spec; `ViewSetTests` then drives list / retrieve / create / update /
delete for every role and for an anonymous caller, expecting the status codes the role table
(`tests/api/specs.py: ACCESS`) and the viewset's offered operations give, and checks what a
caller would check after each: the row is there, was created, changed, deleted, or was left
alone. It also pins the viewset's query counts: a list costs the same with 1 or 20 rows, a
detail at most its baseline.

    class TestSites(ViewSetTests):
        spec = specs.SITES
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.db.models import Model

# Who gets past the permission check. Rows of specs.ACCESS are built from these.
READERS = frozenset({"manager", "technician", "integration", "admin"})
ACTORS = frozenset({"technician", "integration", "admin"})
WRITERS = frozenset({"integration", "admin"})
ADMINS = frozenset({"admin"})

CALLERS = ("manager", "technician", "integration", "admin", None)  # None: no credentials
CALLER_IDS = [role or "anonymous" for role in CALLERS]
OPS = ("list", "retrieve", "create", "update", "delete")
SUCCESS = {"list": 200, "retrieve": 200, "create": 201, "update": 200, "delete": 204}


@dataclass(frozen=True)
class ViewSetSpec:
    """One viewset as a caller sees it.

    access: for each of OPS, the roles the permission check lets through.
    offers: the operations the viewset implements; a role let through for another one
        gets 405 (the permission check runs before the method is looked up).
    create / update: a valid POST body / PATCH body for an object (scalar or JSON fields
        whose stored value equals the value sent); created_ids: the ids a create answered.
    list_queries / detail_queries: the pinned number of SQL queries of one GET with an
        admin token: 4 for the caller (knox: the token with its user, and the user's other
        tokens, expired ones deleted; axes: the client's failure count; the role), then
        count + page (list) or the row (detail), then one per prefetched relation.
    """

    basename: str
    url: str
    model: type[Model]
    make: Callable[[], Model]
    access: tuple[frozenset[str], ...]
    list_queries: int
    detail_queries: int
    offers: frozenset[str] = frozenset(OPS)
    create: Callable[[], dict] | None = None
    update: Callable[[Model], dict] | None = None
    # The ids a successful create answered with (a bulk create answers a list of rows).
    created_ids: Callable[[object], set[int]] = lambda data: {data["id"]}  # type: ignore[index]

    def __post_init__(self):
        assert len(self.access) == len(OPS), self.basename
        assert ("create" in self.offers) == (self.create is not None), self.basename
        assert ("update" in self.offers) == (self.update is not None), self.basename

    def detail_url(self, pk: int) -> str:
        return f"{self.url}{pk}/"

    def expected(self, op: str, role: str | None) -> int:
        if role is None:
            return 401
        if role not in dict(zip(OPS, self.access, strict=True))[op]:
            return 403
        return SUCCESS[op] if op in self.offers else 405


def pks(model: type[Model]) -> set[int]:
    return set(model.objects.values_list("pk", flat=True))


def stored(obj: Model, fields) -> dict:
    """The fields as the API writes them (a related object by its id)."""
    fresh = type(obj).objects.get(pk=obj.pk)
    values = {name: getattr(fresh, name) for name in fields}
    return {name: v.pk if isinstance(v, Model) else v for name, v in values.items()}


class ViewSetTests:
    """Inherit and set `spec`; pytest collects the subclass (its name starts with Test)."""

    spec: ViewSetSpec

    @pytest.fixture
    def target(self, db):
        return self.spec.make()

    @pytest.mark.parametrize("role", CALLERS, ids=CALLER_IDS)
    def test_list(self, api, target, role):
        resp = api(role).get(self.spec.url, {"page_size": 1000})
        assert resp.status_code == self.spec.expected("list", role), resp.content
        if resp.status_code == 200:
            assert target.pk in [row["id"] for row in resp.data["results"]]

    @pytest.mark.parametrize("role", CALLERS, ids=CALLER_IDS)
    def test_retrieve(self, api, target, role):
        resp = api(role).get(self.spec.detail_url(target.pk))
        assert resp.status_code == self.spec.expected("retrieve", role), resp.content
        if resp.status_code == 200:
            assert resp.data["id"] == target.pk

    @pytest.mark.parametrize("role", CALLERS, ids=CALLER_IDS)
    def test_create(self, api, db, role):
        body = self.spec.create() if self.spec.create else {}
        before = pks(self.spec.model)
        resp = api(role).post(self.spec.url, body, format="json")
        status = self.spec.expected("create", role)
        assert resp.status_code == status, resp.content
        created = pks(self.spec.model) - before
        if status == 201:
            assert created == self.spec.created_ids(resp.data)
        else:
            assert not created

    @pytest.mark.parametrize("role", CALLERS, ids=CALLER_IDS)
    def test_update(self, api, target, role):
        body = self.spec.update(target) if self.spec.update else {}
        was = stored(target, body)
        resp = api(role).patch(self.spec.detail_url(target.pk), body, format="json")
        status = self.spec.expected("update", role)
        assert resp.status_code == status, resp.content
        if status == 200:
            assert stored(target, body) == body
            assert {name: resp.data[name] for name in body} == body
        else:
            assert stored(target, body) == was

    @pytest.mark.parametrize("role", CALLERS, ids=CALLER_IDS)
    def test_delete(self, api, target, role):
        resp = api(role).delete(self.spec.detail_url(target.pk))
        status = self.spec.expected("delete", role)
        assert resp.status_code == status, resp.content
        assert self.spec.model.objects.filter(pk=target.pk).exists() == (status != 204)

    def test_list_queries_do_not_grow_with_the_rows(self, api, db, django_assert_max_num_queries):
        client = api("admin")
        self.spec.make()
        with django_assert_max_num_queries(self.spec.list_queries) as one:
            assert client.get(self.spec.url).status_code == 200
        for _ in range(19):
            self.spec.make()
        with django_assert_max_num_queries(self.spec.list_queries) as twenty:
            resp = client.get(self.spec.url)
        assert resp.status_code == 200 and resp.data["count"] >= 20
        assert len(twenty) == len(one), [q["sql"] for q in twenty.captured_queries]

    def test_detail_queries(self, api, target, django_assert_max_num_queries):
        client = api("admin")
        with django_assert_max_num_queries(self.spec.detail_queries):
            assert client.get(self.spec.detail_url(target.pk)).status_code == 200
