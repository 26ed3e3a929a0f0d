from django.urls import path

from . import views

app_name = "reports"

urlpatterns = [
    path("dashboards/", views.dashboard, name="dashboards"),
    path("dashboards/<slug:chart>.csv", views.chart_csv, name="chart_csv"),
]
