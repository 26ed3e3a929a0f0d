from django.apps import AppConfig


class AuditConfig(AppConfig):
    name = "audit"
    site_scopes = {"auditlog.logentry": "fleet-only"}  # inventory.scope: admins fleet-wide
    verbose_name = "Audit trail"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The models are registered here (one table, audit/registry.py); the actor is
        # stamped on every entry as it is saved; enrolments, which bulk-create their nodes
        # and so send no post_save, are logged from their own signal.
        from auditlog import get_logentry_model
        from django.db.models.signals import pre_save

        from core.navigation import NavItem
        from core.navigation import register as register_nav
        from inventory.enrolment import nodes_enrolled
        from inventory.panels import Panel
        from inventory.panels import register as register_panel

        from . import actors, registry, services

        registry.register_all()
        pre_save.connect(actors.stamp, sender=get_logentry_model(), dispatch_uid="audit.stamp")
        nodes_enrolled.connect(services.log_enrolled, dispatch_uid="audit.enrolled")
        # Entries name their model by content type id, which Django caches per process. A
        # worker outlives a flush of the database (the test suite's transactional tests, a
        # developer's reset) that renumbers content types: a stale id would fail the
        # task's transaction on the entry's foreign key. Each task starts with a fresh
        # cache (one query, and only in a task that writes an entry).
        from celery.signals import task_prerun
        from django.contrib.contenttypes.models import ContentType

        task_prerun.connect(
            lambda **kwargs: ContentType.objects.clear_cache(),
            weak=False,
            dispatch_uid="audit.contenttypes",
        )
        # The node's and the rack's changes, for admins; each replaces its slot.
        for page in ("node", "rack"):
            register_panel(
                Panel(
                    page,
                    "changes",
                    "audit:changes",
                    70,
                    capability="admin",
                    reloads=False,
                    swap="outerHTML",
                    args=lambda obj, page=page: (f"inventory.{page}", obj.pk),
                )
            )
        # Its entries in the navigation bar.
        register_nav(NavItem("Audit", "audit:entry_list", 110, id="nav-audit", capability="admin"))
