"""manage.py corral_user: a browser user with a role, fleet-wide or in one site."""

import io

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client

from inventory.permissions import ACT, can


def logs_in(username: str, password: str) -> User:
    """Through the login page, as the browser user will."""
    resp = Client().post("/login/", {"username": username, "password": password})
    assert resp.status_code == 302, resp.content.decode()[:500]
    return User.objects.get(username=username)


def run(*args, stdin: str | None = None, monkeypatch=None) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    if stdin is not None:
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    call_command("corral_user", *args, stdout=out, stderr=err)
    return out.getvalue().strip(), err.getvalue()


@pytest.mark.django_db
def test_creates_a_fleet_wide_technician_with_a_printed_password():
    password, err = run("tina", "--group", "technician", "--email", "tina@example.net")
    assert "created tina: technician fleet-wide" in err
    user = logs_in("tina", password)
    assert user is not None and user.email == "tina@example.net"
    assert can(user, ACT) and not can(user, "write")


@pytest.mark.django_db
def test_site_role_and_password_from_stdin(monkeypatch, site):
    from tests.factories import SiteFactory

    other = SiteFactory(slug="dc2", name="DC two")
    out, err = run(
        "hal",
        "--group",
        "technician",
        "--site",
        "dc1",
        "--password-stdin",
        stdin="a-long-pass-phrase-9\n",
        monkeypatch=monkeypatch,
    )
    assert out == "" and "created hal: technician in dc1" in err  # nothing printed to stdout
    user = logs_in("hal", "a-long-pass-phrase-9")
    assert can(user, ACT, site.pk) and not can(user, ACT, other.pk) and not can(user, ACT)


@pytest.mark.django_db
def test_updates_an_existing_user_keeping_its_roles(monkeypatch):
    run("mo", "--group", "manager")
    password, err = run("mo", "--group", "technician")
    assert "updated mo: technician fleet-wide" in err
    user = logs_in("mo", password)
    assert sorted(user.groups.values_list("name", flat=True)) == ["manager", "technician"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["x", "--group", "operator"], "Unknown role 'operator': give one of manager, technician"),
        (["x", "--group", "admin", "--site", "nope"], "No site 'nope' (sites: none yet)."),
        (["  ", "--group", "admin"], "username must not be empty"),
    ],
)
def test_refusals_say_why(args, message):
    with pytest.raises(CommandError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run(*args)


@pytest.mark.django_db
def test_a_weak_password_is_refused(monkeypatch):
    with pytest.raises(CommandError, match="Password refused"):
        run("x", "--group", "admin", "--password-stdin", stdin="123\n", monkeypatch=monkeypatch)
