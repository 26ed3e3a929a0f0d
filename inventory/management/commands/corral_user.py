"""Create or update a browser user with a role: fleet-wide (a group), or in one site (a
site role, with --site).

Sets a new random password and prints it once (Corral keeps only its hash), or sets the
one read from standard input with --password-stdin, so it never sits in shell history or
in `ps`. The role given is added: an existing user keeps its other roles (admin › Users and
admin › Site roles take them away).
"""

import secrets
import sys

from django.contrib.auth.models import Group, User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from inventory.models import Site, SiteRole
from inventory.roles import ROLES


class Command(BaseCommand):
    help = "Create or update a user with a role (fleet-wide, or in one site) for the browser."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--group", required=True, help=f"the role: {', '.join(ROLES)}")
        parser.add_argument("--site", help="slug of the site the role holds in (else fleet-wide)")
        parser.add_argument("--email", default=None)
        parser.add_argument(
            "--password-stdin", action="store_true", help="read the password from stdin"
        )

    def handle(self, *args, username, group, site, email, password_stdin, **options):
        username = username.strip()
        if not username:
            raise CommandError("username must not be empty")
        if group not in ROLES:
            raise CommandError(f"Unknown role '{group}': give one of {', '.join(ROLES)}.")
        where = None
        if site:
            where = Site.objects.filter(slug=site).first()
            if where is None:
                known = ", ".join(Site.objects.values_list("slug", flat=True)) or "none yet"
                raise CommandError(f"No site '{site}' (sites: {known}).")
        password = self._password(password_stdin)
        user = User.objects.filter(username=username).first() or User(username=username)
        try:
            validate_password(password, user)
        except ValidationError as exc:
            raise CommandError("Password refused: " + " ".join(exc.messages)) from None
        with transaction.atomic():
            created = user.pk is None
            if email is not None:
                user.email = email
            user.is_active = True
            user.set_password(password)
            user.save()
            if where is None:
                user.groups.add(Group.objects.get_or_create(name=group)[0])
                role = f"{group} fleet-wide"
            else:
                SiteRole.objects.get_or_create(user=user, role=group, site=where)
                role = f"{group} in {where.slug}"
        self.stderr.write(f"{'created' if created else 'updated'} {username}: {role}")
        if not password_stdin:
            self.stdout.write(password)
            self.stderr.write("one-time password above: shown once, give it to the user")

    def _password(self, from_stdin: bool) -> str:
        if not from_stdin:
            return secrets.token_urlsafe(15)
        password = sys.stdin.readline().rstrip("\n")
        if not password:
            raise CommandError("--password-stdin: no password on standard input")
        return password
