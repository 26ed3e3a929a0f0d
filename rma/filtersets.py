"""One filterset for the RMA queue page and the API."""

from __future__ import annotations

import django_filters
from django.db.models import Q
from django.utils import timezone

from core.filters import BooleanFilter, FilterSet, IsoDateTimeFilter

from .choices import OPEN_STATUSES, CaseStatus, Priority
from .models import Case


class CaseFilterSet(FilterSet):
    q = django_filters.CharFilter(method="search", label="Search")
    status = django_filters.MultipleChoiceFilter(choices=CaseStatus.choices)
    open = BooleanFilter(method="filter_open", label="Open cases only")
    site = django_filters.CharFilter(method="filter_site", label="Site (slug or id)")
    assignee = django_filters.CharFilter(method="filter_assignee", label="Assignee (username)")
    node = django_filters.CharFilter(method="filter_node", label="Node (id or hostname)")
    vendor = django_filters.CharFilter(lookup_expr="iexact")
    ticket = django_filters.CharFilter()
    priority = django_filters.MultipleChoiceFilter(choices=Priority.choices)
    overdue = BooleanFilter(method="filter_overdue", label="Past SLA due")
    updated_since = IsoDateTimeFilter(field_name="updated", lookup_expr="gte")

    class Meta:
        model = Case
        fields = [
            "q",
            "status",
            "open",
            "site",
            "assignee",
            "node",
            "vendor",
            "ticket",
            "priority",
            "overdue",
            "updated_since",
        ]

    def search(self, queryset, name, value):
        value = value.strip()
        if not value:
            return queryset
        return queryset.filter(
            Q(node__hostname__icontains=value)
            | Q(node__serial__icontains=value)
            | Q(reason__icontains=value)
            | Q(vendor_case__icontains=value)
            | Q(ticket__icontains=value)
        )

    def filter_open(self, queryset, name, value):
        if value is None:
            return queryset
        return (
            queryset.filter(status__in=OPEN_STATUSES)
            if value
            else queryset.filter(status=CaseStatus.CLOSED)
        )

    def filter_site(self, queryset, name, value):
        if value.isdigit():
            return queryset.filter(node__rack__site_id=int(value))
        return queryset.filter(node__rack__site__slug=value)

    def filter_assignee(self, queryset, name, value):
        if value in ("none", "-"):
            return queryset.filter(assignee__isnull=True)
        return queryset.filter(assignee__username=value)

    def filter_node(self, queryset, name, value):
        if value.isdigit():
            return queryset.filter(node_id=int(value))
        return queryset.filter(node__hostname=value)

    def filter_overdue(self, queryset, name, value):
        if value is None:
            return queryset
        late = Q(status__in=OPEN_STATUSES, sla_due__lt=timezone.now())
        return queryset.filter(late) if value else queryset.exclude(late)
