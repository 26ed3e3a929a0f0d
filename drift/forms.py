"""Forms of the drift pages. They validate input; drift.baselines and inventory.bulk write."""

from __future__ import annotations

import json
from typing import Any

from django import forms

from core import jsonsafe

from .models import Baseline


class _Styled:
    def style(self) -> None:
        for field in self.fields.values():  # type: ignore[attr-defined]
            field.widget.attrs.setdefault("class", "form-control form-control-sm")


class BaselineForm(_Styled, forms.Form):
    """A baseline's fields; `components` is JSON text. drift.baselines.save checks the
    components (its BaselineError names the one to fix) and the match being unique."""

    name = forms.CharField(max_length=100)
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), required=False)
    node_model = forms.CharField(max_length=100, required=False, help_text="Blank: any model.")
    gpu_model = forms.CharField(max_length=64, required=False, help_text="Blank: any GPU model.")
    components = forms.CharField(
        widget=forms.Textarea(
            attrs={"rows": 12, "class": "form-control form-control-sm font-monospace"}
        ),
        help_text='{"component": "version" or ["version", …]}, e.g. '
        '{"firmware.BMC": "1.45", "driver": ["550.90.07", "550.90.12"]}',
    )

    def __init__(self, *args: Any, instance: Baseline | None = None, **kwargs: Any) -> None:
        self.instance = instance
        if instance is not None and "initial" not in kwargs:
            kwargs["initial"] = {
                "name": instance.name,
                "description": instance.description,
                "node_model": instance.node_model,
                "gpu_model": instance.gpu_model,
                "components": json.dumps(instance.components, indent=2, sort_keys=True),
            }
        super().__init__(*args, **kwargs)
        self.style()

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        other = Baseline.objects.filter(name=name)
        if self.instance is not None:
            other = other.exclude(pk=self.instance.pk)
        if other.exists():
            raise forms.ValidationError(f"A baseline named '{name}' exists already.")
        return name

    def clean_components(self) -> Any:
        """The JSON text decoded as the API's parser decodes a body (core.jsonsafe): JSON
        may spell a NUL or half a surrogate pair as an escape, and nest past the decoder's
        stack, which the form's own NUL check on the text does not see."""
        text = self.cleaned_data["components"]
        try:
            return jsonsafe.loads(text)
        except jsonsafe.JSONRefused as exc:
            where = f"{exc.field}: " if exc.field not in (None, "detail") else ""
            raise forms.ValidationError(where + exc.detail) from None
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(
                f"Not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})."
            ) from None

    def add_baseline_error(self, errors: dict[str, str]) -> None:
        """drift.baselines.BaselineError's {field: message} next to the field it names."""
        for key, message in errors.items():
            field, _, part = key.partition(".")  # "components.bios.X": under components
            if part and field in self.fields:
                self.add_error(field, f"{part}: {message}")
            else:
                self.add_error(key if key in self.fields else None, message)


class _NodeIds(forms.TypedMultipleChoiceField):
    """Any node id is a valid choice here; which nodes exist is the view's question."""

    def valid_value(self, value: Any) -> bool:
        return str(value).isdigit()


class ReimageForm(forms.Form):
    """Ticked nodes and the image to deploy; a blank image means the one most of the
    ticked nodes should run (their latest deployment's)."""

    nodes = _NodeIds(coerce=int, error_messages={"required": "Tick at least one node."})
    image = forms.CharField(required=False, max_length=130)


class ConvergeForm(forms.Form):
    """Ticked nodes to bring to their baseline (the converge plan: docs/converge.md)."""

    nodes = _NodeIds(coerce=int, error_messages={"required": "Tick at least one node."})
