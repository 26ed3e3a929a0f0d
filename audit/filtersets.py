"""One filterset for the API and the audit page (NetBox's rule). Every filter validates
its value in the form, so a bad one is a 400 naming it (DjangoFilterBackend), never a 500
and never an unfiltered answer."""

from __future__ import annotations

import django_filters
from auditlog import get_logentry_model
from django import forms
from drf_spectacular.utils import extend_schema_field

from core.filters import FilterSet, IsoDateTimeFilter

from . import registry, selectors


class ModelField(forms.CharField):
    """`inventory.node` or `node` -> the audited models it names."""

    def clean(self, value):
        value = super().clean(value)
        if not value:
            return None
        labels = selectors.models_named(value)
        if labels is None:
            raise forms.ValidationError(
                f"'{value}' is not an audited model; use one of: {', '.join(registry.labels())}."
            )
        return labels


MODEL_NAMES = sorted({*registry.labels(), *(label.split(".", 1)[1] for label in registry.labels())})


@extend_schema_field({"type": "string", "enum": MODEL_NAMES})
class ModelFilter(django_filters.CharFilter):
    field_class = ModelField

    def filter(self, qs, value):
        return qs if not value else qs.filter(selectors.of_models(value))


class ObjectIdFilter(django_filters.NumberFilter):
    field_class = forms.IntegerField  # every audited model has an integer key


@extend_schema_field({"type": "string", "enum": ["create", "update", "delete"]})
class ActionFilter(django_filters.ChoiceFilter):
    """Named, not the library's integer codes (the schema says so: a string enum)."""


class AuditLogFilterSet(FilterSet):
    model = ModelFilter(label="Model (inventory.node or node)")
    object_id = ObjectIdFilter(field_name="object_id", label="Object id")
    actor = django_filters.CharFilter(method="filter_actor", label="Actor (user name)")
    since = IsoDateTimeFilter(
        field_name="timestamp", lookup_expr="gte", label="Since (ISO 8601 date and time)"
    )
    action = ActionFilter(
        method="filter_action",
        choices=[(name, name) for name in ("create", "update", "delete")],
    )

    class Meta:
        model = get_logentry_model()
        fields = ["model", "object_id", "actor", "since", "action"]

    def filter_actor(self, queryset, name, value):
        return queryset.filter(selectors.by_actor(value)) if value.strip() else queryset

    def filter_action(self, queryset, name, value):
        codes = {v: k for k, v in selectors.ACTIONS.items()}
        return queryset.filter(action=codes[value])
