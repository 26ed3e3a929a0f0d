from rest_framework.routers import SimpleRouter

from . import views

router = SimpleRouter()
router.register("webhooks", views.WebhookViewSet, basename="webhook")

urlpatterns = router.urls
