from rest_framework.routers import SimpleRouter

from . import views

router = SimpleRouter()
router.register("gate-profiles", views.GateProfileViewSet)
router.register("gate-runs", views.GateRunViewSet)
router.register("check-results", views.CheckResultViewSet)

urlpatterns = router.urls
