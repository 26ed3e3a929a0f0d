"""The shipped policy table (docs/health.md explains each row). Admins change it in the
API or the Django admin; this migration only seeds it."""

from django.db import migrations

W24 = {"count": 3, "window_minutes": 1440, "escalate_to": "recycle"}

DEFAULTS = [
    (10, "xid", "rma", "rma", {}, "NVIDIA service workflows (XID 48 double-bit ECC, NVLink "
     "workflows, 64 row-remap failure): the GPU needs the vendor."),
    (20, "xid", "reboot", "recycle", {}, "RESTART_BM / RESTART_VM, e.g. XID 79 (GPU fallen off "
     "the bus): the node must restart; recycle drains it, reimages and re-runs the gates, "
     "which open an RMA case if the GPU stays gone."),
    (30, "xid", "reset", "recycle", {}, "RESET_GPU (e.g. 62, 95, 119, 120): a reset needs an "
     "idle GPU; a recycle drains, resets by rebooting and re-validates."),
    (40, "xid", "investigate", "watch", W24, "UNEXPECTED_ERR_REPORT_ISSUE / CHECK_MECHANICALS / "
     "UPDATE_SWFW (e.g. 61): NVIDIA expects these not to happen; once is noted, three in "
     "24 h recycle the node and the gates judge it."),
    (41, "xid", "unknown", "watch", W24, "A code the catalog does not know: like investigate."),
    (50, "xid", "application", "ignore", {}, "RESTART_APP (13, 31, 68, 69, 94 ...): the "
     "job's fault, the node is fine."),
    (51, "xid", "informational", "ignore", {}, "IGNORE / follow the linked XID (43, 45, 63, "
     "92 ...): the earlier XID carries the verdict."),
    (90, "xid", "*", "watch", W24, "Safety net for a class added to the catalog later."),
    (100, "ecc", "uncorrectable", "rma", {}, "Uncorrectable (double-bit) ECC, what XID 48 "
     "reports: NVIDIA's XID 48 workflow, the memory is bad."),
    (110, "ecc", "*", "ignore", {}, "Correctable (single-bit) errors are corrected by the "
     "hardware, and row remapping retires the page."),
    (200, "nvlink", "*", "watch", W24, "NVLink errors are often a link retraining; repeated "
     "ones mean the link or the GPU, which the gates' NVLink checks find."),
    (300, "thermal", "*", "watch", W24, "One thermal slowdown is usually the room or a job; "
     "repeated ones on one node mean its cooling, which burn-in proves."),
    (400, "bmc", "critical", "recycle", {}, "The BMC's roll-up went critical (PSU, fan, "
     "temperature): drain and let the gates decide; a roll-up alone is not evidence "
     "enough for a vendor case."),
    (410, "bmc", "*", "ignore", {}, "Warning or back to ok: nothing to start."),
]


def seed(apps, schema_editor):
    HealthPolicy = apps.get_model("health", "HealthPolicy")
    HealthPolicy.objects.bulk_create(
        HealthPolicy(priority=p, kind=k, match=m, action=a, note=n, **watch)
        for p, k, m, a, watch, n in DEFAULTS
    )


def unseed(apps, schema_editor):
    HealthPolicy = apps.get_model("health", "HealthPolicy")
    for p, k, m, a, _, _ in DEFAULTS:
        HealthPolicy.objects.filter(priority=p, kind=k, match=m, action=a).delete()


class Migration(migrations.Migration):
    dependencies = [("health", "0001_initial")]

    operations = [migrations.RunPython(seed, unseed)]
