from rest_framework.routers import SimpleRouter

from . import views

router = SimpleRouter()
router.register("campaigns", views.CampaignViewSet, basename="campaign")

urlpatterns = router.urls
