"""One filterset for the campaign page and the API."""

from __future__ import annotations

import django_filters

from core.filters import FilterSet

from .models import Campaign, CampaignStatus


class CampaignFilterSet(FilterSet):
    status = django_filters.MultipleChoiceFilter(choices=CampaignStatus.choices)
    q = django_filters.CharFilter(field_name="name", lookup_expr="icontains", label="Name")

    class Meta:
        model = Campaign
        fields = ["status", "q"]
