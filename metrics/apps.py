from django.apps import AppConfig


class MetricsConfig(AppConfig):
    """/metrics for Prometheus (docs/metrics.md): the fleet's state read from the database
    at scrape time, and the counters every app keeps. It reads every app; none imports it."""

    name = "metrics"
    verbose_name = "Metrics"

    def ready(self) -> None:
        # Every app's counters are declared when its metrics module is imported; the ones
        # a process never imports for its own work still belong in a scrape and the docs.
        from attestation import metrics as _attestation  # noqa: F401
        from engine import metrics as _engine  # noqa: F401
        from provisioning import metrics as _provisioning  # noqa: F401
        from validation import metrics as _validation  # noqa: F401
        from webhooks import metrics as _webhooks  # noqa: F401

        from . import fleet, sensors, work  # noqa: F401  (their gauges' declarations)
