from django.urls import path

from . import views

urlpatterns = [
    path("nodes/<int:pk>/console/", views.ConsoleAccessView.as_view(), name="node-console"),
]
