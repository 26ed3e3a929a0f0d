from rest_framework.routers import SimpleRouter

from . import views

router = SimpleRouter()
router.register("firmware-artifacts", views.FirmwareArtifactViewSet, basename="firmware-artifact")

urlpatterns = router.urls
