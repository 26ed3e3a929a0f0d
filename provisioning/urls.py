from django.urls import path

from . import sensor_views, views
from .bootserver import endpoints

# Mounted at /boot/ by fleet.urls, outside the app namespace: machines, not people.
boot_urlpatterns = [
    path("ipxe", endpoints.ipxe_script, name="boot_ipxe"),
    path("chain.ipxe", endpoints.chain_script, name="boot_chain"),
    path("grub", endpoints.grub_config, name="boot_grub"),
    path("nocloud/<str:mac>/<str:part>", endpoints.nocloud, name="boot_nocloud"),
    path("callback", endpoints.callback, name="boot_callback"),
    path("overlay", endpoints.node_overlay, name="boot_overlay"),
    path("vmedia/<int:deployment>/<str:key>.iso", endpoints.boot_iso, name="boot_vmedia"),
    path("images/<str:sha256>", endpoints.image_file, name="boot_image_file"),
]

app_name = "provisioning"

urlpatterns = [
    path("images/", views.image_list, name="image_list"),
    path("images/new/", views.image_form, name="image_new"),
    path("images/<int:pk>/", views.image_detail, name="image_detail"),
    path("images/<int:pk>/edit/", views.image_form, name="image_edit"),
    path("images/<int:pk>/publish/", views.image_publish, name="image_publish"),
    path("images/<int:pk>/deprecate/", views.image_deprecate, name="image_deprecate"),
    path("nodes/<int:pk>/boot-panel/", views.node_boot_panel, name="node_boot_panel"),
    path(
        "nodes/<int:pk>/sensors-panel/",
        sensor_views.node_sensors_panel,
        name="node_sensors_panel",
    ),
    path("racks/<int:pk>/power-panel/", sensor_views.rack_power_panel, name="rack_power_panel"),
]
