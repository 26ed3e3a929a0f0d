"""The code flow against a real OpenID provider (oidc-provider, PKCE required): who is
let in with which roles, roles following the provider at every login, refusals, and what
the audit trail keeps."""

from __future__ import annotations

import pytest
from auditlog.models import LogEntry
from axes.models import AccessAttempt
from django.contrib.auth.models import User
from django.urls import reverse

from inventory.models import SiteRole
from tests.factories import SiteFactory, user_in

pytestmark = pytest.mark.django_db


def identities():
    from sso.models import OIDCIdentity  # imported late: collected even before the app is

    return OIDCIdentity.objects


def roles_of(user: User) -> list[str]:
    fleet = user.groups.values_list("name", flat=True)
    sites = SiteRole.objects.filter(user=user).values_list("role", "site__slug")
    return sorted([*fleet, *(f"{role}@{slug}" for role, slug in sites)])


def logged_in_as(client) -> str | None:
    resp = client.get(reverse("fleet:overview"))
    return resp.context["user"].get_username() if resp.status_code == 200 else None


def test_an_admin_signs_in_at_the_provider_and_holds_the_mapped_role(client, sso_login, idp):
    landing = sso_login("ada")
    # Corral asked for the code flow with PKCE (S256), a nonce and the configured scopes.
    asked = landing.authorize_params
    assert asked["response_type"] == "code"
    assert asked["code_challenge_method"] == "S256" and len(asked["code_challenge"]) == 43
    assert asked["nonce"] and asked["state"]
    assert asked["scope"] == "openid email profile groups"
    assert asked["redirect_uri"] == "http://testserver/sso/callback/"

    assert landing.response.status_code == 302
    assert landing.response["Location"] == reverse("landing")
    ada = User.objects.get(oidc_identities__issuer=idp.issuer, oidc_identities__subject="sub-ada")
    assert (ada.username, ada.email, ada.first_name) == ("ada", "ada@example.net", "Ada")
    assert not ada.has_usable_password()  # signs in at the provider only
    assert roles_of(ada) == ["admin"]
    assert logged_in_as(client) == "ada"
    assert client.get(reverse("audit:entry_list")).status_code == 200  # an admin's page
    # The session lasts CORRAL_OIDC_SESSION_HOURS: roles are set again at the next login.
    assert 10 * 3600 - 60 < client.session.get_expiry_age() <= 10 * 3600


def test_site_roles_come_from_the_claim_and_hold_in_their_site_only(client, sso_login):
    hall_a = SiteFactory(slug="hall-a")
    SiteFactory(slug="hall-b")
    sso_login("hal")
    hal = User.objects.get(username="hal")
    assert roles_of(hal) == ["integration@hall-a", "technician@hall-a"]
    assert not hal.groups.exists()
    assert logged_in_as(client) == "hal"
    assert set(SiteRole.objects.filter(user=hal).values_list("site", flat=True)) == {hall_a.pk}


def test_a_person_whose_groups_give_no_role_is_refused_and_not_logged_in(client, sso_login):
    landing = sso_login("nemo")
    page = landing.response.content.decode()
    assert landing.response.status_code == 403
    assert "Your Test IdP account has no Corral role" in page
    assert "<strong>nemo</strong>" in page
    assert logged_in_as(client) is None
    assert client.get("/nodes/").status_code == 302  # to the login page
    assert not User.objects.filter(username="nemo").exists()  # no user for nobody
    assert not AccessAttempt.objects.exists()  # not a wrong password: no lockout count


def test_a_site_that_does_not_exist_gives_nothing(client, sso_login, caplog):
    landing = sso_login("ghost")  # ghost=technician@no-such-hall only
    assert landing.response.status_code == 403
    assert "CORRAL_OIDC_ROLE_MAP names the site 'no-such-hall', which does not exist" in (
        caplog.text
    )
    assert logged_in_as(client) is None


def test_roles_follow_the_provider_at_every_login_removals_too(client, sso_login, idp, people):
    SiteFactory(slug="hall-a")
    sso_login("max")
    user = User.objects.get(username="max")
    assert roles_of(user) == ["manager", "technician"]

    # At the provider, max leaves corral-techs and joins hall A's technicians.
    people["max"].claims["groups"] = ["corral-managers", "hallA-techs"]
    idp.set_accounts(list(people.values()))
    client.logout()
    sso_login("max")
    assert roles_of(user) == ["integration@hall-a", "manager", "technician@hall-a"]
    assert logged_in_as(client) == "max"

    # Then out of every group: refused, no role left, and the old session ended.
    people["max"].claims["groups"] = []
    idp.set_accounts(list(people.values()))
    landing = sso_login("max")
    assert landing.response.status_code == 403
    assert roles_of(user) == []
    assert logged_in_as(client) is None


def test_every_sso_login_and_role_change_is_in_the_audit_trail(client, sso_login, idp, people):
    sso_login("max")
    people["max"].claims["groups"] = ["corral-managers"]
    idp.set_accounts(list(people.values()))
    client.logout()
    sso_login("max")
    user = User.objects.get(username="max")
    entries = LogEntry.objects.get_for_object(user).order_by("pk")
    logins = [e for e in entries if e.action == LogEntry.Action.ACCESS]
    assert [e.changes["roles"] for e in logins] == [
        ["", "manager, technician"],
        ["manager, technician", "manager"],
    ]
    assert {e.additional_data["actor"] for e in entries} == {"sso:max"}
    assert logins[0].additional_data["sso"] == {
        "issuer": idp.issuer,
        "subject": "sub-max",
        "outcome": "login",
    }
    groups = [e.changes["groups"] for e in entries if "groups" in (e.changes or {})]
    assert {"type": "m2m", "operation": "delete", "objects": ["technician"]} in groups
    assert entries.filter(action=LogEntry.Action.CREATE).count() == 1  # the new user


def test_site_role_changes_are_audited_one_by_one(client, sso_login, idp, people):
    SiteFactory(slug="hall-a")
    sso_login("hal")
    people["hal"].claims["groups"] = []
    idp.set_accounts(list(people.values()))
    sso_login("hal")
    site_roles = LogEntry.objects.filter(content_type__model="siterole").order_by("pk")
    assert [(e.action, e.additional_data["actor"]) for e in site_roles] == [
        (LogEntry.Action.CREATE, "sso:hal"),
        (LogEntry.Action.CREATE, "sso:hal"),
        (LogEntry.Action.DELETE, "sso:hal"),
        (LogEntry.Action.DELETE, "sso:hal"),
    ]
    last = LogEntry.objects.filter(action=LogEntry.Action.ACCESS).latest("pk")
    assert last.additional_data["sso"]["outcome"] == "refused: no role"


def test_a_local_account_of_the_same_name_and_email_is_not_taken_over(client, sso_login):
    local = user_in("technician", "ada")  # a break-glass account, say
    local.email = "ada@example.net"
    local.save()
    sso_login("ada")
    assert logged_in_as(client) == "ada-2"
    assert roles_of(User.objects.get(username="ada-2")) == ["admin"]
    local.refresh_from_db()
    assert roles_of(local) == ["technician"] and not local.oidc_identities.exists()
    client.logout()
    # The local account's password login still works (break-glass).
    resp = client.post(reverse("login"), {"username": "ada", "password": "pw-for-tests-123"})
    assert resp.status_code == 302
    assert logged_in_as(client) == "ada"


def test_the_same_sub_is_the_same_user_whatever_its_name_and_email(client, sso_login, idp, people):
    sso_login("ada")
    first = User.objects.get(username="ada")
    people["ada"].claims.update(preferred_username="ada.l", email="ada.l@example.org")
    idp.set_accounts(list(people.values()))
    client.logout()
    sso_login("ada")
    first.refresh_from_db()
    assert logged_in_as(client) == "ada"  # the user name is kept, the e-mail follows
    assert first.email == "ada.l@example.org"
    assert identities().count() == 1 and User.objects.count() == 1


def test_a_disabled_user_is_refused_and_a_session_of_one_ends(client, sso_login):
    sso_login("ada")
    User.objects.filter(username="ada").update(is_active=False)
    assert logged_in_as(client) is None  # the open session is no longer let in
    landing = sso_login("ada")
    assert landing.response.status_code == 403
    assert "Your Corral account is disabled" in landing.response.content.decode()


def test_where_the_person_was_going_is_kept(client, sso_login):
    landing = sso_login("ada", next_url="/nodes/")
    assert landing.response["Location"] == "/nodes/"
    landing = sso_login("ada", next_url="https://elsewhere.example.net/")
    assert landing.response["Location"] == reverse("landing")  # not an open redirect


def test_a_callback_replayed_is_refused(client, sso_login):
    landing = sso_login("ada")
    client.logout()
    callback = landing.response.wsgi_request.get_full_path()
    resp = client.get(callback)
    assert resp.status_code == 400
    assert "did not complete" in resp.content.decode()
    assert logged_in_as(client) is None
