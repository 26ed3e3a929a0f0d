"""One filterset per list, shared by the dashboard and the API."""

import django_filters
from django.db.models import Q

from core.filters import FilterSet, IsoDateTimeFilter

from .choices import NodeRole, NodeState
from .models import LifecycleEvent, Node, Operation, Rack, Site


class NodeFilterSet(FilterSet):
    q = django_filters.CharFilter(method="search", label="Search")
    site = django_filters.CharFilter(method="filter_site", label="Site (slug or id)")
    rack = django_filters.CharFilter(method="filter_rack", label="Rack id")
    state = django_filters.MultipleChoiceFilter(choices=NodeState.choices)
    role = django_filters.ChoiceFilter(choices=NodeRole.choices)
    model = django_filters.CharFilter(lookup_expr="iexact")
    gpu_model = django_filters.CharFilter(lookup_expr="iexact")
    label = django_filters.CharFilter(field_name="labels__name", distinct=True)

    class Meta:
        model = Node
        fields = ["q", "site", "rack", "state", "role", "model", "gpu_model", "label"]

    def search(self, queryset, name, value):
        value = value.strip()
        if not value:
            return queryset
        return queryset.filter(
            Q(hostname__icontains=value)
            | Q(serial__icontains=value)
            | Q(model__icontains=value)
            | Q(interfaces__mac__icontains=value.lower())
        ).distinct()

    def filter_site(self, queryset, name, value):
        if value.isdigit():
            return queryset.filter(rack__site_id=int(value))
        return queryset.filter(rack__site__slug=value)

    def filter_rack(self, queryset, name, value):
        if value == "none":
            return queryset.filter(rack__isnull=True)
        if value.isdigit():
            return queryset.filter(rack_id=int(value))
        return queryset.none()


class SiteFilterSet(FilterSet):
    class Meta:
        model = Site
        fields = ["slug", "name"]


class RackFilterSet(FilterSet):
    site = django_filters.CharFilter(method="filter_site")

    class Meta:
        model = Rack
        fields = ["site", "name", "row"]

    def filter_site(self, queryset, name, value):
        if value.isdigit():
            return queryset.filter(site_id=int(value))
        return queryset.filter(site__slug=value)


class LifecycleEventFilterSet(FilterSet):
    since = IsoDateTimeFilter(field_name="created", lookup_expr="gte")

    class Meta:
        model = LifecycleEvent
        fields = ["node", "event", "from_state", "to_state", "actor", "since"]


class OperationFilterSet(FilterSet):
    class Meta:
        model = Operation
        fields = ["node", "rack", "kind", "status", "parent"]
