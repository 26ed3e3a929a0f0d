from django import forms
from django.contrib import admin

from .models import BMC, LifecycleEvent, NetworkInterface, Node, Operation, Rack, Site, SiteRole
from .services import BMC_FIELDS, deletable, delete_node


@admin.register(Site)
class SiteAdmin(admin.ModelAdmin):
    list_display = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}


@admin.register(Rack)
class RackAdmin(admin.ModelAdmin):
    list_display = ["name", "site", "row", "u_height", "fabric"]
    list_filter = ["site"]


class BMCAdminForm(forms.ModelForm):
    """The password is write-only here too: admins may set it, nobody can read it back;
        left empty, the stored one is kept, unless the address (or anything else saying where it
    goes) changed: then the model asks for it again. The model's clean() checks everything with the
        driver's schema, as the API and the CSV import do."""

    password = forms.CharField(
        required=False,
        strip=False,
        widget=forms.PasswordInput(render_value=False),
        help_text="Write-only; leave empty to keep the stored password.",
    )

    class Meta:
        model = BMC
        fields = list(BMC_FIELDS)

    def clean_password(self) -> str:
        given = self.cleaned_data.get("password") or ""
        if given:
            # Given for the destination on this form: the model lets it go there.
            self.instance.give_password(given)
        return given or (self.instance.password if self.instance.pk else "")


class BMCInline(admin.StackedInline):
    model = BMC
    form = BMCAdminForm


class InterfaceInline(admin.TabularInline):
    model = NetworkInterface
    extra = 0


class NodeAdminForm(forms.ModelForm):
    """A move to another site needs the BMC password typed again in the BMC inline below
    (BMC.site_move_problem), as the API and the node's page ask for it."""

    # No Meta: the admin builds the form from its own fields (all of them); a Meta naming
    # fields would be all the admin shows.

    def clean(self):
        data = super().clean()
        if self.instance.pk and "rack" in data:
            given = bool(self.data.get("bmc-0-password"))
            problem = BMC.site_move_problem(self.instance, data["rack"], given)
            if problem:
                self.add_error("rack", problem)
        return data


@admin.register(Node)
class NodeAdmin(admin.ModelAdmin):
    form = NodeAdminForm
    list_display = ["hostname", "serial", "rack", "rack_unit", "gpu_model", "state"]
    list_filter = ["state", "rack__site", "gpu_model"]
    search_fields = ["hostname", "serial"]
    readonly_fields = ["state", "state_changed", "failed_step", "failure_reason", "reservation"]
    inlines = [BMCInline, InterfaceInline]

    def has_delete_permission(self, request, obj=None):
        # A node with history is decommissioned, never deleted (services.delete_node).
        if obj is not None and deletable(obj):
            return False
        return super().has_delete_permission(request, obj)

    def delete_model(self, request, obj):
        delete_node(obj)

    def get_actions(self, request):
        # The bulk "delete selected" would go around the rule; deletes are one by one.
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions


@admin.register(LifecycleEvent)
class LifecycleEventAdmin(admin.ModelAdmin):
    list_display = ["created", "node", "from_state", "to_state", "event", "actor"]
    list_filter = ["to_state", "event"]

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def has_add_permission(self, request):
        return False


@admin.register(Operation)
class OperationAdmin(admin.ModelAdmin):
    list_display = ["id", "kind", "node", "status", "progress", "created"]
    list_filter = ["status", "kind"]


@admin.register(SiteRole)
class SiteRoleAdmin(admin.ModelAdmin):
    """Grant a role in one site (fleet-wide roles are the user's groups)."""

    list_display = ["user", "role", "site"]
    list_filter = ["role", "site"]
    autocomplete_fields = ["user"]
