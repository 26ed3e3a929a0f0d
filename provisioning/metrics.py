"""What provisioning counts (docs/metrics.md): calls to BMCs and the boot front's answers.

The vendor label is the node's inspected manufacturer folded into a closed set, so a BMC
that reports "Dell Inc." and one that reports "DELL" count together and an unknown one
cannot add series."""

from __future__ import annotations

from core import metrics

BMC_CALLS = metrics.counter(
    "corral_bmc_calls",
    "Calls to BMCs (one capability call: power.get_power_state, inspect.inspect, ...; its "
    "retries count again), by protocol, vendor, call and outcome: ok; transient (no answer, "
    "busy, 5xx: retried); auth (credentials refused); unsupported; fatal (any other refusal); "
    "error (a fault of Corral's own).",
    ["protocol", "vendor", "call", "outcome"],
    app="provisioning",
)
BMC_CALL_SECONDS = metrics.histogram(
    "corral_bmc_call_duration_seconds",
    "How long a call to a BMC took, whatever its outcome, by protocol and vendor.",
    ["protocol", "vendor"],
    buckets=metrics.CALL_BUCKETS,
    app="provisioning",
)
BOOT_ANSWERS = metrics.counter(
    "corral_boot_answers",
    "Answers of the boot front (/boot/ipxe) by kind: deploy (an install), local (boot the "
    "disk), reboot (a stateless node's own boot: its image again), unknown (a MAC no node has), "
    "error (a script that would not render).",
    ["kind"],
    app="provisioning",
)
BOOT_ANSWER_SECONDS = metrics.histogram(
    "corral_boot_answer_duration_seconds",
    "How long /boot/ipxe took to answer, by where the answer came from: memory (the "
    "process's node copy) or database.",
    ["source"],
    buckets=metrics.ANSWER_BUCKETS,
    app="provisioning",
)

VENDORS = (
    ("hewlett", "hpe"),
    ("hpe", "hpe"),
    ("cray", "hpe"),
    ("dell", "dell"),
    ("lenovo", "lenovo"),
    ("supermicro", "supermicro"),
    ("nvidia", "nvidia"),
    ("gigabyte", "gigabyte"),
    ("quanta", "quanta"),
    ("inspur", "inspur"),
    ("wiwynn", "wiwynn"),
    ("foxconn", "foxconn"),
    ("asus", "asus"),
)


def vendor_label(manufacturer: object) -> str:
    """The vendor label for a system's Manufacturer: one of VENDORS' names, "other", or
    "unknown" before the node is inspected."""
    text = str(manufacturer or "").strip().lower()
    if not text:
        return "unknown"
    return next((label for word, label in VENDORS if word in text), "other")
