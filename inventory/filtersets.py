"""One filterset per list, shared by the dashboard and the API."""

import re
from datetime import timedelta

import django_filters
from django.db.models import F, Q
from django.utils import timezone

from core.filters import FilterSet, IsoDateTimeFilter

from .choices import NodeRole, NodeState, OperationStatus
from .models import LifecycleEvent, Node, Operation, Rack, Site

# A rack location as typed: "r01", "r01 U12", "r01/u12", "r01:12".
_LOCATION = re.compile(r"^(?P<rack>[^\s/:]+)(?:\s*[\s/:]\s*[uU]?(?P<unit>\d{1,2}))?$")

# ?ordering= values (a leading "-" reverses), the page's column headers and the API alike;
# ties broken by hostname so a page never shuffles between requests.
NODE_ORDERING = {
    "hostname": ("hostname",),
    "state": ("state", "hostname"),
    "serial": ("serial",),
    "gpu_model": ("gpu_model", "hostname"),
    "site": ("rack__site__name", "hostname"),
    "rack": ("rack__name", "rack_unit", "hostname"),
    "rack_unit": ("rack_unit", "hostname"),
    "state_changed": ("state_changed", "hostname"),
    "created": ("created", "hostname"),
}


class NodeOrderingFilter(django_filters.OrderingFilter):
    """`?ordering=site` sorts by the site's name, `-rack` by rack then unit, reversed."""

    def filter(self, qs, value):
        if not value:
            return qs
        keys = []
        for term in value:
            desc = term.startswith("-")
            for field in NODE_ORDERING[term.lstrip("-")]:
                keys.append(f"-{field}" if desc else field)
        return qs.order_by(*keys)


def mac_prefix(value: str) -> str | None:
    """A MAC, or its beginning, in any notation (3C-EC-EF-01, 3cec.ef01, 3cecef01) as
    stored (3c:ec:ef:01): None when `value` cannot be one (too short, not hex)."""
    digits = re.sub(r"[:\-.\s]", "", value.lower())
    if not 4 <= len(digits) <= 12 or not re.fullmatch(r"[0-9a-f]+", digits):
        return None
    return ":".join(digits[i : i + 2] for i in range(0, len(digits), 2))


def rack_location(value: str) -> Q | None:
    """`r01` (the rack's nodes) or `r01 U12` (the node whose units cover U12), or None."""
    match = _LOCATION.match(value.strip())
    if not match:
        return None
    where = Q(rack__name__iexact=match["rack"])
    if match["unit"]:
        unit = int(match["unit"])
        where &= Q(rack_unit__lte=unit, rack_unit__gt=unit - F("u_height"))
    return where


LAST_WINDOWS = {
    "1h": timedelta(hours=1),
    "12h": timedelta(hours=12),
    "24h": timedelta(hours=24),
    "7d": timedelta(days=7),
}


class NodeFilterSet(FilterSet):
    q = django_filters.CharFilter(
        method="search", label="Hostname, serial, model, MAC (any notation) or rack location"
    )
    site = django_filters.CharFilter(method="filter_site", label="Site (name, slug or id)")
    rack = django_filters.CharFilter(
        method="filter_rack", label="Rack: id, name, name and unit (r01 U12), or none"
    )
    state = django_filters.MultipleChoiceFilter(choices=NodeState.choices)
    role = django_filters.ChoiceFilter(choices=NodeRole.choices)
    model = django_filters.CharFilter(lookup_expr="iexact")
    gpu_model = django_filters.CharFilter(
        lookup_expr="istartswith", label="GPU model, by its beginning (H200 finds H200-SXM)"
    )
    label = django_filters.CharFilter(field_name="labels__name", distinct=True)
    # One node by what a script knows it by (the command line, Ansible): whole values, in
    # any case, where `q` would also find gx-0010 for gx-001.
    hostname = django_filters.CharFilter(lookup_expr="iexact", label="Hostname (the whole name)")
    serial = django_filters.CharFilter(lookup_expr="iexact", label="Serial (the whole serial)")
    ordering = NodeOrderingFilter(
        fields=[(k, k) for k in NODE_ORDERING], label="Sort by (a leading - reverses)"
    )

    class Meta:
        model = Node
        fields = [
            *("q", "site", "rack", "state", "role", "model", "gpu_model", "label"),
            *("hostname", "serial"),
        ]

    def search(self, queryset, name, value):
        value = value.strip()
        if not value:
            return queryset
        where = (
            Q(hostname__icontains=value)
            | Q(serial__icontains=value)
            | Q(model__icontains=value)
            | Q(interfaces__mac__icontains=value.lower())
        )
        mac = mac_prefix(value)
        if mac:
            where |= Q(interfaces__mac__startswith=mac)
        location = rack_location(value)
        if location is not None:
            where |= location
        # A subquery, not a join: no duplicate rows, and the count stays one query.
        return queryset.filter(pk__in=Node.objects.filter(where).values("pk"))

    def filter_site(self, queryset, name, value):
        value = value.strip()
        if value.isdigit():
            return queryset.filter(rack__site_id=int(value))
        return queryset.filter(
            Q(rack__site__slug__iexact=value) | Q(rack__site__name__iexact=value)
        )

    def filter_rack(self, queryset, name, value):
        value = value.strip()
        if value == "none":
            return queryset.filter(rack__isnull=True)
        if value.isdigit():
            return queryset.filter(rack_id=int(value))
        location = rack_location(value)
        return queryset.filter(location) if location is not None else queryset.none()


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
