from django.urls import path
from rest_framework.routers import SimpleRouter

from . import views

router = SimpleRouter()
router.register("drift/events", views.DriftEventViewSet, basename="drift-event")
router.register("drift", views.DriftViewSet, basename="drift")
router.register("baselines", views.BaselineViewSet)

urlpatterns = [
    path("nodes/<int:pk>/drift/", views.NodeDriftView.as_view(), name="node-drift"),
    *router.urls,
]
