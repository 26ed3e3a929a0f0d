from django.contrib import admin

from .models import CheckResult, GateProfile, GateRun, NodeHostKey


@admin.register(GateProfile)
class GateProfileAdmin(admin.ModelAdmin):
    """Thresholds are edited here as the profile's JSON; every save is validated (a typo'd
    key or an unknown tool is refused with the phase and check named)."""

    list_display = ["name", "is_default", "updated"]


class CheckResultInline(admin.TabularInline):
    model = CheckResult
    extra = 0
    fields = ["phase", "check_name", "iteration", "status", "reason", "hardware_fault"]
    readonly_fields = fields
    can_delete = False


@admin.register(GateRun)
class GateRunAdmin(admin.ModelAdmin):
    list_display = ["id", "node", "profile", "status", "started", "finished"]
    list_filter = ["status", "profile"]
    readonly_fields = ["spec", "context", "evidence"]
    inlines = [CheckResultInline]


@admin.register(NodeHostKey)
class NodeHostKeyAdmin(admin.ModelAdmin):
    list_display = ["node", "recorded"]
