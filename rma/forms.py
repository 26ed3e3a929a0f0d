"""Forms of the RMA pages. They validate; rma.services writes."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth import get_user_model
from django.db.models import Q

from inventory.permissions import site_of

from .choices import Resolution
from .models import Case
from .selectors import assignable_users, refusal


class _Styled:
    """Bootstrap classes on every widget, so templates can render `{{ field }}`."""

    def style(self) -> None:
        for field in self.fields.values():  # type: ignore[attr-defined]
            select = isinstance(field.widget, forms.Select)
            field.widget.attrs.setdefault(
                "class", "form-select form-select-sm" if select else "form-control form-control-sm"
            )


class CaseEditForm(_Styled, forms.ModelForm):
    """The fields a technician keeps up to date. The suspected part is two plain fields
    here; the other keys the gates found (PCI address, UUID, model) are kept."""

    suspected_name = forms.CharField(label="Suspected part", max_length=100, required=False)
    suspected_serial = forms.CharField(label="Part serial", max_length=100, required=False)
    ticket_url = forms.URLField(max_length=500, required=False, assume_scheme="https")

    class Meta:
        model = Case
        fields = ["priority", "assignee", "vendor", "vendor_case", "ticket", "ticket_url"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Who may work this case; the current assignee too, even after losing the role, so
        # editing another field does not quietly unassign them.
        eligible = assignable_users(site_of(self.instance.node)).values("pk")
        current = self.instance.assignee_id
        self.fields["assignee"].queryset = (
            get_user_model().objects.filter(Q(pk__in=eligible) | Q(pk=current)).order_by("username")
        )
        self.fields["assignee"].empty_label = "nobody"
        found = self.instance.suspected_component or {}
        self.fields["suspected_name"].initial = found.get("name", "")
        self.fields["suspected_serial"].initial = found.get("serial", "")
        self.style()

    def clean_ticket(self) -> str:
        """One ticket, one case: say which case has it (the constraint alone would only
        say it is violated, and not next to the field)."""
        ticket = self.cleaned_data["ticket"]
        if ticket:
            other = Case.objects.filter(ticket=ticket).exclude(pk=self.instance.pk).first()
            if other is not None:
                raise forms.ValidationError(f"{other} already has ticket {ticket}.")
        return ticket

    def changes(self) -> dict[str, Any]:
        """Only what the person changed: passing an unchanged priority would move an SLA
        due time someone set by hand (rma.services.update_case recomputes it)."""
        data = self.cleaned_data
        out = {f: data[f] for f in self.changed_data if f in self.Meta.fields}
        if {"suspected_name", "suspected_serial"} & set(self.changed_data):
            part = dict(self.instance.suspected_component or {})
            for key, value in (
                ("name", data["suspected_name"]),
                ("serial", data["suspected_serial"]),
            ):
                if value:
                    part[key] = value
                else:
                    part.pop(key, None)
            out["suspected_component"] = part
        return out


class NoteForm(forms.Form):
    body = forms.CharField(label="Note", widget=forms.Textarea(attrs={"rows": 2}), max_length=5000)


class PartForm(_Styled, forms.Form):
    component = forms.CharField(max_length=100)
    old_serial = forms.CharField(max_length=100, required=False)
    new_serial = forms.CharField(max_length=100, required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.style()


class CloseForm(forms.Form):
    resolution = forms.ChoiceField(choices=[("", "resolution…"), *Resolution.choices])
    note = forms.CharField(max_length=5000, required=False)


class BulkAssignForm(forms.Form):
    cases = forms.ModelMultipleChoiceField(
        queryset=Case.objects.all(), error_messages={"required": "Tick at least one case."}
    )
    assignee = forms.ModelChoiceField(
        queryset=None,
        empty_label="assign to…",
        error_messages={"required": "Pick who the cases go to."},
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["assignee"].queryset = assignable_users()

    def clean(self) -> dict[str, Any]:
        """Offered means able to work some site's cases; each ticked case is checked against
        its own site (a technician of dc1 takes no dc2 case)."""
        data = super().clean()
        cases, user = data.get("cases"), data.get("assignee")
        if cases is not None and user is not None:
            why = refusal(user, list(cases.select_related("node__rack")))
            if why:
                self.add_error("assignee", why)
        return data
