"""NetBox-style page tests: describe a list page once (ListPageSpec), inherit its tests.

`ListPageTests` asks the page as every role, as an anonymous visitor and as a role held in
one site, and checks what a person would: the login page for a visitor, a 403 naming the
role needed for a role without it, the row shown to a role with it; a site role sees its
site's rows and not another site's; an HTMX request gets the table region only; a page
number past the end shows the last page. So a new list page gets the whole walk by
declaring itself in tests/pages/test_lists.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.db.models import Model
from django.urls import reverse

from inventory.models import Site, SiteRole
from tests.api.base import ADMINS, READERS
from tests.factories import SiteFactory, user_in

ROLES = ("manager", "technician", "integration", "admin")


@dataclass(frozen=True)
class ListPageSpec:
    """One list page as a person sees it.

    make: a row of the list in the given site (None: a row that belongs to no site).
    shows: the text the page shows for that row (a hostname, a name).
    readers: the roles that may open the page (fleet-wide).
    scoped: whether a role held in one site sees only that site's rows (False: the page
        is fleet-wide only, as the audit trail is).
    fleet_rows: the rows belong to no site (images, baselines): every reader sees them,
        a role held in one site too.
    table: the id of the region an HTMX request gets alone ("" when it gets the page).
    """

    url_name: str
    make: Callable[[Site | None], Model]
    shows: Callable[[Model], str]
    readers: frozenset[str] = READERS
    scoped: bool = True
    fleet_rows: bool = False
    table: str = ""

    @property
    def url(self) -> str:
        return reverse(self.url_name)


def in_site(role: str, site: Site):
    user = user_in(None, f"{role}-of-{site.slug}")
    SiteRole.objects.create(user=user, role=role, site=site)
    return user


@pytest.mark.django_db
class ListPageTests:
    spec: ListPageSpec

    @pytest.mark.parametrize("role", [*ROLES, None])
    def test_each_role_gets_the_page_or_is_told_why_not(self, client, users, role):
        row = self.spec.make(SiteFactory(slug="hall-a"))
        if role is not None:
            client.force_login(users[role])
        resp = client.get(self.spec.url)
        if role is None:
            assert resp.status_code == 302 and "/login/" in resp["Location"]
        elif role not in self.spec.readers:
            assert resp.status_code == 403
            assert "it needs the" in resp.content.decode()  # which role to ask for
        else:
            assert resp.status_code == 200
            assert self.spec.shows(row) in resp.content.decode()

    def test_a_site_role_sees_its_site_only(self, client):
        a, b = SiteFactory(slug="hall-a"), SiteFactory(slug="hall-b")
        mine, theirs = self.spec.make(a), self.spec.make(b)
        client.force_login(in_site("admin" if self.spec.readers == ADMINS else "technician", a))
        resp = client.get(self.spec.url)
        if not self.spec.scoped:
            assert resp.status_code == 403  # fleet-wide only: a site's role is not enough
            return
        html = resp.content.decode()
        assert resp.status_code == 200 and self.spec.shows(mine) in html
        assert (self.spec.shows(theirs) in html) is self.spec.fleet_rows

    def test_htmx_gets_the_table_alone(self, client, users):
        """A filter typed, a sort or a page clicked: the table region comes back alone
        (a page without one answers itself whole)."""
        row = self.spec.make(SiteFactory(slug="hall-a"))
        client.force_login(users["admin"])
        resp = client.get(self.spec.url, HTTP_HX_REQUEST="true")
        html = resp.content.decode()
        assert resp.status_code == 200 and self.spec.shows(row) in html
        if self.spec.table:
            assert f'id="{self.spec.table}"' in html and "<html" not in html
        else:
            assert "<html" in html

    def test_a_page_past_the_end_shows_the_last(self, client, users):
        row = self.spec.make(SiteFactory(slug="hall-a"))
        client.force_login(users["admin"])
        resp = client.get(self.spec.url, {"page": "999"})
        assert resp.status_code == 200 and self.spec.shows(row) in resp.content.decode()
