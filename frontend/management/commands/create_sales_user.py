"""manage.py create_sales_user NAME: a sales engineer's account; prints its password once."""

from __future__ import annotations

import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.core.validators import validate_email
from django.db import transaction

SALES_GROUP = "sales"


class Command(BaseCommand):
    help = (
        "Create a sales engineer's account in the 'sales' group (sees every scenario, notes, "
        "quote references, compare) and print its password once."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="The username to sign in with, e.g. sam.sales")
        parser.add_argument("--email", default="", help="Printed on the PDF reports' covers.")
        parser.add_argument("--first-name", default="", help="Shown as 'Prepared by' on reports.")
        parser.add_argument("--last-name", default="")

    def handle(self, *args: Any, **options: Any) -> None:
        name = str(options["name"]).strip()
        if not name:
            raise CommandError("NAME: must not be empty")
        email = str(options["email"]).strip()
        if email:
            try:
                validate_email(email)
            except ValidationError as exc:
                raise CommandError(f"--email: not an e-mail address: {email!r}") from exc
        users = get_user_model()
        if users.objects.filter(username=name).exists():
            raise CommandError(f"NAME: a user called {name!r} already exists")
        password = secrets.token_urlsafe(15)
        with transaction.atomic():
            user = users.objects.create_user(
                username=name,
                email=email,
                password=password,
                first_name=options["first_name"],
                last_name=options["last_name"],
            )
            group, _ = Group.objects.get_or_create(name=SALES_GROUP)
            user.groups.add(group)
        self.stdout.write(f"Created sales engineer {name!r} in the '{SALES_GROUP}' group.")
        self.stdout.write(
            "Copy the password now: it is not stored in clear and is not shown again."
        )
        self.stdout.write(f"  password: {password}")
        self.stdout.write("Sign in at /accounts/login/; change it there via the admin if you wish.")
