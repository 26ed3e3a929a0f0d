from rest_framework.routers import DefaultRouter

from . import views

router = DefaultRouter()
router.register("sites", views.SiteViewSet)
router.register("racks", views.RackViewSet)
router.register("nodes", views.NodeViewSet)
router.register("interfaces", views.InterfaceViewSet)
router.register("events", views.LifecycleEventViewSet)
router.register("operations", views.OperationViewSet)

urlpatterns = router.urls
