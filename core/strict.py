"""DRF's serializers, with JSON types taken as the schema says them.

Import it in place of DRF's module (`from core import strict as serializers`): everything
is DRF's, except that a text field refuses a number, a number field a string (and a
true or false, which DRF reads as 1 or 0), a boolean field anything but true/false, and
a decimal field (served as a string) a float. DRF takes all of those by default, so the
OpenAPI schema (string, integer, number, boolean) was not the truth: a generated client
typed from it and a sloppy one got different rules, and schemathesis
(tests/api/test_schemathesis.py) reports such requests as accepted. Model serializers
get the strict fields for their model fields too (serializer_field_mapping).
"""

from __future__ import annotations

from typing import Any

from django.core.validators import MinValueValidator
from django.db import models
from drf_spectacular.extensions import OpenApiSerializerFieldExtension
from rest_framework import serializers as _drf
from rest_framework.serializers import *  # noqa: F403  (this module stands in for DRF's)
from rest_framework.serializers import (  # noqa: F401  (named for mypy: DRF is untyped here)
    ChoiceField,
    DateTimeField,
    FileField,
    ListField,
    Serializer,
    SerializerMethodField,
    ValidationError,
)


class Text:
    """A text field that takes JSON strings only (a mixin before DRF's class)."""

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, str):
            self.fail("invalid")  # type: ignore[attr-defined]
        return super().to_internal_value(data)  # type: ignore[misc]


class CharField(Text, _drf.CharField):
    pass


class SlugField(Text, _drf.SlugField):
    pass


class URLField(Text, _drf.URLField):
    pass


class EmailField(Text, _drf.EmailField):
    pass


class IPAddressField(Text, _drf.IPAddressField):
    pass


class IntegerField(_drf.IntegerField):
    default_error_messages = {"invalid": "A valid integer is required (a JSON number)."}

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class FloatField(_drf.FloatField):
    default_error_messages = {"invalid": "A valid number is required (a JSON number)."}

    def to_internal_value(self, data: Any) -> float:
        if isinstance(data, bool) or not isinstance(data, int | float):
            self.fail("invalid")
        return super().to_internal_value(data)


class BooleanField(_drf.BooleanField):
    default_error_messages = {"invalid": "Must be true or false (a JSON boolean)."}

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class DecimalField(_drf.DecimalField):
    default_error_messages = {"invalid": 'A decimal number is required, as a string ("2.50").'}

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, str) or data != data.strip():
            self.fail("invalid")
        return super().to_internal_value(data)

    def schema_pattern(self) -> str:
        """What it takes, as the schema's pattern: digits (at least one), a point and
        decimals, no sign when the value may not be negative (tests/api/test_schemathesis)."""
        whole = (
            ""
            if self.max_digits is None
            else f"{{1,{self.max_digits - (self.decimal_places or 0)}}}"
        )
        places = "" if self.decimal_places is None else f"{{1,{self.decimal_places}}}"
        sign = "" if self.non_negative() else "-?"
        whole = whole or "+"
        places = places or "+"
        return rf"^{sign}(?:\d{whole}(?:\.\d{places})?|\.\d{places})$"

    def non_negative(self) -> bool:
        limits = [v.limit_value for v in self.validators if isinstance(v, MinValueValidator)]
        if self.min_value is not None:
            limits.append(self.min_value)
        return any(limit >= 0 for limit in limits)


class ModelSerializer(_drf.ModelSerializer):
    serializer_field_mapping = {
        **_drf.ModelSerializer.serializer_field_mapping,
        models.CharField: CharField,
        models.TextField: CharField,
        models.SlugField: SlugField,
        models.URLField: URLField,
        models.EmailField: EmailField,
        models.GenericIPAddressField: IPAddressField,
        models.IntegerField: IntegerField,
        models.SmallIntegerField: IntegerField,
        models.BigIntegerField: IntegerField,
        models.PositiveIntegerField: IntegerField,
        models.PositiveSmallIntegerField: IntegerField,
        models.PositiveBigIntegerField: IntegerField,
        models.BooleanField: BooleanField,
        models.FloatField: FloatField,
        models.DecimalField: DecimalField,
    }


class StrictDecimalExtension(OpenApiSerializerFieldExtension):
    """The schema of a DecimalField here: the pattern it really takes (drf-spectacular's
    allowed "" and a sign on prices that may not be negative)."""

    target_class = DecimalField
    match_subclasses = True

    def map_serializer_field(self, auto_schema: Any, direction: Any) -> dict:
        return {"type": "string", "format": "decimal", "pattern": self.target.schema_pattern()}
