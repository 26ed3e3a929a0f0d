"""Copy the cases of the old open/closed `inventory.RMACase` into `rma.Case` before that
table is dropped: open ones stay open (SLA from their opening at P3), closed ones keep
their closing time, with their free-text resolution as a note."""

from datetime import timedelta

from django.db import migrations


def copy(apps, schema_editor):
    Old = apps.get_model("inventory", "RMACase")
    Case = apps.get_model("rma", "Case")
    CaseEvent = apps.get_model("rma", "CaseEvent")
    seen_tickets = set()
    for old in Old.objects.order_by("pk"):
        closed = old.status == "closed"
        # Ticket ids are unique now; a repeat (never enforced before) is kept as a note.
        ticket = old.ticket if old.ticket not in seen_tickets else ""
        seen_tickets.add(old.ticket)
        case = Case.objects.create(
            node_id=old.node_id,
            status="closed" if closed else "open",
            resolution="repaired" if closed else "",
            reason=old.reason,
            priority="p3",
            ticket=ticket,
            sla_due=old.opened + timedelta(hours=168),
            evidence=old.evidence or {},
            gate_run_id=(old.evidence or {}).get("gate_run"),
            opened_by=old.opened_by,
            opened=old.opened,
            updated=old.closed or old.opened,
            closed=old.closed,
        )
        CaseEvent.objects.create(
            case=case, kind="opened", actor=old.opened_by, to_status="open", note=old.reason
        )
        if old.ticket and not ticket:
            CaseEvent.objects.create(
                case=case, kind="note", actor="system", note=f"ticket (shared): {old.ticket}"
            )
        if closed:
            CaseEvent.objects.create(
                case=case,
                kind="transition",
                actor="system",
                from_status="open",
                to_status="closed",
                note=f"repaired: {old.resolution}".rstrip(": "),
            )


class Migration(migrations.Migration):
    dependencies = [
        ("rma", "0001_initial"),
        ("inventory", "0010_operation_sent"),
    ]

    operations = [migrations.RunPython(copy, migrations.RunPython.noop)]
