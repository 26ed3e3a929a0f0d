from django.urls import path

from . import bulk_bar, views, views_activity, views_cancel, views_edit, views_places

app_name = "inventory"

urlpatterns = [
    path("nodes/", views.node_list, name="node_list"),
    path("nodes/bulk/", bulk_bar.node_bulk, name="node_bulk"),
    path("nodes/bulk/<int:pk>/", bulk_bar.node_bulk_status, name="node_bulk_status"),
    path("nodes/import/", views.node_import, name="node_import"),
    path("nodes/import/<int:pk>/", views.node_import_status, name="node_import_status"),
    path("nodes/import/template.csv", views.import_template, name="node_import_template"),
    path("nodes/<int:pk>/", views.node_detail, name="node_detail"),
    path("nodes/<int:pk>/edit/", views_edit.node_edit, name="node_edit"),
    path("nodes/<int:pk>/bmc/edit/", views_edit.bmc_edit, name="bmc_edit"),
    path("nodes/<int:pk>/interfaces/new/", views_edit.interface_edit, name="interface_new"),
    path(
        "nodes/<int:pk>/interfaces/<int:nic>/edit/",
        views_edit.interface_edit,
        name="interface_edit",
    ),
    path(
        "nodes/<int:pk>/interfaces/<int:nic>/delete/",
        views_edit.interface_delete,
        name="interface_delete",
    ),
    path("nodes/<int:pk>/oob/", views.node_oob, name="node_oob"),
    path("nodes/<int:pk>/actions/<slug:name>/", views.node_action, name="node_action"),
    path("operations/<int:pk>/cancel/", views_cancel.operation_cancel, name="operation_cancel"),
    path("activity/", views_activity.activity_list, name="activity"),
    path("racks/", views.rack_list, name="rack_list"),
    path("racks/new/", views_places.rack_edit, name="rack_new"),
    path("racks/<int:pk>/edit/", views_places.rack_edit, name="rack_edit"),
    path("sites/new/", views_places.site_edit, name="site_new"),
    path("sites/<int:pk>/edit/", views_places.site_edit, name="site_edit"),
    path("racks/<int:pk>/", views.rack_detail, name="rack_detail"),
    path("racks/<int:pk>/actions/<slug:name>/", views.rack_action, name="rack_action"),
]
