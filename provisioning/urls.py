from django.urls import path

from . import pages, views

boot_urlpatterns = [
    path("ipxe", views.ipxe_script, name="boot_ipxe"),
    path("chain.ipxe", views.chain_script, name="boot_chain"),
    path("grub", views.grub_config, name="boot_grub"),
    path("nocloud/<str:mac>/<str:part>", views.nocloud, name="boot_nocloud"),
    path("callback", views.callback, name="boot_callback"),
]

app_name = "provisioning"

urlpatterns = [
    path("images/", pages.image_list, name="image_list"),
    path("nodes/<int:pk>/boot-panel/", pages.node_boot_panel, name="node_boot_panel"),
]
