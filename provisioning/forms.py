"""Forms of the provisioning pages. They parse; `provisioning.images` validates and writes,
as it does for the API, so a page shows the API's messages."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.db import models

from core import jsonsafe

from .models import Image
from .models.images import DeployMode

IMAGE_FIELDS = [
    "name",
    "version",
    "kernel_url",
    "initrd_url",
    "deploy_mode",
    "rootfs_url",
    "kernel_sha256",
    "initrd_sha256",
    "rootfs_sha256",
    "uki_url",
    "uki_sha256",
    "cmdline",
    "signature",
    "baseline",
]


def _formfield(field: models.Field, **kwargs: Any) -> forms.Field | None:
    """A URL typed without its scheme is taken as https (Django 6's default, said now
    rather than left to a deprecation warning on every start)."""
    if isinstance(field, models.URLField):
        kwargs.setdefault("assume_scheme", "https")
    return field.formfield(**kwargs)


class ImageForm(forms.ModelForm):
    """A draft image. The model's validators give the messages (as the API's serializer
    does); images.create_image validates again as it writes. The form turns the baseline's
    text into JSON and an empty command line into the default."""

    baseline = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text='What a node running it must report, as JSON, e.g. {"kernel": "6.1.0-27"}.',
    )

    class Meta:
        model = Image
        fields = IMAGE_FIELDS
        formfield_callback = _formfield
        widgets = {"signature": forms.Textarea(attrs={"rows": 2})}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk and not self.is_bound:
            self.initial["baseline"] = json.dumps(self.instance.baseline or {}, indent=2)
        self.fields["cmdline"].required = False  # empty: the default, as in the API
        self.fields["deploy_mode"].required = False  # not sent: disk, as in the API
        for field in self.fields.values():
            css = "form-select" if isinstance(field.widget, forms.Select) else "form-control"
            field.widget.attrs.setdefault("class", f"{css} form-control-sm font-monospace")

    def clean_cmdline(self) -> str:
        return self.cleaned_data.get("cmdline") or Image._meta.get_field("cmdline").default

    def clean_deploy_mode(self) -> str:
        return self.cleaned_data.get("deploy_mode") or DeployMode.DISK

    def clean_baseline(self) -> dict:
        text = (self.cleaned_data.get("baseline") or "").strip()
        if not text:
            return {}
        try:
            # As the API's parser decodes a body: an escaped NUL, half a surrogate pair or
            # nesting past the decoder's stack is the person's mistake, not a 500.
            value = jsonsafe.loads(text)
        except jsonsafe.JSONRefused as exc:
            where = f"{exc.field}: " if exc.field not in (None, "detail") else ""
            raise forms.ValidationError(where + exc.detail) from None
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(f"Not JSON: {exc.msg} (line {exc.lineno}).") from None
        if not isinstance(value, dict):
            raise forms.ValidationError("Give a JSON object.")
        return value
