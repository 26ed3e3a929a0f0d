from django.urls import path

from . import endpoints, views

# Mounted at /boot/ by fleet.urls next to provisioning's boot endpoints: machines call it.
boot_urlpatterns = [
    path("attest", endpoints.challenge, name="boot_attest"),
]

app_name = "attestation"

urlpatterns = [
    path("attestations/<int:pk>/", views.attestation_detail, name="attestation_detail"),
    path("attestations/<int:pk>/sign-off/", views.sign_off, name="sign_off"),
    path("nodes/<int:pk>/tpm/forget/", views.forget_tpm, name="forget_tpm"),
    path("nodes/<int:pk>/attestation-panel/", views.node_panel, name="node_panel"),
]
