from django.urls import path

from . import views

app_name = "sso"
urlpatterns = [
    path("login/", views.Login.as_view(), name="login"),
    # The redirect URI to register at the provider: https://<corral>/sso/callback/
    path("callback/", views.Callback.as_view(), name="callback"),
]
