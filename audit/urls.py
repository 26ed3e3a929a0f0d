from django.urls import path

from . import views

app_name = "audit"

urlpatterns = [
    path("audit/", views.entry_list, name="entry_list"),
    path("audit/<str:label>/<int:pk>/changes/", views.changes_panel, name="changes"),
]
