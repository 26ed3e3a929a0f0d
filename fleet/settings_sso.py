"""Single sign-on settings (issue 36): OpenID Connect login, read from the environment;
fleet.settings imports everything here last, so it may extend what it set before."""

from __future__ import annotations
