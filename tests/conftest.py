import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from inventory.permissions import ROLES
from tests.factories import NodeFactory, RackFactory, SiteFactory, user_in


@pytest.fixture
def site(db):
    return SiteFactory(name="DC one", slug="dc1")


@pytest.fixture
def rack(site):
    return RackFactory(site=site, name="r01", u_height=42)


@pytest.fixture
def node(rack):
    return NodeFactory(rack=rack, rack_unit=1, u_height=4)


@pytest.fixture
def users(db):
    return {role: user_in(role) for role in ROLES}


@pytest.fixture
def api(users):
    """api("technician") -> an APIClient authenticated with that role's token."""

    def make(role: str | None) -> APIClient:
        client = APIClient()
        if role:
            token, _ = Token.objects.get_or_create(user=users[role])
            client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
        return client

    return make


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # PBKDF2's deliberate slowness costs seconds per test user and proves nothing here.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


from tests.workers import celery_worker  # noqa: E402,F401  (fixture)
