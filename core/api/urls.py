from rest_framework.routers import DefaultRouter

from . import views

router = DefaultRouter()
router.register("webhooks", views.WebhookViewSet, basename="webhook")

urlpatterns = router.urls
