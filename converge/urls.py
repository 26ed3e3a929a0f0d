from django.urls import path

from . import views

app_name = "converge"
urlpatterns = [
    path(
        "artifacts/firmware/<str:sha256>/<str:name>",
        views.download,
        name="download",
    ),
    path("baselines/<int:baseline_pk>/artifacts/", views.baseline_panel, name="baseline_panel"),
    path("baselines/<int:baseline_pk>/artifacts/name/", views.name_artifact, name="name_artifact"),
]
