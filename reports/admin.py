from django.contrib import admin

from .models import GpuPrice


@admin.register(GpuPrice)
class GpuPriceAdmin(admin.ModelAdmin):
    list_display = ["gpu_model", "price_per_gpu_hour", "currency", "updated"]
    search_fields = ["gpu_model"]
