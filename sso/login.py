"""The login page: Django's, with a "Sign in with <CORRAL_OIDC_NAME>" link beside the
password form while single sign-on is configured (the password form stays: break-glass
accounts). Imports no model, so the page does not depend on the sso app."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.urls import reverse


def button(next_url: str = "") -> dict[str, str] | None:
    if not settings.CORRAL_OIDC_ISSUER:
        return None
    query = f"?{urlencode({'next': next_url})}" if next_url else ""
    return {"href": reverse("sso:login") + query, "name": settings.CORRAL_OIDC_NAME}


class LoginView(auth_views.LoginView):
    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["sso"] = button(context.get("next", ""))
        return context
