from django.urls import path
from rest_framework.routers import SimpleRouter

from . import views

router = SimpleRouter()
router.register("health-events", views.HealthEventViewSet, basename="health-event")
router.register("health-policies", views.HealthPolicyViewSet, basename="health-policy")

urlpatterns = [
    path(
        "nodes/<int:pk>/health-events/",
        views.NodeHealthEventsView.as_view(),
        name="node-health-events",
    ),
    path("health-breaker/", views.BreakerView.as_view(), name="health-breaker"),
    path("health-breaker/close/", views.BreakerCloseView.as_view(), name="health-breaker-close"),
    *router.urls,
]
