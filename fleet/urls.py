from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from attestation.urls import boot_urlpatterns as attest_urlpatterns
from metrics import views as metrics_views
from provisioning.urls import boot_urlpatterns
from sso import login as sso_login

from . import apiroot, tokens, views

api_patterns = [
    # One root for the whole API; the apps' routers make none (SimpleRouter).
    path("", apiroot.APIRoot.as_view(), name="api-root"),
    path("", include("inventory.api.urls")),
    path("", include("provisioning.api.urls")),
    path("", include("validation.api.urls")),
    path("", include("rma.api.urls")),
    path("", include("drift.api.urls")),
    path("", include("reports.api.urls")),
    path("", include("health.api.urls")),
    path("", include("webhooks.api.urls")),
    path("", include("audit.api.urls")),
    path("", include("day2.api.urls")),
    path("", include("attestation.api.urls")),
    path("", include("converge.api.urls")),
    path("", include("fleetfile.api.urls")),
    path("", include("trays.api.urls")),
    path("", include("consoles.api.urls")),
    path("auth/token/rotate/", tokens.RotateToken.as_view(), name="token-rotate"),
]

urlpatterns = [
    path("", views.overview, name="home"),
    path("fleet/", include(([path("", views.overview, name="overview")], "fleet"))),
    path("landing/", views.landing, name="landing"),
    path("login/", sso_login.LoginView.as_view(), name="login"),  # + single sign-on
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("sso/", include("sso.urls")),  # single sign-on (docs/sso.md); 404 while off
    path("", include("inventory.urls")),
    path("", include("provisioning.urls")),
    path("", include("validation.urls")),
    path("", include("rma.urls")),
    path("", include("drift.urls")),
    path("", include("reports.urls")),
    path("", include("health.urls")),
    path("", include("audit.urls")),
    path("", include("day2.urls")),
    path("", include("attestation.urls")),
    path("", include("converge.urls")),
    path("", include("trays.urls")),
    path("", include("consoles.urls")),
    path("api/v1/", include((api_patterns, "api"))),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves Swagger UI's start-up script as a file: no inline script (CSP).
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="api-docs"),
    path("boot/", include(boot_urlpatterns)),
    path("boot/", include(attest_urlpatterns)),
    path("healthz", views.healthz, name="healthz"),
    path("metrics", metrics_views.scrape, name="metrics"),  # docs/metrics.md
    path("favicon.ico", views.favicon, name="favicon"),
    path("admin/", admin.site.urls),
]

handler404 = "fleet.views.page_not_found"
handler500 = "fleet.views.server_error"
