"""Query filters every app's API shares."""

from __future__ import annotations

from datetime import UTC

import django_filters  # type: ignore[import-untyped]
from django.core.exceptions import ValidationError
from django_filters.fields import IsoDateTimeField  # type: ignore[import-untyped]


class BoundedIsoDateTimeField(IsoDateTimeField):
    """An ISO 8601 time that exists in UTC: `9999-12-31T23:59:59-01:00` parses, but is
    past year 9999 once converted for the query (an OverflowError, a 500, before this)."""

    def to_python(self, value: object) -> object:
        parsed = super().to_python(value)
        if parsed is not None and parsed.tzinfo is not None:
            try:
                parsed.astimezone(UTC)
            except OverflowError:
                raise ValidationError(
                    "Out of range once converted to UTC (years 1 to 9999).", code="invalid"
                ) from None
        return parsed


class IsoDateTimeFilter(django_filters.IsoDateTimeFilter):
    field_class = BoundedIsoDateTimeField
