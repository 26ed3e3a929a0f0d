"""The generic edit page (NetBox's ObjectEditView, small): GET draws the form filled from
the object; POST has the form parse it and `save` write it through the service or
serializer the API uses, in one transaction, so the page and the API refuse the same
things with the same messages. A refusal (a Django ValidationError, or a serializer's
errors) lands on the form fields it names and nothing is written; a save ends in a message
and a redirect. No domain here: who may edit what, and how it is written, are the
subclass's.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.decorators import method_decorator
from django.views import View


def add_errors(form: forms.Form, errors: dict | list | ValidationError, prefix: str = "") -> None:
    """Put a service's or a serializer's errors on the form's fields; keys with a `prefix`
    ("bmc.") lose it, a dotted key may name a field spelt with "_", keys the form has no
    field for become form-wide errors."""
    if isinstance(errors, ValidationError):
        errors = errors.message_dict if hasattr(errors, "error_dict") else {"": errors.messages}
    if isinstance(errors, list):
        errors = {"": errors}
    for key, found in errors.items():
        name = key[len(prefix) :] if prefix and key.startswith(prefix) else key
        if name not in form.fields and name.replace(".", "_") in form.fields:
            name = name.replace(".", "_")  # "bmc.password" on a form of the node: bmc_password
        if isinstance(found, dict):  # a nested serializer's errors
            add_errors(form, found)
            continue
        for message in found if isinstance(found, list) else [found]:
            form.add_error(name if name in form.fields else None, str(message))


class Refused(Exception):
    """A serializer's errors (a dict, as a 400 of the API carries them)."""

    def __init__(self, errors: dict) -> None:
        self.errors = errors
        super().__init__(str(errors))


def save_with(serializer_class: Any, instance: Any, data: dict, request: Any = None) -> Any:
    """The API's serializer checks and saves, in one transaction; Refused with its errors."""
    serializer = serializer_class(instance, data=data, context={"request": request})
    if not serializer.is_valid():
        raise Refused(serializer.errors)
    with transaction.atomic():
        return serializer.save()


@method_decorator(login_required, name="dispatch")
class EditPage(View):
    """GET: the form; POST: the form's data saved, or the form again with what to fix."""

    http_method_names = ["get", "post"]
    template_name: ClassVar[str]
    form_class: ClassVar[type[forms.Form]]
    error_prefix: ClassVar[str] = ""  # what the service's error keys start with ("bmc.")
    obj: Any = None  # what is edited (None: a new one), once `load` ran

    def load(self, request: HttpRequest, **kwargs: Any) -> None:
        """Read what is edited (404 if the user may not see it) and refuse
        (PermissionDenied) whoever may not edit it."""
        raise NotImplementedError

    def initial(self) -> dict[str, Any]:
        return {}

    def form_kwargs(self, request: HttpRequest) -> dict[str, Any]:
        return {}

    def save(self, request: HttpRequest, form: forms.Form) -> Any:
        """Write the form's cleaned data; raise ValidationError or Refused to refuse."""
        raise NotImplementedError

    def saved(self, request: HttpRequest, obj: Any) -> HttpResponse:
        """After a save: the message and where to go."""
        messages.success(request, f"Saved {obj}.")
        return redirect(obj)

    def refused(self, request: HttpRequest, **kwargs: Any) -> None:
        """After a refusal: read again what the failed write may have changed in memory."""
        self.load(request, **kwargs)

    def context(self, request: HttpRequest, form: forms.Form) -> dict[str, Any]:
        return {"form": form}

    def get(self, request: HttpRequest, **kwargs: Any) -> HttpResponse:
        self.load(request, **kwargs)
        return self.page(
            request, self.form_class(initial=self.initial(), **self.form_kwargs(request))
        )

    def post(self, request: HttpRequest, **kwargs: Any) -> HttpResponse:
        self.load(request, **kwargs)
        form = self.form_class(request.POST, initial=self.initial(), **self.form_kwargs(request))
        if form.is_valid():
            try:
                obj = self.save(request, form)
            except ValidationError as exc:
                add_errors(form, exc, prefix=self.error_prefix)
            except Refused as exc:
                add_errors(form, exc.errors, prefix=self.error_prefix)
            else:
                return self.saved(request, obj)
            self.refused(request, **kwargs)
        return self.page(request, form)

    def page(self, request: HttpRequest, form: forms.Form) -> HttpResponse:
        return render(request, self.template_name, self.context(request, form))
