"""The webhook event types this app sends (core.events), with what a receiver gets:
docs/webhooks.md's table is written from these."""

from core import events

EVENTS = [
    (
        "attestation.finished",
        (
            "a boot's TPM attestation was judged by the gate (passed, or failed with its "
            "reason; a changed TPM is a failure)"
        ),
        (
            "`node`, `status`, `reason`, `attestation` (id), `image`, `ek_fingerprint` "
            "([attestation.md](attestation.md))"
        ),
    ),
]


def register() -> None:
    events.register_all(EVENTS)
