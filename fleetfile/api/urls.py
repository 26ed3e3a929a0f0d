from rest_framework.routers import SimpleRouter

from . import views

router = SimpleRouter()
router.register("fleet", views.FleetViewSet, basename="fleet")

urlpatterns = router.urls
