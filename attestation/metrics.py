"""What attestation counts (docs/metrics.md): verdicts on quotes."""

from __future__ import annotations

from core import metrics

RESULTS = metrics.counter(
    "corral_attestations",
    "TPM attestations judged, by result: passed or failed.",
    ["result"],
    app="attestation",
)
