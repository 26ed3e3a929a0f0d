"""Reads for the RMA queue, the case page and the navigation count."""

from __future__ import annotations

from django.db.models import QuerySet

from .choices import OPEN_STATUSES
from .models import Case, CaseEvent


def case_queryset() -> QuerySet[Case]:
    return Case.objects.select_related("node__rack__site", "assignee").prefetch_related("parts")


def open_count() -> int:
    return Case.objects.filter(status__in=OPEN_STATUSES).count()


def cases_of_node(node_id: int) -> QuerySet[Case]:
    return Case.objects.filter(node_id=node_id).select_related("assignee").order_by("-opened")


def history(case: Case) -> QuerySet[CaseEvent]:
    return CaseEvent.objects.filter(case=case).order_by("created", "id")
