from django.urls import path

from . import views

app_name = "day2"

urlpatterns = [
    path("campaigns/", views.campaign_list, name="campaign_list"),
    path("campaigns/<int:pk>/", views.campaign_detail, name="campaign_detail"),
    path("campaigns/<int:pk>/<slug:verb>/", views.campaign_move, name="campaign_move"),
]
