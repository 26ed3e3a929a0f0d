from django.urls import path

from .views import baselines, matrix, node, skew

app_name = "drift"

urlpatterns = [
    path("drift/", matrix.matrix, name="matrix"),
    path("drift/export.csv", matrix.export_csv, name="export"),
    path("drift/reimage/", matrix.reimage, name="reimage"),
    path("drift/converge/", matrix.converge, name="converge"),
    path("drift/skew/", skew.skew, name="skew"),
    path("drift/nodes/<int:node_pk>/", node.node_panel, name="node_panel"),
    path("drift/baselines/", baselines.baseline_list, name="baseline_list"),
    path("drift/baselines/new/", baselines.baseline_create, name="baseline_create"),
    path("drift/baselines/<int:pk>/", baselines.baseline_detail, name="baseline_detail"),
    path("drift/baselines/<int:pk>/edit/", baselines.baseline_edit, name="baseline_edit"),
    path("drift/baselines/<int:pk>/delete/", baselines.baseline_delete, name="baseline_delete"),
]
