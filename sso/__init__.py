"""Single sign-on: operators log in with their company's identity provider over OpenID
Connect (authorization code + PKCE); Corral's roles come from a groups claim (docs/sso.md).

The protocol is mozilla-django-oidc's (state, nonce, PKCE, the token exchange, the ID
token's signature against the provider's JWKS, the userinfo call): a small, widely used
library written for exactly Django's login, whose backend and views are classes meant to
be subclassed. Authlib's Django client does as much but leaves the views, the session
bookkeeping and the user lookup to us. What is Corral's own here is glue:

- provider.py   the provider's endpoints from its discovery document (fetched when a login
                needs them, never at start-up, so a provider that is down does not stop
                the break-glass password login);
- config.py     the settings, parsed and refused at start-up (fleet/settings_sso.py);
- claims.py     which roles a groups claim gives (pure);
- backends.py   the library's backend, made to check the ID token's issuer and audience,
                identify people by (issuer, sub), never by e-mail;
- accounts.py   the Django user of an identity, and its roles set to exactly what the
                claim gives on every login, audited;
- views.py      the library's views, with the refusal page (no role, disabled, failed);
- login.py      the login page's "Sign in with ..." button (fleet/urls.py serves it);
- models.py     OIDCIdentity: (issuer, sub) -> user.
"""
