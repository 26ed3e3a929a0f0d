"""One filterset for the event list: the API and the node page's panel."""

from __future__ import annotations

import django_filters

from core.filters import FilterSet, IsoDateTimeFilter

from .choices import Decision, Kind, Status
from .models import HealthEvent


class HealthEventFilterSet(FilterSet):
    node = django_filters.CharFilter(method="filter_node", label="Node (id or hostname)")
    kind = django_filters.MultipleChoiceFilter(choices=Kind.choices)
    decision = django_filters.MultipleChoiceFilter(choices=Decision.choices)
    status = django_filters.MultipleChoiceFilter(choices=Status.choices)
    site = django_filters.CharFilter(method="filter_site", label="Site (slug or id)")
    since = IsoDateTimeFilter(field_name="at", lookup_expr="gte", label="Happened at or after")

    class Meta:
        model = HealthEvent
        fields = ["node", "kind", "decision", "status", "site", "since"]

    def filter_node(self, queryset, name, value):
        if value.isdigit():
            return queryset.filter(node_id=int(value))
        return queryset.filter(node__hostname=value)

    def filter_site(self, queryset, name, value):
        if value.isdigit():
            return queryset.filter(node__rack__site_id=int(value))
        return queryset.filter(node__rack__site__slug=value)
