"""A site's capacity limits: how many of a rack's and of the site's nodes automatic work may
have out of service at once (docs/health.md: Safety limits).

One place reads them, so the health policy and campaigns cannot disagree about a site. A
site may set each limit (Site.rack_max_out_percent and the rest: data, set by an admin or a
fleet file); where it leaves one empty, the fleet-wide setting applies. The health policy
always keeps to the limits. A campaign has its own `max_unavailable_pct` per rack, and keeps
to the site's limits too where the site sets a share (`Limits.set_by_site`): a fleet-wide
default never lowers what an operator asked a campaign for.

"Out of service" is inventory's one definition (selectors.out_of_service).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from django.conf import settings

from .models import Site


@dataclass(frozen=True)
class Limits:
    rack_percent: float
    rack_min: int
    site_percent: float
    site_min: int
    set_by_site: bool  # the site sets a share of its own

    def rack_allows(self, total: int) -> int:
        return allowed_out(total, self.rack_percent, self.rack_min)

    def site_allows(self, total: int) -> int:
        return allowed_out(total, self.site_percent, self.site_min)


def allowed_out(total: int, percent: float, minimum: int) -> int:
    """How many of `total` nodes may be out: the share, rounded down, and at least the
    minimum (so a small rack can still heal one node)."""
    return max(minimum, math.floor(total * percent / 100))


def _given(value: float | int | None, default: float | int) -> float | int:
    return default if value is None else value


def of(site: Site) -> Limits:
    return Limits(
        rack_percent=_given(site.rack_max_out_percent, settings.CORRAL_HEALTH_RACK_MAX_OUT_PERCENT),
        rack_min=int(_given(site.rack_min_out, settings.CORRAL_HEALTH_RACK_MIN_OUT)),
        site_percent=_given(site.site_max_out_percent, settings.CORRAL_HEALTH_SITE_MAX_OUT_PERCENT),
        site_min=int(_given(site.site_min_out, settings.CORRAL_HEALTH_SITE_MIN_OUT)),
        set_by_site=site.rack_max_out_percent is not None or site.site_max_out_percent is not None,
    )
