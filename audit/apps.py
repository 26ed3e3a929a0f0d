from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "audit"
    verbose_name = "Audit trail"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The models are registered here (one table, audit/registry.py); the actor is
        # stamped on every entry as it is saved; enrolments, which bulk-create their nodes
        # and so send no post_save, are logged from their own signal.
        from auditlog import get_logentry_model
        from django.db.models.signals import pre_save

        from inventory.enrolment import nodes_enrolled

        from . import actors, registry, services

        registry.register_all()
        pre_save.connect(actors.stamp, sender=get_logentry_model(), dispatch_uid="audit.stamp")
        nodes_enrolled.connect(services.log_enrolled, dispatch_uid="audit.enrolled")
