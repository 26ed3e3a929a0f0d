"""`manage.py health_policy`: the effective policy table, in the order rows are tried;
with --kind/--code, which row decides such an event and what it decides."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from health import policy
from health.choices import Kind
from health.classify import CodeError, event_class, normalise_code


class Command(BaseCommand):
    help = "Show the effective health policy, or which row decides one event."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--kind", choices=Kind.values)
        parser.add_argument("--code", help="XID number, ECC type, BMC status ...")
        parser.add_argument("--gpu-model", default="")

    def handle(self, *args, kind=None, code=None, gpu_model="", **options) -> None:
        if kind or code:
            self._explain(kind, code, gpu_model)
            return
        rows = policy.effective_rows()
        self.stdout.write(f"{'prio':>5}  {'kind':8} {'match':14} {'gpu model':12} action")
        for r in rows:
            where = f"{r['kind']:8} {r['match']:14} {r['gpu_model']:12}"
            self.stdout.write(f"{r['priority']:>5}  {where} {r['action']}")
        self.stdout.write(f"{len(rows)} enabled rows; the first that matches decides.")

    def _explain(self, kind: str | None, code: str | None, gpu_model: str) -> None:
        if not (kind and code):
            raise CommandError("Give both --kind and --code.")
        try:
            code = normalise_code(kind, code)
        except CodeError as exc:
            raise CommandError(str(exc)) from None
        klass, name = event_class(kind, code)
        rule = policy.first_match(policy.rules(), kind, code, klass, gpu_model)
        label = f"{kind} {code}" + (f" ({name})" if name else "") + f", class {klass}"
        if rule is None:
            self.stdout.write(f"{label}: no row matches -> ignore")
        else:
            self.stdout.write(f"{label}: row {rule.pk} ({rule}) -> {rule.describe()}")
