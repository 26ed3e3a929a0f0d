from django.urls import path

from . import views

app_name = "health"

urlpatterns = [
    path("nodes/<int:node_pk>/health/", views.node_panel, name="node_panel"),
]
