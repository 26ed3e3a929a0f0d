"""Browser forms. They parse what a person typed and render it; the rules are the API's:
values are checked by the API's own serializer fields and written through the same
services, whose messages (a placement clash, a BMC credential moved) land on the field
they name (core.editing.add_errors)."""

from __future__ import annotations

import re

from django import forms
from django.core.exceptions import ValidationError

from core import jsonsafe

from .api.serializers import LabelListField, MACField
from .choices import AttestationPolicy, BMCProtocol, BootMedia, NodeRole
from .models import Rack, Site

CONTROL = {"class": "form-control form-control-sm"}
SELECT = {"class": "form-select form-select-sm"}
CHECK = {"class": "form-check-input"}


def _api_field(field, value):
    """Run one of the API's serializer fields: its value, or its messages as a form error."""
    from rest_framework.exceptions import ValidationError as APIError

    try:
        return field.run_validation(value)
    except APIError as exc:
        detail = exc.detail if isinstance(exc.detail, list) else [exc.detail]
        raise ValidationError([str(m) for m in detail]) from None


class ActionForm(forms.Form):
    """What a node page's action button posts: a reason and `param.*` choices, checked as
    the API checks its body (the reason as NodeActionSerializer's, the params as storable
    JSON), since the page handed them straight to the service: a NUL was a 500."""

    reason = forms.CharField(required=False, strip=False, max_length=2000)

    def __init__(self, data):
        super().__init__(data)
        self.params = {k[len("param.") :]: v for k, v in data.items() if k.startswith("param.")}

    def clean(self):
        try:
            jsonsafe.check({"param": self.params})
        except jsonsafe.JSONRefused as exc:
            raise ValidationError(f"{exc.field}: {exc.detail}") from None
        return self.cleaned_data

    def error_text(self) -> str:
        """Every error in one line, each naming its field ("Reason: ...")."""
        return " ".join(
            f"{self.fields[name].label or name.capitalize()}: {message}"
            if name in self.fields
            else message
            for name, messages in self.errors.items()
            for message in messages
        )


class ImportForm(forms.Form):
    file = forms.FileField(
        label="CSV file",
        help_text="Columns: site, rack, rack_unit, serial, hostname, model, gpu_model, "
        "gpu_count, bmc_protocol, bmc_address, bmc_username, bmc_password, boot_mac; optional "
        "u_height, role, fabric, labels, boot_ip, bmc_port, bmc_verify_tls, system_id, "
        "gpu_system_id.",
    )
    update = forms.BooleanField(
        required=False,
        label="Update existing nodes",
        help_text="A row whose serial is already enrolled updates that node.",
    )

    def clean_file(self):
        f = self.cleaned_data["file"]
        if f.size > 20 * 1024 * 1024:
            raise forms.ValidationError("The file is larger than 20 MiB; split it.")
        return f


class NodeForm(forms.Form):
    hostname = forms.CharField(max_length=63, widget=forms.TextInput(CONTROL))
    serial = forms.CharField(max_length=100, widget=forms.TextInput(CONTROL))
    role = forms.ChoiceField(choices=NodeRole.choices, widget=forms.Select(SELECT))
    model = forms.CharField(max_length=100, required=False, widget=forms.TextInput(CONTROL))
    gpu_model = forms.CharField(
        label="GPU model", max_length=64, required=False, widget=forms.TextInput(CONTROL)
    )
    gpu_count = forms.IntegerField(
        label="GPU count", min_value=0, widget=forms.NumberInput(CONTROL)
    )
    fabric = forms.CharField(
        max_length=50,
        required=False,
        widget=forms.TextInput(CONTROL),
        help_text="Overrides the rack's fabric.",
    )
    rack = forms.ModelChoiceField(
        queryset=Rack.objects.none(), required=False, widget=forms.Select(SELECT)
    )
    rack_unit = forms.IntegerField(
        label="Rack unit",
        required=False,
        min_value=1,
        widget=forms.NumberInput(CONTROL),
        help_text="Lowest U the node occupies (1 = bottom).",
    )
    u_height = forms.IntegerField(
        label="Height (U)", min_value=1, widget=forms.NumberInput(CONTROL)
    )
    labels = forms.CharField(
        required=False,
        widget=forms.TextInput(CONTROL),
        help_text="Space- or comma-separated; a new label is created as you save.",
    )
    # Write-only, as on the BMC page: a move to another site's rack needs it again.
    bmc_password = forms.CharField(
        label="BMC password",
        required=False,
        strip=False,
        widget=forms.PasswordInput({**CONTROL, "autocomplete": "new-password"}, render_value=False),
        help_text="Needed only when the node moves to another site (or into or out of one): "
        "that site's worker sends it on its own BMC network.",
    )

    def __init__(self, *args, racks=None, **kwargs):
        super().__init__(*args, **kwargs)
        rack_field = self.fields["rack"]
        assert isinstance(rack_field, forms.ModelChoiceField)
        rack_field.queryset = racks if racks is not None else Rack.objects.select_related("site")

    def clean_labels(self) -> list[str]:
        names = re.split(r"[\s,;]+", self.cleaned_data["labels"].strip())
        return _api_field(LabelListField(), [n for n in names if n])


class BMCForm(forms.Form):
    protocol = forms.ChoiceField(choices=BMCProtocol.choices, widget=forms.Select(SELECT))
    address = forms.CharField(max_length=255, widget=forms.TextInput(CONTROL))
    port = forms.IntegerField(
        required=False, min_value=1, max_value=65535, widget=forms.NumberInput(CONTROL)
    )
    username = forms.CharField(max_length=64, widget=forms.TextInput(CONTROL))
    # Write-only: never rendered back (render_value=False); blank keeps the stored one.
    password = forms.CharField(
        required=False,
        strip=False,
        widget=forms.PasswordInput({**CONTROL, "autocomplete": "new-password"}, render_value=False),
        help_text="Leave blank to keep the stored password. Needed again when the address, "
        "port, protocol, user or system id changes, or TLS verification is turned off.",
    )
    system_id = forms.CharField(
        label="System id",
        max_length=200,
        required=False,
        widget=forms.TextInput({**CONTROL, "list": "reported-systems"}),
        help_text="For a BMC that manages several systems; empty = its only system.",
    )
    gpu_system_id = forms.CharField(
        label="GPU system id",
        max_length=200,
        required=False,
        widget=forms.TextInput({**CONTROL, "list": "reported-systems"}),
        help_text="The system holding this node's GPUs, when the BMC shows them as one of "
        "their own (GB200/GH200: HGX_Baseboard_0); empty = found from the BMC's vendor.",
    )
    verify_tls = forms.BooleanField(
        label="Verify TLS", required=False, widget=forms.CheckboxInput(CHECK)
    )


class InterfaceForm(forms.Form):
    name = forms.CharField(max_length=32, required=False, widget=forms.TextInput(CONTROL))
    mac = forms.CharField(
        label="MAC",
        max_length=23,
        widget=forms.TextInput(CONTROL),
        help_text="Any notation: 52:54:00:ab:cd:ef, 52-54-00-AB-CD-EF, 5254.00ab.cdef.",
    )
    ip = forms.CharField(label="IP", required=False, widget=forms.TextInput(CONTROL))
    boot = forms.BooleanField(
        required=False, widget=forms.CheckboxInput(CHECK), help_text="The NIC that network-boots."
    )
    fabric_rail = forms.IntegerField(required=False, min_value=0, widget=forms.NumberInput(CONTROL))

    def clean_mac(self) -> str:
        return _api_field(MACField(max_length=23), self.cleaned_data["mac"])

    def clean_ip(self) -> str | None:
        return self.cleaned_data["ip"].strip() or None


def _share_field(label: str, help_text: str) -> forms.FloatField:
    widget = forms.NumberInput(CONTROL)
    return forms.FloatField(
        label=label, required=False, min_value=0, max_value=100, widget=widget, help_text=help_text
    )


def _minimum_field(label: str, help_text: str) -> forms.IntegerField:
    widget = forms.NumberInput(CONTROL)
    return forms.IntegerField(
        label=label, required=False, min_value=0, widget=widget, help_text=help_text
    )


class SiteForm(forms.Form):
    """Rendered here, checked by the API's SiteSerializer (inventory.views_places)."""

    name = forms.CharField(max_length=100, widget=forms.TextInput(CONTROL))
    slug = forms.CharField(
        max_length=50,
        widget=forms.TextInput(CONTROL),
        help_text="Names the site's worker queue (site.<slug>).",
    )
    description = forms.CharField(required=False, widget=forms.Textarea({**CONTROL, "rows": 3}))
    attestation = forms.ChoiceField(
        choices=AttestationPolicy.choices,
        initial=AttestationPolicy.REQUIRED,
        required=False,  # not sent: the site keeps its policy
        widget=forms.Select(SELECT),
        help_text="Whether nodes without a TPM quote may be admitted here (admins only; "
        "docs/attestation.md).",
    )
    boot_media = forms.ChoiceField(
        label="Deploys boot from",
        choices=BootMedia.choices,
        initial=BootMedia.PXE,
        required=False,  # not sent: the site keeps its policy
        widget=forms.Select(SELECT),
        help_text="The network (PXE), or an ISO the BMC's virtual media inserts where there "
        "is no PXE (admins only; docs/boot-modes.md).",
    )
    bmc_networks = forms.CharField(
        label="BMC networks",
        required=False,
        widget=forms.Textarea({**CONTROL, "rows": 3}),
        help_text="One network per line (10.20.0.0/16): where this site's BMC addresses may "
        "be. Empty: any address the fleet-wide egress policy allows (admins only; "
        "docs/egress.md).",
    )

    rack_max_out_percent = _share_field(
        "Rack: most out of service (%)",
        "Share of a rack's nodes the health policy and campaigns may have out at once. "
        "Empty: the fleet-wide default (admins only; docs/health.md).",
    )
    rack_min_out = _minimum_field(
        "Rack: always allowed out",
        "Nodes of a rack that may be out whatever the share. Empty: the default.",
    )
    site_max_out_percent = _share_field(
        "Site: most out of service (%)",
        "Share of the site's nodes that may be out at once. Empty: the default.",
    )
    site_min_out = _minimum_field(
        "Site: always allowed out",
        "Nodes of the site that may be out whatever the share. Empty: the default.",
    )

    def clean_bmc_networks(self) -> list[str]:
        text = self.cleaned_data["bmc_networks"]
        return [n.strip() for n in text.replace(",", "\n").splitlines() if n.strip()]


class RackForm(forms.Form):
    """Rendered here, checked by the API's RackSerializer (inventory.views_places)."""

    site = forms.ModelChoiceField(queryset=Site.objects.none(), widget=forms.Select(SELECT))
    name = forms.CharField(max_length=100, widget=forms.TextInput(CONTROL))
    row = forms.CharField(max_length=20, required=False, widget=forms.TextInput(CONTROL))
    position = forms.IntegerField(required=False, min_value=0, widget=forms.NumberInput(CONTROL))
    u_height = forms.IntegerField(label="Height (U)", widget=forms.NumberInput(CONTROL))
    power_budget_kw = forms.DecimalField(
        label="Power budget (kW)", required=False, widget=forms.NumberInput(CONTROL)
    )
    leaf_switches = forms.CharField(
        label="Leaf switches",
        required=False,
        widget=forms.TextInput(CONTROL),
        help_text="Switch names, space- or comma-separated.",
    )
    fabric = forms.CharField(
        max_length=50,
        required=False,
        widget=forms.TextInput(CONTROL),
        help_text='Line rate class for gate thresholds, e.g. "ib-400g".',
    )
    delivered = forms.DateTimeField(
        required=False,
        widget=forms.DateTimeInput({**CONTROL, "type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
        help_text="When the rack arrived; rack-to-revenue counts from here.",
    )

    def __init__(self, *args, sites=None, **kwargs):
        super().__init__(*args, **kwargs)
        site_field = self.fields["site"]
        assert isinstance(site_field, forms.ModelChoiceField)
        site_field.queryset = sites if sites is not None else Site.objects.all()

    def clean_leaf_switches(self) -> list[str]:
        return [s for s in re.split(r"[\s,;]+", self.cleaned_data["leaf_switches"]) if s]
