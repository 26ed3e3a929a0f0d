from rest_framework.routers import SimpleRouter

from . import views

router = SimpleRouter()
router.register("rack-templates", views.RackTemplateViewSet, basename="rack-template")
router.register("rack-layouts", views.RackLayoutViewSet, basename="rack-layout")

urlpatterns = router.urls
