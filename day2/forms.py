"""The campaign form: what a technician fills in to start a rolling reimage."""

from __future__ import annotations

from django import forms

from inventory.models import Rack, Site
from provisioning.deployments import image_choices


class CampaignForm(forms.Form):
    name = forms.CharField(max_length=100)
    image = forms.ChoiceField(choices=())
    site = forms.ModelChoiceField(Site.objects.order_by("name"), required=False)
    rack = forms.ModelChoiceField(
        Rack.objects.select_related("site").order_by("name"), required=False
    )
    drifted = forms.BooleanField(required=False, label="Only nodes the drift matrix shows drifted")
    max_unavailable_pct = forms.IntegerField(
        min_value=1, max_value=100, initial=10, label="At most % of a rack out at once"
    )
    pause_failed_pct = forms.IntegerField(
        min_value=0, max_value=100, initial=20, label="Pause when more than % fail"
    )
    reason = forms.CharField(required=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["image"].choices = image_choices()

    def clean(self):
        data = super().clean()
        if bool(data.get("site")) == bool(data.get("rack")):
            raise forms.ValidationError("Choose a site or a rack (one of them).")
        return data

    def selection(self) -> dict:
        data = self.cleaned_data
        selection: dict = (
            {"rack": data["rack"].pk} if data.get("rack") else {"site": data["site"].pk}
        )
        if data.get("drifted"):
            selection["drifted"] = True
        return selection
