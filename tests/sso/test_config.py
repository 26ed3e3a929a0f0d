"""The single sign-on settings: the role map's syntax, what start-up refuses (naming the
bad entry or setting), and what a groups claim maps to."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from sso.claims import granted, groups_of, roles_from_claims
from sso.config import RoleGrant, check, parse_role_map

ROOT = Path(__file__).resolve().parents[2]


def test_the_role_map_gives_fleet_wide_and_site_roles():
    grants = parse_role_map(
        " corral-admins=admin, corral-techs = technician ,hallA-techs=technician@hall-a,"
    )
    assert grants == (
        RoleGrant("corral-admins", "admin", None),
        RoleGrant("corral-techs", "technician", None),
        RoleGrant("hallA-techs", "technician", "hall-a"),
    )
    assert parse_role_map("") == ()
    assert [str(g) for g in grants] == [
        "corral-admins=admin",
        "corral-techs=technician",
        "hallA-techs=technician@hall-a",
    ]


def test_a_group_may_give_several_roles_and_a_repeat_counts_once():
    grants = parse_role_map("ops=manager,ops=technician@dc1,ops=manager")
    assert grants == (RoleGrant("ops", "manager", None), RoleGrant("ops", "technician", "dc1"))


def test_semicolons_separate_entries_whose_groups_hold_commas_and_equals():
    dn = "cn=corral-admins,ou=groups,dc=example,dc=net"
    grants = parse_role_map(f"{dn}=admin; cn=techs,ou=groups=technician@dc1")
    assert grants == (
        RoleGrant(dn, "admin", None),
        RoleGrant("cn=techs,ou=groups", "technician", "dc1"),
    )


@pytest.mark.parametrize(
    "text, entry, why",
    [
        ("admins=admin,techs", "'techs'", "is not GROUP=ROLE"),
        ("=admin", "'=admin'", "is not GROUP=ROLE"),
        ("admins=root", "'admins=root'", "names the role 'root'"),
        ("techs=Technician", "'techs=Technician'", "names the role 'Technician'"),
        ("techs=technician@", "'techs=technician@'", "names the site ''"),
        ("techs=technician@hall a", "'techs=technician@hall a'", "no site slug"),
    ],
)
def test_a_bad_entry_is_refused_by_name(text, entry, why):
    with pytest.raises(ImproperlyConfigured) as refused:
        parse_role_map(text)
    message = str(refused.value)
    assert message.startswith(f"CORRAL_OIDC_ROLE_MAP: the entry {entry} ")
    assert why in message


GOOD = {
    "issuer": "https://login.example.net/realms/corral",
    "client_id": "corral",
    "client_secret": "s3cret",
    "scopes": "openid email profile",
    "sign_algo": "RS256",
    "role_map": parse_role_map("admins=admin"),
}


@pytest.mark.parametrize(
    "change, says",
    [
        ({"issuer": "http://login.example.net"}, "must be https"),
        ({"issuer": "login.example.net"}, "is not an http(s) URL"),
        ({"issuer": "https://login.example.net/?tenant=1"}, "has a query or fragment"),
        ({"client_secret": ""}, "CORRAL_OIDC_CLIENT_SECRET not"),
        (
            {"client_id": "", "client_secret": ""},
            "CORRAL_OIDC_CLIENT_ID and CORRAL_OIDC_CLIENT_SECRET",
        ),
        ({"scopes": "email profile"}, "must include openid"),
        ({"sign_algo": "HS256"}, "CORRAL_OIDC_SIGN_ALGO 'HS256'"),
        ({"role_map": ()}, "CORRAL_OIDC_ROLE_MAP is empty"),
    ],
)
def test_start_up_refuses_a_configuration_that_cannot_work(change, says):
    with pytest.raises(ImproperlyConfigured, match=None) as refused:
        check(**{**GOOD, **change})
    assert says in str(refused.value)


def test_a_good_configuration_and_no_issuer_pass():
    check(**GOOD)
    check(**{**GOOD, "issuer": "http://localhost:9000"})  # loopback: a test provider
    check(**{**GOOD, "issuer": "http://127.0.0.1:9000/"})
    check(**{**GOOD, "issuer": "", "client_id": "", "role_map": ()})  # off: nothing to check


def start_with(env: dict[str, str]) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("CORRAL_OIDC_")}
    return subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env={**clean, "CORRAL_ENV_FILE": "/nonexistent", **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_corral_does_not_start_with_a_bad_role_map_and_says_which_entry():
    result = start_with(
        {
            "CORRAL_OIDC_ISSUER": "https://login.example.net",
            "CORRAL_OIDC_CLIENT_ID": "corral",
            "CORRAL_OIDC_CLIENT_SECRET": "s3cret",
            "CORRAL_OIDC_ROLE_MAP": "corral-admins=admin,corral-techs=tech",
        }
    )
    assert result.returncode != 0
    assert "ImproperlyConfigured: CORRAL_OIDC_ROLE_MAP: the entry 'corral-techs=tech'" in (
        result.stderr
    )


@pytest.mark.slow  # 4 s on its own (docs/testing.md: Markers)
def test_corral_starts_with_single_sign_on_configured_and_without():
    configured = {
        "CORRAL_OIDC_ISSUER": "https://login.example.net",
        "CORRAL_OIDC_CLIENT_ID": "corral",
        "CORRAL_OIDC_CLIENT_SECRET": "s3cret",
        "CORRAL_OIDC_ROLE_MAP": "corral-admins=admin",
    }
    for env in (configured, {}):
        result = start_with(env)
        assert result.returncode == 0, result.stderr


CLAIMS_MAP = parse_role_map(
    "corral-admins=admin,corral-techs=technician,hallA-techs=technician@hall-a,"
    "hallA-techs=integration@hall-a"
)


def test_the_groups_claim_gives_the_roles_of_every_group_named():
    claims = {"sub": "1", "groups": ["corral-techs", "hallA-techs", "canteen"]}
    roles = roles_from_claims(claims, "groups", CLAIMS_MAP)
    assert roles.fleet == {"technician"}
    assert roles.sites == {("technician", "hall-a"), ("integration", "hall-a")}
    assert roles.names() == ["integration@hall-a", "technician", "technician@hall-a"]
    assert roles


def test_no_mapped_group_gives_no_role():
    assert not granted(["canteen", "Corral-Admins"], CLAIMS_MAP)  # names compared exactly
    assert not roles_from_claims({"sub": "1"}, "groups", CLAIMS_MAP)


def test_the_claim_may_be_a_string_nested_or_namespaced():
    assert groups_of({"groups": "corral-admins"}, "groups") == ["corral-admins"]
    keycloak = {"realm_access": {"roles": ["corral-admins", "offline_access"]}}
    assert groups_of(keycloak, "realm_access.roles") == ["corral-admins", "offline_access"]
    auth0 = {"https://corral.example.net/groups": ["ops"]}
    assert groups_of(auth0, "https://corral.example.net/groups") == ["ops"]
    assert groups_of({"realm_access": "x"}, "realm_access.roles") == []


def test_a_claim_of_another_shape_gives_no_group(caplog):
    assert groups_of({"groups": {"admin": True}}, "groups") == []
    assert groups_of({"groups": ["ok", 3]}, "groups") == []
    assert "not a list of strings" in caplog.text
