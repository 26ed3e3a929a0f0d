"""Event kinds, policy decisions and what came of them: constants (+ display colour) only."""

from django.db import models


class Kind(models.TextChoices):
    XID = "xid", "XID"
    ECC = "ecc", "ECC"
    NVLINK = "nvlink", "NVLink"
    THERMAL = "thermal", "Thermal"
    BMC = "bmc", "BMC"


class Decision(models.TextChoices):
    IGNORE = "ignore", "Ignore"
    WATCH = "watch", "Watch"
    RECYCLE = "recycle", "Recycle"
    RMA = "rma", "RMA"


# What a watch row escalates to once its count is reached.
ESCALATIONS = (Decision.RECYCLE, Decision.RMA)


class Status(models.TextChoices):
    RECORDED = "recorded", "Recorded"  # nothing to start (ignore, or watching)
    STARTED = "started", "Started"  # the policy started an operation
    HELD = "held", "Held"  # a safety limit stopped it (held_for says which)
    NOT_STARTED = "not_started", "Not started"  # not legal now, or already in progress


class HeldFor(models.TextChoices):
    NONE = "", "—"
    RACK = "rack", "Rack share out of service"
    SITE = "site", "Site share out of service"
    COOLDOWN = "cooldown", "Node cool-down"
    BREAKER = "breaker", "Circuit breaker open"


# Held for capacity: beat tries these again once nodes come back (health.tasks).
RETRIED = frozenset({HeldFor.RACK, HeldFor.SITE})

DECISION_COLOURS: dict[str, str] = {
    Decision.IGNORE: "secondary",
    Decision.WATCH: "info",
    Decision.RECYCLE: "warning",
    Decision.RMA: "danger",
}
STATUS_COLOURS: dict[str, str] = {
    Status.RECORDED: "light",
    Status.STARTED: "success",
    Status.HELD: "warning",
    Status.NOT_STARTED: "secondary",
}
