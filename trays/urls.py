from django.urls import path

from . import views

app_name = "trays"
urlpatterns = [path("racks/<int:pk>/trays/", views.rack_panel, name="rack_panel")]
