from django.urls import path
from rest_framework.routers import SimpleRouter

from . import views

router = SimpleRouter()
router.register("reports/prices", views.GpuPriceViewSet, basename="gpu-price")

urlpatterns = [
    path("reports/gpu-hours/", views.GpuHoursView.as_view(), name="report-gpu-hours"),
    path("reports/rack-to-revenue/", views.RackToRevenueView.as_view(), name="report-racks"),
    path("reports/yield/", views.YieldView.as_view(), name="report-yield"),
    path("reports/reliability/", views.ReliabilityView.as_view(), name="report-reliability"),
    path("reports/revenue/", views.RevenueView.as_view(), name="report-revenue"),
    path("reports/summary/", views.SummaryView.as_view(), name="report-summary"),
    *router.urls,
]
