import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from validation.models import GateProfile


class Command(BaseCommand):
    help = "Create or replace a gate profile from a JSON file (validated before saving)."

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--default", action="store_true", help="Make it the default.")

    def handle(self, *args, file, default, **options):
        try:
            with open(file) as fh:
                spec = json.load(fh)
        except (OSError, ValueError) as exc:
            raise CommandError(f"cannot read {file}: {exc}")
        if not isinstance(spec, dict) or not spec.get("name"):
            raise CommandError(f"{file}: a profile is a JSON object with a 'name'")
        with transaction.atomic():
            profile = GateProfile.objects.filter(name=spec["name"]).first() or GateProfile(
                name=spec["name"]
            )
            profile.spec = spec
            try:
                profile.full_clean()
            except ValidationError as exc:
                raise CommandError("; ".join(exc.messages))
            if default:
                GateProfile.objects.exclude(pk=profile.pk).update(is_default=False)
                profile.is_default = True
            profile.save()
        self.stdout.write(self.style.SUCCESS(f"Saved gate profile {profile.name}."))
