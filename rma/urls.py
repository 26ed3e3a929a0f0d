from django.urls import path

from . import views

app_name = "rma"

urlpatterns = [
    path("rma/", views.case_list, name="case_list"),
    path("rma/<int:pk>/", views.case_detail, name="case_detail"),
]
