"""The reports' parameters, checked once for the dashboards and the API (NetBox's one
filterset for UI and API): a window, a site, a GPU model; each error names its field."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from django import forms
from django.conf import settings
from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from inventory.models import Rack, Site
from inventory.scope import SiteOutOfReach, pick_site, restrict

RANGES = {"7d": 7, "30d": 30, "90d": 90, "365d": 365}
GROUP_BY = ("state", "site", "rack", "gpu_model", "day")


@dataclass(frozen=True)
class Scope:
    """What a report covers: [start, end) (never past now), and optional filters."""

    start: datetime
    end: datetime
    site: Site | None = None
    gpu_model: str = ""
    rack: Rack | None = None

    @property
    def hours(self) -> float:
        return max(0.0, (self.end - self.start).total_seconds() / 3600)

    def nodes_q(self, prefix: str = "") -> Q:
        """The scope's site / rack / GPU model as a filter on nodes reached by `prefix`
        ("node__" from a span, "run__node__" from a check result)."""
        q = Q()
        if self.site is not None:
            q &= Q(**{f"{prefix}rack__site": self.site})
        if self.rack is not None:
            q &= Q(**{f"{prefix}rack": self.rack})
        if self.gpu_model:
            q &= Q(**{f"{prefix}gpu_model": self.gpu_model})
        return q


class MomentField(forms.CharField):
    """An ISO date (midnight UTC; as `to`, the end of that day) or an ISO date-time."""

    def __init__(self, *, end: bool = False, **kwargs):
        self.end = end
        super().__init__(required=False, **kwargs)

    def to_python(self, value):
        value = (super().to_python(value) or "").strip()
        if not value:
            return None
        moment = day = None
        # A bare date first: parse_datetime takes "2026-03-03" as its midnight, which would
        # make `to=2026-03-03` exclude the day it names.
        try:
            day = parse_date(value)
        except ValueError:
            day = None
        # An unencoded "+01:00" arrives as " 01:00": try the value as sent, then that.
        for candidate in () if day else (value, value[::-1].replace(" ", "+", 1)[::-1]):
            try:
                moment = parse_datetime(candidate)
            except ValueError:
                moment = None
            if moment is not None:
                break
        if moment is None and day is None:
            raise forms.ValidationError(
                "Use an ISO date (2026-11-01) or date-time (2026-11-01T08:00:00Z)."
            )
        if moment is None:
            assert isinstance(day, date)
            moment = datetime.combine(day, time.min, tzinfo=UTC)
            if self.end:
                moment += timedelta(days=1)
        if timezone.is_naive(moment):
            moment = moment.replace(tzinfo=UTC)
        return moment


class ReportForm(forms.Form):
    range = forms.ChoiceField(
        required=False,
        choices=[("", "30 days")]
        + [(k, k.replace("d", " days")) for k in RANGES]
        + [("custom", "custom")],
    )
    # `from` is a Python keyword: the field is from_ and the form maps the parameter.
    from_ = MomentField(label="From")
    to = MomentField(end=True, label="To")
    site = forms.CharField(required=False)
    gpu_model = forms.CharField(required=False, max_length=64)
    rack = forms.IntegerField(required=False, min_value=1)

    def __init__(self, data=None, *, user, **kwargs):
        # Whose report: a site's role reads its own sites' figures only (issue 36), so the
        # site defaults to its one site and another site or rack is "not found".
        self.user = user
        if data is not None:
            data = data.copy()
            if "from" in data and "from_" not in data:
                data["from_"] = data.get("from")
        super().__init__(data, **kwargs)

    def clean_site(self):
        slug = (self.cleaned_data.get("site") or "").strip()
        try:
            return pick_site(self.user, slug or None)
        except SiteOutOfReach as exc:
            raise forms.ValidationError(str(exc)) from None

    def clean_rack(self):
        pk = self.cleaned_data.get("rack")
        if pk is None:
            return None
        rack = restrict(Rack.objects.select_related("site"), self.user).filter(pk=pk).first()
        if rack is None:
            raise forms.ValidationError(f"No rack {pk}.")
        return rack

    def clean(self):
        data = super().clean()
        now = timezone.now()
        start, end = data.get("from_"), data.get("to")
        if "from_" in self.errors or "to" in self.errors:
            return data
        if start is None and end is None:
            days = RANGES.get(data.get("range") or "", 30)
            end = now
            start = end - timedelta(days=days)
        elif start is None:
            start = end - timedelta(days=30)
        elif end is None:
            end = now
        if start >= end:
            self.add_error("from_", "`from` must be before `to`.")
        elif start > now:
            self.add_error("from_", "`from` is in the future: there is no history there yet.")
        data["from_"], data["to"] = start, min(end, now)
        return data

    def scope(self) -> Scope:
        d = self.cleaned_data
        return Scope(d["from_"], d["to"], d.get("site"), d.get("gpu_model") or "", d.get("rack"))

    def api_errors(self) -> dict:
        """Errors keyed by the query parameter the caller sent (`from`, not `from_`)."""
        return {("from" if k == "from_" else k): v for k, v in self.errors.items()}


def threshold_value(raw: str | None) -> float:
    """The rack-to-revenue share: 0 < t ≤ 1; a ValueError names what is wrong."""
    if raw is None or raw == "":
        return float(settings.CORRAL_RACK_REVENUE_THRESHOLD)
    try:
        value = float(raw)
    except ValueError:
        raise ValueError("threshold must be a number between 0 and 1, e.g. 0.95") from None
    if not 0 < value <= 1:
        raise ValueError("threshold must be more than 0 and at most 1, e.g. 0.95")
    return round(value, 3)
