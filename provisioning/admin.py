from django.contrib import admin

from .models import BootRequest, Deployment, Image, ImageState, Subnet


@admin.register(Image)
class ImageAdmin(admin.ModelAdmin):
    list_display = ["name", "version", "state", "published"]
    list_filter = ["state", "name"]
    readonly_fields = ["state", "published", "verify_error"]

    def get_readonly_fields(self, request, obj=None):
        # A published image is immutable here too: only a new version changes it.
        if obj is not None and obj.state != ImageState.DRAFT:
            return [f.name for f in obj._meta.fields]
        return super().get_readonly_fields(request, obj)


@admin.register(Deployment)
class DeploymentAdmin(admin.ModelAdmin):
    list_display = ["node", "image", "status", "created", "phoned_home"]
    list_filter = ["status"]
    exclude = ["token"]  # the single-use token never shows
    readonly_fields = ["token_sha256"]


@admin.register(BootRequest)
class BootRequestAdmin(admin.ModelAdmin):
    list_display = ["created", "mac", "node", "state", "answer"]
    list_filter = ["answer"]


@admin.register(Subnet)
class SubnetAdmin(admin.ModelAdmin):
    list_display = ["cidr", "site", "gateway", "boot_base_url"]
