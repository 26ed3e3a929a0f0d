from django.urls import path
from rest_framework.routers import SimpleRouter

from . import views
from .facts import NodeFactsView

router = SimpleRouter()
router.register("sites", views.SiteViewSet)
router.register("racks", views.RackViewSet)
router.register("nodes", views.NodeViewSet)
router.register("interfaces", views.InterfaceViewSet)
router.register("events", views.LifecycleEventViewSet)
router.register("operations", views.OperationViewSet)

urlpatterns = [
    path("nodes/<int:pk>/facts/", NodeFactsView.as_view(), name="node-facts"),
    *router.urls,
]
