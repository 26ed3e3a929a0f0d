"""Print a new API token for a (possibly new) user in a role group.

Tokens are stored hashed (django-rest-knox), so an existing key cannot be shown again:
every run prints a fresh one, valid CORRAL_TOKEN_TTL_DAYS. --rotate also revokes the
user's older tokens, so a key that leaked or that a script no longer needs stops working.
"""

from django.contrib.auth.models import Group, User
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from knox.models import AuthToken

from inventory.permissions import ROLES


class Command(BaseCommand):
    help = "Create (if needed) a user in a role group and print a new API token for it."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--group", required=True, choices=ROLES)
        parser.add_argument("--rotate", action="store_true", help="Revoke the user's older tokens.")

    def handle(self, *args, username, group, rotate, **options):
        if not username.strip():
            raise CommandError("username must not be empty")
        user, created = User.objects.get_or_create(username=username)
        if created:
            user.set_unusable_password()
            user.save()
        user.groups.add(Group.objects.get_or_create(name=group)[0])
        with transaction.atomic():
            if rotate:
                # The user's row lock makes rotations one at a time: two run at once each
                # deleted, then each created, and left two tokens; now the last one wins.
                User.objects.select_for_update().filter(pk=user.pk).first()
                AuthToken.objects.filter(user=user).delete()
            instance, key = AuthToken.objects.create(user=user)
        self.stdout.write(key)
        expiry = f"until {instance.expiry:%Y-%m-%d %H:%M} UTC" if instance.expiry else "forever"
        self.stderr.write(f"valid {expiry}; shown once, Corral keeps only its hash")
