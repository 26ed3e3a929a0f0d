from django.urls import path
from rest_framework.routers import SimpleRouter

from . import views

router = SimpleRouter()
router.register("rma-cases", views.CaseViewSet, basename="rma-case")

urlpatterns = [
    # A file name, so no trailing slash (the router adds one to everything it serves).
    path(
        "rma-cases/<int:pk>/evidence.tar.gz",
        views.CaseViewSet.as_view({"get": "evidence"}),
        name="rma-case-evidence",
    ),
    *router.urls,
]
