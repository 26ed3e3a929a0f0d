from django.contrib.auth.models import Group, User
from django.core.management.base import BaseCommand, CommandError
from rest_framework.authtoken.models import Token

from inventory.permissions import ROLES


class Command(BaseCommand):
    help = "Create (if needed) a user in a role group and print its API token."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--group", required=True, choices=ROLES)
        parser.add_argument("--rotate", action="store_true", help="Replace an existing token.")

    def handle(self, *args, username, group, rotate, **options):
        if not username.strip():
            raise CommandError("username must not be empty")
        user, created = User.objects.get_or_create(username=username)
        if created:
            user.set_unusable_password()
            user.save()
        user.groups.add(Group.objects.get_or_create(name=group)[0])
        if rotate:
            Token.objects.filter(user=user).delete()
        token, _ = Token.objects.get_or_create(user=user)
        self.stdout.write(token.key)
