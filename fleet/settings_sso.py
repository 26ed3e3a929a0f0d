"""Single sign-on settings (issue 36): OpenID Connect login with roles from a groups claim,
read from the environment; fleet.settings imports everything here last, then adds the sso
app (INSTALLED_APPS) and its backend (AUTHENTICATION_BACKENDS: sso.backends.OIDCBackend,
inert while single sign-on is off). All of it is off while CORRAL_OIDC_ISSUER is unset.
docs/sso.md says what each means; sso/config.py refuses a configuration that cannot work.

The OIDC_* names are mozilla-django-oidc's own settings (sso/__init__.py); the provider's
endpoints are not settings: they come from its discovery document (sso/provider.py).
"""

from __future__ import annotations

from fleet.env import env
from sso.config import check, parse_role_map

CORRAL_OIDC_ISSUER = env.str("CORRAL_OIDC_ISSUER", default="")
# What the login page's button says: "Sign in with <CORRAL_OIDC_NAME>".
CORRAL_OIDC_NAME = env.str("CORRAL_OIDC_NAME", default="single sign-on")
CORRAL_OIDC_GROUPS_CLAIM = env.str("CORRAL_OIDC_GROUPS_CLAIM", default="groups")
CORRAL_OIDC_ROLE_MAP = parse_role_map(env.str("CORRAL_OIDC_ROLE_MAP", default=""))
# A single sign-on session ends this long after its login: roles taken away at the
# provider are gone from Corral by then at the latest (each login sets them anew).
CORRAL_OIDC_SESSION_HOURS = env.float("CORRAL_OIDC_SESSION_HOURS", default=10.0)

OIDC_RP_CLIENT_ID = env.str("CORRAL_OIDC_CLIENT_ID", default="")
OIDC_RP_CLIENT_SECRET = env.str("CORRAL_OIDC_CLIENT_SECRET", default="")
OIDC_RP_SCOPES = env.str("CORRAL_OIDC_SCOPES", default="openid email profile")
OIDC_RP_SIGN_ALGO = env.str("CORRAL_OIDC_SIGN_ALGO", default="RS256")
OIDC_TIMEOUT = env.float("CORRAL_OIDC_TIMEOUT_SECONDS", default=10.0)
OIDC_USE_PKCE = True  # S256; the library's verifier is 64 characters
OIDC_USE_NONCE = True
OIDC_TOKEN_USE_BASIC_AUTH = True  # client_secret_basic, which every provider takes
OIDC_AUTHENTICATION_CALLBACK_URL = "sso:callback"
OIDC_CREATE_USER = True  # a new identity with a role gets a user (sso/accounts.py)

check(
    issuer=CORRAL_OIDC_ISSUER,
    client_id=OIDC_RP_CLIENT_ID,
    client_secret=OIDC_RP_CLIENT_SECRET,
    scopes=OIDC_RP_SCOPES,
    sign_algo=OIDC_RP_SIGN_ALGO,
    role_map=CORRAL_OIDC_ROLE_MAP,
)
