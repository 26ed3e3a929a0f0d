"""One filterset per list, shared by the dashboard and the API."""

from datetime import timedelta

import django_filters
from django.db.models import Q
from django.utils import timezone

from core.filters import FilterSet, IsoDateTimeFilter

from .choices import NodeRole, NodeState, OperationStatus
from .models import LifecycleEvent, Node, Operation, Rack, Site

LAST_WINDOWS = {
    "1h": timedelta(hours=1),
    "12h": timedelta(hours=12),
    "24h": timedelta(hours=24),
    "7d": timedelta(days=7),
}


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


class ActivityFilterSet(FilterSet):
    """Filters the Activity page and the events/operations API share: a site (slug or id,
    through the node's rack or a bulk operation's rack), who did it (contains), and a time
    window (`since`/`until`, or `last` = 1h, 12h, 24h or 7d back from now)."""

    site = django_filters.CharFilter(method="filter_site", label="Site (slug or id)")
    actor = django_filters.CharFilter(lookup_expr="icontains", label="Actor contains")
    since = IsoDateTimeFilter(field_name="created", lookup_expr="gte")
    until = IsoDateTimeFilter(field_name="created", lookup_expr="lt")
    last = django_filters.ChoiceFilter(
        choices=[(k, k) for k in LAST_WINDOWS], method="filter_last", label="Last 1h/12h/24h/7d"
    )
    SITE_PATHS: tuple[str, ...] = ("node__rack__site",)

    def filter_site(self, queryset, name, value):
        by_id = value.isascii() and value.isdigit() and len(value) < 19  # fits a bigint
        match = Q()
        for path in self.SITE_PATHS:
            match |= Q(**{path: int(value)} if by_id else {f"{path}__slug": value})
        return queryset.filter(match)

    def filter_last(self, queryset, name, value):
        return queryset.filter(created__gte=timezone.now() - LAST_WINDOWS[value])


class LifecycleEventFilterSet(ActivityFilterSet):
    class Meta:
        model = LifecycleEvent
        fields = ["node", "event", "from_state", "to_state", "actor", "site", "since", "until"]


class OperationFilterSet(ActivityFilterSet):
    status = django_filters.MultipleChoiceFilter(choices=OperationStatus.choices)
    SITE_PATHS = ("node__rack__site", "rack__site")

    class Meta:
        model = Operation
        fields = ["node", "rack", "kind", "status", "parent", "actor", "site", "since", "until"]
