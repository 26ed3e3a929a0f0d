from django.apps import AppConfig


class RmaConfig(AppConfig):
    name = "rma"
    verbose_name = "RMA"
    default_auto_field = "django.db.models.BigAutoField"
