from django.contrib import admin

from .models import OIDCIdentity


@admin.register(OIDCIdentity)
class OIDCIdentityAdmin(admin.ModelAdmin):
    list_display = ("user", "subject", "issuer", "created", "last_login")
    search_fields = ("user__username", "subject", "issuer")
    raw_id_fields = ("user",)
    readonly_fields = ("created", "last_login")
