from django.urls import path
from rest_framework.routers import SimpleRouter

from . import views

router = SimpleRouter()
router.register("images", views.ImageViewSet, basename="image")
router.register("deployments", views.DeploymentViewSet)
router.register("boot-requests", views.BootRequestViewSet)
router.register("subnets", views.SubnetViewSet)

urlpatterns = [
    *router.urls,
    path("dhcp/<str:fmt>/", views.DHCPExportView.as_view(), name="dhcp-export"),
    path("exports/slurm/<str:part>/", views.SlurmExportView.as_view(), name="slurm-export"),
]
