from django.urls import path

from . import views
from .bootserver import endpoints

# Mounted at /boot/ by fleet.urls, outside the app namespace: machines, not people.
boot_urlpatterns = [
    path("ipxe", endpoints.ipxe_script, name="boot_ipxe"),
    path("chain.ipxe", endpoints.chain_script, name="boot_chain"),
    path("grub", endpoints.grub_config, name="boot_grub"),
    path("nocloud/<str:mac>/<str:part>", endpoints.nocloud, name="boot_nocloud"),
    path("callback", endpoints.callback, name="boot_callback"),
]

app_name = "provisioning"

urlpatterns = [
    path("images/", views.image_list, name="image_list"),
    path("nodes/<int:pk>/boot-panel/", views.node_boot_panel, name="node_boot_panel"),
]
