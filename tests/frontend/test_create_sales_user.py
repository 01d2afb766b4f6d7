"""manage.py create_sales_user NAME: an account in the sales group, its password printed once."""

from __future__ import annotations

import io
import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client

from tests.frontend.conftest import make_scenario

pytestmark = pytest.mark.django_db


def test_the_new_account_signs_in_and_sees_the_sales_workspace(customer_user: Any) -> None:
    out = io.StringIO()
    call_command("create_sales_user", "sam.sales", "--email", "sam@example.com", stdout=out)
    printed = out.getvalue()
    password = re.search(r"password: (\S+)", printed)
    assert password is not None and len(password.group(1)) >= 16
    user = User.objects.get(username="sam.sales")
    assert user.groups.filter(name="sales").exists() and not user.is_staff
    assert password.group(1) not in user.password  # stored hashed only
    client = Client()
    signed_in = client.post(
        "/accounts/login/", {"username": "sam.sales", "password": password.group(1)}
    )
    assert signed_in.status_code == 302, signed_in.content.decode()[:500]
    make_scenario(name="Someone else's", owner=customer_user)
    html = client.get("/scenarios/").content.decode()
    assert "All scenarios" in html and "Someone else&#x27;s" in html


def test_refusals_name_the_problem() -> None:
    call_command("create_sales_user", "sam", stdout=io.StringIO())
    with pytest.raises(CommandError, match="NAME: a user called 'sam' already exists"):
        call_command("create_sales_user", "sam", stdout=io.StringIO())
    with pytest.raises(CommandError, match="--email"):
        call_command("create_sales_user", "sue", "--email", "nope", stdout=io.StringIO())
