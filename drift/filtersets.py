"""One filterset for the matrix page, its CSV and the API (NetBox's rule)."""

import django_filters

from core.filters import BooleanFilter
from inventory.filtersets import NodeFilterSet

from .models import DriftCell


class DriftFilterSet(NodeFilterSet):
    only_drifted = BooleanFilter(method="filter_drifted", label="Only drifted")
    component = django_filters.CharFilter(method="filter_component", label="Component")

    class Meta(NodeFilterSet.Meta):
        fields = [*NodeFilterSet.Meta.fields, "only_drifted", "component"]

    def filter_drifted(self, queryset, name, value):
        if value is None:
            return queryset
        if value:
            return queryset.filter(drift_state__drifted_count__gt=0)
        return queryset.exclude(drift_state__drifted_count__gt=0)

    def filter_component(self, queryset, name, value):
        """Nodes that have the component; with only_drifted, those drifted on it."""
        value = value.strip()
        if not value:
            return queryset
        cells = DriftCell.objects.filter(component=value)
        if self.form.cleaned_data.get("only_drifted"):
            cells = cells.filter(status="drift")
        return queryset.filter(pk__in=cells.values("node_id"))
