from django.contrib import admin

from core.actors import actor_of

from . import breaker
from .models import BreakerState, HealthEvent, HealthPolicy


@admin.register(HealthPolicy)
class HealthPolicyAdmin(admin.ModelAdmin):
    list_display = [
        "priority",
        "kind",
        "match",
        "gpu_model",
        "action",
        "count",
        "window_minutes",
        "escalate_to",
        "enabled",
    ]
    list_filter = ["kind", "action", "enabled"]
    list_editable = ["enabled"]
    ordering = ["priority", "id"]


@admin.register(BreakerState)
class BreakerStateAdmin(admin.ModelAdmin):
    """Read-only but for the close action, which is the API's close (webhook and all)."""

    list_display = ["state", "opened_at", "reason", "closed_at", "closed_by"]
    readonly_fields = ["state", "opened_at", "reason", "closed_at", "closed_by"]
    actions = ["close"]

    @admin.action(description="Close the breaker (automatic actions resume)")
    def close(self, request, queryset) -> None:
        breaker.close(actor_of(request.user))

    def has_add_permission(self, request) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(HealthEvent)
class HealthEventAdmin(admin.ModelAdmin):
    """Read-only: events are reports, and their decisions are the policy's."""

    list_display = ["at", "node", "kind", "code", "decision", "status", "outcome"]
    list_filter = ["kind", "decision", "status"]
    search_fields = ["node__hostname", "code", "name"]
    raw_id_fields = ["node", "operation", "policy"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
