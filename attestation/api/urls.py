from django.urls import path
from rest_framework.routers import SimpleRouter

from . import views

router = SimpleRouter()
router.register("attestations", views.AttestationViewSet, basename="attestation")
router.register(
    "firmware-references", views.FirmwareReferenceViewSet, basename="firmware-reference"
)

urlpatterns = [
    path("nodes/<int:pk>/tpm/forget/", views.ForgetTPMView.as_view(), name="node-tpm-forget"),
    *router.urls,
]
