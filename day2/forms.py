"""The campaign form: what a technician fills in to plan and start a rolling campaign."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from inventory.forms import CHECK, CONTROL, SELECT
from inventory.models import Rack, Site
from inventory.scope import scope_form
from provisioning.deployments import image_choices

from . import kinds


class CampaignForm(forms.Form):
    """A site (every rack of it) or one rack. The rack's choices are those of the chosen
    site: the page reloads the rack field over HTMX when the site changes, and a rack of
    another site is refused naming both, never run on a selection the person did not see."""

    name = forms.CharField(max_length=100, widget=forms.TextInput(CONTROL))
    kind = forms.ChoiceField(
        choices=(),
        initial="reimage",
        required=False,  # none given: a reimage, as before converge campaigns
        widget=forms.Select(SELECT),
        help_text="Reimage: recycle to the image. Converge: firmware and BIOS settings to "
        "each node's baseline.",
    )
    image = forms.ChoiceField(
        choices=(), required=False, widget=forms.Select(SELECT), help_text="For a reimage."
    )
    site = forms.ModelChoiceField(
        Site.objects.order_by("name"), required=False, widget=forms.Select(SELECT)
    )
    rack = forms.ModelChoiceField(
        Rack.objects.select_related("site").order_by("site__name", "name"),
        required=False,
        widget=forms.Select(SELECT),
        help_text="Empty: every rack of the site.",
    )
    drifted = forms.BooleanField(
        required=False,
        label="Only nodes the drift matrix shows drifted",
        widget=forms.CheckboxInput(CHECK),
    )
    component = forms.CharField(
        required=False,
        max_length=100,
        label="Only nodes drifted on",
        help_text='A drift matrix component ("firmware.BMC", "bios.SriovEnable").',
        widget=forms.TextInput(CONTROL),
    )
    max_unavailable_pct = forms.IntegerField(
        min_value=1,
        max_value=100,
        initial=10,
        label="At most % of a rack out at once",
        widget=forms.NumberInput(CONTROL),
    )
    pause_failed_pct = forms.IntegerField(
        min_value=0,
        max_value=100,
        initial=20,
        label="Pause when more than % fail",
        widget=forms.NumberInput(CONTROL),
    )
    max_failures = forms.IntegerField(
        min_value=1,
        required=False,
        label="Pause after this many failures",
        help_text="Its failure budget; empty: only the percentage.",
        widget=forms.NumberInput(CONTROL),
    )
    reason = forms.CharField(required=False, widget=forms.TextInput(CONTROL))

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        if user is not None:
            scope_form(self, user)  # a site's role picks among its own sites and racks
        self.fields["kind"].choices = kinds.choices()
        self.fields["image"].choices = [("", "—"), *image_choices()]
        site = self.chosen_site()
        if site is not None:
            # Only the options shown: the field still knows every rack, so that clean()
            # can name the site of a rack from elsewhere instead of "not a valid choice".
            rack = self.fields["rack"]
            shown = rack.queryset.filter(site=site)
            rack.widget.choices = [("", rack.empty_label)] + [
                (r.pk, rack.label_from_instance(r)) for r in shown
            ]

    def clean_kind(self) -> str:
        return self.cleaned_data.get("kind") or "reimage"

    def chosen_site(self) -> Site | None:
        """The site in the data (or, unbound, the initial), None when none or no such site."""
        try:
            return self.fields["site"].clean(self["site"].value())
        except ValidationError:
            return None

    def clean(self):
        data = super().clean()
        site, rack = data.get("site"), data.get("rack")
        if self.has_error("site") or self.has_error("rack"):
            return data
        kind = kinds.KINDS.get(data.get("kind", ""))
        if kind is not None and kind.needs_image and not data.get("image"):
            self.add_error("image", f"A {kind.name} campaign needs an image: choose one.")
        if kind is not None and not kind.needs_image:
            data["image"] = None  # a converge takes none, whatever the list shows
        if site is None and rack is None:
            raise forms.ValidationError("Choose a site or a rack: a site for all its racks.")
        if site is not None and rack is not None and rack.site_id != site.pk:
            self.add_error(
                "rack",
                f"Rack {rack} is in site {rack.site.name}, not {site.name}: choose one of "
                f"{site.name}'s racks, or no rack for the whole site.",
            )
        return data

    def selection(self) -> dict:
        data = self.cleaned_data
        selection: dict = (
            {"rack": data["rack"].pk} if data.get("rack") else {"site": data["site"].pk}
        )
        if data.get("drifted"):
            selection["drifted"] = True
        if data.get("component"):
            selection["component"] = data["component"]
        return selection
