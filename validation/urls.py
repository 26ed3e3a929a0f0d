from django.urls import path

from . import views

app_name = "validation"

urlpatterns = [
    path("nodes/<int:pk>/gates-panel/", views.node_gates_panel, name="node_gates_panel"),
    path("gate-runs/<int:pk>/cancel/", views.cancel_run, name="cancel_run"),
    path("check-results/<int:pk>/", views.check_output, name="check_output"),
]
