"""Settings checks for webhook delivery: a combination that would deliver twice is refused
at start-up, not found out from a receiver's duplicate tickets."""

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, register


@register()
def lease_outlasts_timeout(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    # A pump renews its lease between deliveries; one POST waiting out the whole timeout
    # must not let the lease lapse, or the sweep starts a second pump for the same
    # subscription and both send the same deliveries.
    lease = settings.CORRAL_WEBHOOK_LEASE_SECONDS
    timeout = settings.CORRAL_WEBHOOK_TIMEOUT_SECONDS
    if lease <= timeout:
        return [
            Error(
                f"CORRAL_WEBHOOK_LEASE_SECONDS ({lease:g}) must be more than "
                f"CORRAL_WEBHOOK_TIMEOUT_SECONDS ({timeout:g}): a pump waiting on a slow "
                "receiver would lose its lease and a second pump would deliver the same "
                "events again.",
                hint="Raise CORRAL_WEBHOOK_LEASE_SECONDS or lower the timeout.",
                id="corral.E010",
            )
        ]
    return []
