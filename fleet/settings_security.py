"""Security settings (issue #16): TLS and cookies, login lockout, API tokens and the Content
Security Policy, read from the environment like the rest of fleet.settings, which imports
everything here. docs/security.md says what an operator sets and why."""

from __future__ import annotations

from datetime import timedelta

from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from core.clientaddr import LOOPBACK, parse_networks
from fleet.env import env


def networks_setting(name: str, default: str = "") -> tuple[str, ...]:
    """A setting of comma-separated addresses or networks; start-up stops at a bad entry
    (fleet.settings_egress reads its networks with it too)."""
    try:
        return parse_networks(env.str(name, default=default), name)
    except ValueError as exc:
        raise ImproperlyConfigured(str(exc)) from None


DEBUG = env.bool("DEBUG", default=False)

# --- TLS and cookies ----------------------------------------------------------------------
# "TLS configured" is either Django redirecting to https itself or a TLS-terminating proxy
# in front (BEHIND_TLS_PROXY: trust its X-Forwarded-Proto). Either way the cookies carry
# Secure, so a session or CSRF cookie is never sent over plain http.
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=False)
BEHIND_TLS_PROXY = env.bool("BEHIND_TLS_PROXY", default=False)
# The proxies whose X-Forwarded-For is believed (core.clientaddr): addresses or networks,
# comma-separated. Unset: loopback behind a TLS proxy (one on the same host), else none;
# a request from anywhere else counts as coming from its peer, whatever its header says.
CORRAL_TRUSTED_PROXIES = networks_setting(
    "CORRAL_TRUSTED_PROXIES", ",".join(LOOPBACK) if BEHIND_TLS_PROXY else ""
)
TLS_CONFIGURED = SECURE_SSL_REDIRECT or BEHIND_TLS_PROXY
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if BEHIND_TLS_PROXY else None
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=TLS_CONFIGURED)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SESSION_COOKIE_HTTPONLY = True  # Django's default, said out loud: scripts never read it
SESSION_COOKIE_SAMESITE = "Lax"  # links from a ticket into Corral keep the session
CSRF_COOKIE_SAMESITE = "Lax"
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE_HSTS_SECONDS > 0
SECURE_HSTS_PRELOAD = SECURE_HSTS_SECONDS > 0
X_FRAME_OPTIONS = "DENY"

# --- Login and token lockout (django-axes) ------------------------------------------------
# A user name with this many failed logins (the login page, the admin) from one client
# address inside the cool-off is refused there, even with the right password, until the
# cool-off has passed since its last failure; bad API tokens count under a name of their
# own (fleet.authn.TOKEN_GUESSES), so per address. fleet.authn says why and what it costs.
# `manage.py axes_reset_ip ADDRESS` / `axes_reset_username NAME` lift it.
AXES_FAILURE_LIMIT = env.int("CORRAL_LOCKOUT_FAILURES", default=10)
AXES_COOLOFF_MINUTES = env.int("CORRAL_LOCKOUT_MINUTES", default=15)
AXES_COOLOFF_TIME = timedelta(minutes=AXES_COOLOFF_MINUTES)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_USERNAME_CALLABLE = "fleet.authn.lockout_username"
AXES_LOCKOUT_CALLABLE = "fleet.authn.lockout_response"
AXES_CLIENT_IP_CALLABLE = "core.clientaddr.client_address"
AXES_HTTP_RESPONSE_CODE = 429
AXES_RESET_ON_SUCCESS = False  # a known account's login must not wipe a guesser's count
AXES_VERBOSE = False

# --- API tokens (django-rest-knox) --------------------------------------------------------
# Stored as a SHA-512 digest (the key is shown once), refused after CORRAL_TOKEN_TTL_DAYS;
# `manage.py corral_token NAME --rotate` or POST /api/v1/auth/token/rotate/ replaces them.
CORRAL_TOKEN_TTL_DAYS = env.int("CORRAL_TOKEN_TTL_DAYS", default=90)
REST_KNOX = {
    "TOKEN_TTL": timedelta(days=CORRAL_TOKEN_TTL_DAYS) if CORRAL_TOKEN_TTL_DAYS > 0 else None,
    "AUTH_HEADER_PREFIX": "Token",  # integrators' `Authorization: Token <key>` keeps working
    "AUTO_REFRESH": False,  # a stolen key must not live forever by being used
}

# --- Content Security Policy (django-csp) -------------------------------------------------
# Scripts only from Corral itself (no inline scripts or handlers: static/js/corral.js binds
# them); styles allow inline because Plotly and the progress bars set style attributes.
# CORRAL_CSP_REPORT_URI: where browsers send violation reports (empty: nowhere).
_REPORT_URI = env.str("CORRAL_CSP_REPORT_URI", default="")
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF, "'unsafe-inline'"],
        "img-src": [SELF, "data:"],
        "font-src": [SELF, "data:"],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "frame-ancestors": [NONE],
        "form-action": [SELF],
        **({"report-uri": [_REPORT_URI]} if _REPORT_URI else {}),
    },
}

# --- Unauthenticated boot requests (provisioning/bootserver/records.py) ---------------------
# /boot/ipxe answers anyone; what it records of MACs Corral does not know is bounded per
# web process: each unknown MAC once per window, and at most so many per asking address.
CORRAL_BOOT_UNKNOWN_WINDOW_SECONDS = env.float("CORRAL_BOOT_UNKNOWN_WINDOW_SECONDS", default=300.0)
CORRAL_BOOT_UNKNOWN_PER_SOURCE = env.int("CORRAL_BOOT_UNKNOWN_PER_SOURCE", default=20)
# A phone-home is accepted only from an address of the node's interfaces (or from one of
# these: a NAT or relay between the nodes and Corral; provisioning.bootserver.origin).
CORRAL_PHONE_HOME_RELAYS = networks_setting("CORRAL_PHONE_HOME_RELAYS")
