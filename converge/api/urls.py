from rest_framework.routers import SimpleRouter

from . import views

router = SimpleRouter()
router.register("firmware-artifacts", views.FirmwareArtifactViewSet, basename="firmware-artifact")

router.register("baseline-artifacts", views.BaselineArtifactViewSet, basename="baseline-artifact")

urlpatterns = router.urls
