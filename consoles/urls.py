from django.urls import path

from . import views

app_name = "consoles"
urlpatterns = [
    path("nodes/<int:pk>/console/", views.console_page, name="console"),
    path("nodes/<int:pk>/console-panel/", views.node_panel, name="node_panel"),
    path("nodes/<int:pk>/console-logs/<int:log_id>.txt", views.log_text, name="log_text"),
]
