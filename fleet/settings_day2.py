"""Day-2 settings (webhooks, RMA cases, drift), read from the environment like the rest of
fleet.settings, which imports everything here."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

from fleet.env import env


def _public_url(value: str) -> str:
    """CORRAL_PUBLIC_URL checked once, at start-up: a value that is no http(s) URL would
    otherwise go out in every webhook payload and evidence bundle as a link that leads
    nowhere, and be found by a vendor, not by whoever set it."""
    url = value.strip().rstrip("/")
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  (raises on a port that is no number or out of range)
    except ValueError:
        parts = urlsplit("")
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.query
        or parts.fragment
        or any(c.isspace() for c in url)
    ):
        raise ImproperlyConfigured(
            f"CORRAL_PUBLIC_URL {value!r} is not an http:// or https:// address "
            "(e.g. https://corral.example.net): the links Corral sends out start with it"
        )
    return url


# Absolute links in webhook payloads and RMA evidence bundles (anything read outside
# Corral) start with this: the address people reach Corral at. The default is the one
# `make run` prints (devtools/run.py sets it to the port it serves on).
CORRAL_PUBLIC_URL = _public_url(env.str("CORRAL_PUBLIC_URL", default="http://127.0.0.1:8000"))

# Outbound webhooks (core/, docs/webhooks.md). Pumps run on their own queue so a slow
# receiver never holds a worker slot that node operations need.
CORRAL_WEBHOOK_QUEUE = env.str("CORRAL_WEBHOOK_QUEUE", default="webhooks")
CORRAL_WEBHOOK_TIMEOUT_SECONDS = env.float("CORRAL_WEBHOOK_TIMEOUT_SECONDS", default=10.0)
# Retries wait these many seconds after the 1st, 2nd... failure (the last one repeats) and
# stop this many hours after the event (the delivery is then `failed`).
CORRAL_WEBHOOK_BACKOFF_SECONDS = env.numbers(
    "CORRAL_WEBHOOK_BACKOFF_SECONDS", default=[5, 30, 120, 600, 1800, 3600, 7200]
)
CORRAL_WEBHOOK_RETRY_HOURS = env.float("CORRAL_WEBHOOK_RETRY_HOURS", default=24.0)
# A subscription is shown `failing` after this many failed attempts in a row, or once its
# failures have lasted this long; the next success clears it.
CORRAL_WEBHOOK_FAILING_ATTEMPTS = env.int("CORRAL_WEBHOOK_FAILING_ATTEMPTS", default=5)
CORRAL_WEBHOOK_FAILING_SECONDS = env.float("CORRAL_WEBHOOK_FAILING_SECONDS", default=600.0)
# A pump holds its subscription this long between renewals; a pump lost with its worker is
# replaced by the sweep once its lease has run out.
CORRAL_WEBHOOK_LEASE_SECONDS = env.float("CORRAL_WEBHOOK_LEASE_SECONDS", default=60.0)
# Deliveries read per query, and how long one pump run lasts before it hands over to a new
# message (well inside its soft time limit).
CORRAL_WEBHOOK_BATCH = env.int("CORRAL_WEBHOOK_BATCH", default=100)
CORRAL_WEBHOOK_PUMP_SECONDS = env.float("CORRAL_WEBHOOK_PUMP_SECONDS", default=120.0)
# Hours from opening an RMA case to its SLA due time, per priority ("p1=24,p2=72,...").
CORRAL_RMA_SLA_HOURS = env.numbers_by_key(
    "CORRAL_RMA_SLA_HOURS", default={"p1": 24, "p2": 72, "p3": 168, "p4": 336}
)
# Drift (docs/drift.md): an OK observation older than this reads as stale on the matrix.
CORRAL_DRIFT_STALE_HOURS = env.float("CORRAL_DRIFT_STALE_HOURS", default=72.0)
# Nodes the drift sweep recomputes per run (a baseline change reaches the rest next run).
CORRAL_DRIFT_SWEEP_BATCH = env.int("CORRAL_DRIFT_SWEEP_BATCH", default=5000)
# Firmware inventory of in-service nodes is re-read this often, at most N nodes per site
# per sweep, spread over the sweep interval, so drift after admission is seen without
# hammering a site's BMCs.
CORRAL_FIRMWARE_REFRESH_HOURS = env.float("CORRAL_FIRMWARE_REFRESH_HOURS", default=24.0)
CORRAL_FIRMWARE_REFRESH_PER_SITE = env.int("CORRAL_FIRMWARE_REFRESH_PER_SITE", default=10)
# Managers' reports (docs/reports.md). A finished UTC day is rolled this long after its
# midnight, so transitions still committing at midnight are in it.
CORRAL_REPORTS_ROLLUP_GRACE_SECONDS = env.float("CORRAL_REPORTS_ROLLUP_GRACE_SECONDS", default=600)
# A rack reaches revenue when this share of its GPUs is in service at once.
CORRAL_RACK_REVENUE_THRESHOLD = env.float("CORRAL_RACK_REVENUE_THRESHOLD", default=0.95)
# The currency a new GPU price is in unless one is given.
CORRAL_CURRENCY = env.str("CORRAL_CURRENCY", default="USD")
# Slurm (provisioning.schedulers.slurm, docs/scheduling.md), chosen with
# CORRAL_SCHEDULER=provisioning.schedulers.slurm.SlurmScheduler. The conf path is handed
# to scontrol/squeue as SLURM_CONF (empty: Slurm's default, /etc/slurm/slurm.conf); the bin
# dir is where they live (empty: PATH). A command that has not answered by the timeout
# counts as a controller that is not answering (retried), not as a refusal.
CORRAL_SLURM_CONF = env.str("CORRAL_SLURM_CONF", default="")
CORRAL_SLURM_BIN_DIR = env.str("CORRAL_SLURM_BIN_DIR", default="")
CORRAL_SLURM_TIMEOUT_SECONDS = env.float("CORRAL_SLURM_TIMEOUT_SECONDS", default=10.0)
# Health events and policy (docs/health.md). A recycle or RMA the policy decides is held
# when it would take more than this share of a rack's / a site's nodes out of service;
# at least the minimum may always be out, so a small rack can still heal one node.
CORRAL_HEALTH_RACK_MAX_OUT_PERCENT = env.float("CORRAL_HEALTH_RACK_MAX_OUT_PERCENT", default=10.0)
CORRAL_HEALTH_RACK_MIN_OUT = env.int("CORRAL_HEALTH_RACK_MIN_OUT", default=1)
CORRAL_HEALTH_SITE_MAX_OUT_PERCENT = env.float("CORRAL_HEALTH_SITE_MAX_OUT_PERCENT", default=10.0)
CORRAL_HEALTH_SITE_MIN_OUT = env.int("CORRAL_HEALTH_SITE_MIN_OUT", default=1)
# No new automatic action on a node this long after the policy started one there.
CORRAL_HEALTH_COOLDOWN_MINUTES = env.float("CORRAL_HEALTH_COOLDOWN_MINUTES", default=30.0)
# Automatic actions pause (the breaker opens) when this many policy-started recycles
# failed within the window; an admin closes it.
CORRAL_HEALTH_BREAKER_FAILURES = env.int("CORRAL_HEALTH_BREAKER_FAILURES", default=3)
CORRAL_HEALTH_BREAKER_WINDOW_MINUTES = env.float(
    "CORRAL_HEALTH_BREAKER_WINDOW_MINUTES", default=60.0
)
# An event dated further ahead than this is refused (a sender's clock is wrong).
CORRAL_HEALTH_MAX_FUTURE_SECONDS = env.float("CORRAL_HEALTH_MAX_FUTURE_SECONDS", default=300.0)
# Events held for capacity are considered again by beat for this long after they came.
CORRAL_HEALTH_RETRY_HELD_MINUTES = env.float("CORRAL_HEALTH_RETRY_HELD_MINUTES", default=60.0)

# Trust at join (docs/attestation.md). PEM files of the CAs that issue TPM endorsement-key
# certificates (the TPM vendors' roots and intermediates); empty: EK certificates are not
# chain-checked, and a node's EK is pinned at its first attested boot (trust on first use).
CORRAL_TPM_CA_FILES = env.list("CORRAL_TPM_CA_FILES", default=[])
# How long a node has between the attestation challenge and its quote.
CORRAL_ATTESTATION_CHALLENGE_SECONDS = env.int("CORRAL_ATTESTATION_CHALLENGE_SECONDS", default=600)
