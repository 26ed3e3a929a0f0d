"""Query filters every app's API shares."""

from __future__ import annotations

from datetime import UTC, timedelta
from typing import Any

import django_filters  # type: ignore[import-untyped]
import django_filters.rest_framework  # type: ignore[import-untyped]
from django import forms
from django.core.exceptions import ValidationError
from django.db import models
from django_filters.fields import IsoDateTimeField  # type: ignore[import-untyped]
from rest_framework import filters as drf_filters
from rest_framework.exceptions import ValidationError as DRFValidationError

# No place keeps a UTC offset wider than this (Kiribati +14:00; the westmost is -12:00),
# but ISO 8601 and Python take up to ±23:59, where a typo hides (-20:19).
MAX_UTC_OFFSET = timedelta(hours=14)


class BoundedIsoDateTimeField(IsoDateTimeField):
    """An ISO 8601 time that exists in UTC: `9999-12-31T23:59:59-01:00` parses, but is
    past year 9999 once converted for the query (an OverflowError, a 500, before this);
    and whose UTC offset is a real one (within ±14:00), not a mistyped `-20:19`."""

    def to_python(self, value: object) -> object:
        parsed = super().to_python(value)
        if parsed is not None and parsed.tzinfo is not None:
            offset = parsed.utcoffset()
            if offset is not None and abs(offset) > MAX_UTC_OFFSET:
                raise ValidationError(
                    "The UTC offset is not a real one: offsets run from -14:00 to +14:00.",
                    code="invalid",
                )
            try:
                parsed.astimezone(UTC)
            except OverflowError:
                raise ValidationError(
                    "Out of range once converted to UTC (years 1 to 9999).", code="invalid"
                ) from None
        return parsed


class IsoDateTimeFilter(django_filters.IsoDateTimeFilter):
    field_class = BoundedIsoDateTimeField


class StrictBooleanField(forms.Field):
    """`true`/`false` (or `1`/`0`); anything else is a 400 naming the filter. Django's
    NullBooleanField reads `null`, `maybe` or a typo as "no filter", so `?failing=ture`
    silently answered every row, and the schema (boolean) did not tell the truth."""

    widget = forms.TextInput
    TRUE, FALSE = frozenset({"true", "True", "1"}), frozenset({"false", "False", "0"})

    def to_python(self, value: object) -> bool | None:
        if value in (None, ""):
            return None
        if value in self.TRUE:
            return True
        if value in self.FALSE:
            return False
        raise ValidationError("Give true or false.", code="invalid")


class BooleanFilter(django_filters.BooleanFilter):
    field_class = StrictBooleanField


class IntegerFilter(django_filters.NumberFilter):
    """A whole number (NumberFilter takes 0.5 for an integer column and matches nothing)."""

    field_class = forms.IntegerField


class FilterSet(django_filters.rest_framework.FilterSet):
    """The project's base: the filters generated from `filterset_fields` are strict too."""

    FILTER_DEFAULTS = {
        **django_filters.rest_framework.FilterSet.FILTER_DEFAULTS,
        models.BooleanField: {"filter_class": BooleanFilter},
        models.NullBooleanField: {"filter_class": BooleanFilter},
        **{
            field: {"filter_class": IntegerFilter}
            for field in (
                models.IntegerField,
                models.SmallIntegerField,
                models.BigIntegerField,
                models.PositiveIntegerField,
                models.PositiveSmallIntegerField,
                models.PositiveBigIntegerField,
            )
        },
    }


class FilterBackend(django_filters.rest_framework.DjangoFilterBackend):
    """DjangoFilterBackend building `filterset_fields` filtersets on the strict base.

    A time or choice filter sent empty (`?since=`, `?role=`) is a 400 in the API (the
    schema says a date-time, or one of a list; a client sending nothing means something
    went wrong on its side), while the pages, whose forms send empty fields, read it as
    "no filter" with the same filterset."""

    filterset_base = FilterSet

    def filter_queryset(self, request: Any, queryset: Any, view: Any) -> Any:
        refuse_unknown_parameters(request, queryset, view)
        return super().filter_queryset(request, queryset, view)

    def get_filterset(self, request: Any, queryset: Any, view: Any) -> Any:
        filterset = super().get_filterset(request, queryset, view)
        if filterset is not None:
            refused = {
                name: [why]
                for name, f in filterset.filters.items()
                if request.query_params.get(name) == "" and (why := _empty_refused(f))
            }
            if refused:
                raise DRFValidationError(refused)
        return filterset


def _empty_refused(f: Any) -> str:
    """Why an empty value is wrong for this filter in the API ("" when it is a fine
    value): a time, or a choice from a list (the schema says which)."""
    if isinstance(f, django_filters.IsoDateTimeFilter):
        return "Give a date and time (ISO 8601), or leave it out."
    # One choice (`?role=`); not a list (`?state=`, `?ordering=`: empty is an empty list).
    if isinstance(f, django_filters.ChoiceFilter) and not isinstance(
        f, django_filters.OrderingFilter
    ):
        values = [str(value) for value, _label in f.field.choices if value != ""]
        return f"Choose one of {', '.join(values)}, or leave it out."
    return ""


class SearchFilter(drf_filters.SearchFilter):
    """DRF's search, declared in the schema only where the view searches (search_fields):
    elsewhere `?search=` did nothing and is refused (FilterBackend.known)."""

    def get_schema_operation_parameters(self, view: Any) -> list:
        if not getattr(view, "search_fields", None):
            return []
        return super().get_schema_operation_parameters(view)


def known_parameters(request: Any, queryset: Any, view: Any) -> set[str]:
    """What a list takes: its filters, `ordering` where it sorts, `search` where it
    searches, the paginator's parameters, `format`, and what the view reads itself
    (`extra_query_params`)."""
    names = {"format", *getattr(view, "extra_query_params", ())}
    for backend in getattr(view, "filter_backends", ()):
        if issubclass(backend, django_filters.rest_framework.DjangoFilterBackend):
            filterset_class = backend().get_filterset_class(view, queryset)
            if filterset_class is not None:
                names |= set(filterset_class.base_filters)
        elif issubclass(backend, drf_filters.OrderingFilter):
            names.add(backend.ordering_param)
        elif issubclass(backend, drf_filters.SearchFilter) and getattr(view, "search_fields", None):
            names.add(backend.search_param)
    paginator = getattr(view, "paginator", None)
    for attr in ("page_query_param", "page_size_query_param"):
        if getattr(paginator, attr, None):
            names.add(getattr(paginator, attr))
    return names


def refuse_unknown_parameters(request: Any, queryset: Any, view: Any) -> None:
    """A list asked with a parameter it does not know is a 400 naming it and what the
    list takes (issue 36: `?hostnme=` or `?search=` were ignored and the whole fleet
    answered, and a script acting on the result acts on everything)."""
    if request.method != "GET" or getattr(view, "detail", None) is not False:
        return
    known = known_parameters(request, queryset, view)
    unknown = sorted(set(request.query_params) - known)
    if unknown:
        offered = ", ".join(sorted(known - {"format"}))
        raise DRFValidationError(
            {name: [f"Unknown parameter; this list takes: {offered}."] for name in unknown}
        )
