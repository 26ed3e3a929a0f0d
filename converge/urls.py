from django.urls import path

from . import views

app_name = "converge"
urlpatterns = [
    path(
        "artifacts/firmware/<str:sha256>/<str:name>",
        views.download,
        name="download",
    ),
]
