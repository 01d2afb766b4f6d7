"""Every account changes its own password: a customer, a sales engineer, staff."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

pytestmark = pytest.mark.django_db

OLD = "correct-horse-battery"
NEW = "staple-lantern-orbit-42"


def _person(kind: str) -> User:
    user = User.objects.create_user(f"{kind}.person", password=OLD, is_staff=kind == "staff")
    if kind == "sales":
        user.groups.add(Group.objects.get_or_create(name="sales")[0])
    return user


def _change(client: Client, old: str, new: str) -> Any:
    return client.post(
        "/accounts/password/",
        {"old_password": old, "new_password1": new, "new_password2": new},
    )


@pytest.mark.parametrize("kind", ["customer", "sales", "staff"])
def test_a_signed_in_person_changes_their_password_and_stays_signed_in(kind: str) -> None:
    user = _person(kind)
    client = Client()
    client.force_login(user)
    page = client.get("/scenarios/").content.decode()
    assert 'href="/accounts/password/"' in page

    response = _change(client, OLD, NEW)

    assert response.status_code == 302
    assert response["Location"] == "/accounts/password/done/"
    assert client.get("/accounts/password/done/").status_code == 200
    user.refresh_from_db()
    assert user.check_password(NEW) and not user.check_password(OLD)
    assert client.get("/accounts/password/").status_code == 200  # session kept


def test_a_wrong_current_password_changes_nothing() -> None:
    user = _person("customer")
    client = Client()
    client.force_login(user)

    response = _change(client, "not-my-password", NEW)

    assert response.status_code == 200
    assert "Your old password was entered incorrectly" in response.content.decode()
    user.refresh_from_db()
    assert user.check_password(OLD)


def test_guessing_the_current_password_is_limited_per_address() -> None:
    user = _person("customer")
    client = Client()
    client.force_login(user)
    for _ in range(5):
        assert _change(client, "guess", NEW).status_code == 200

    response = _change(client, OLD, NEW)

    assert response.status_code == 429
    user.refresh_from_db()
    assert user.check_password(OLD)


def test_someone_signed_out_is_sent_to_sign_in() -> None:
    response = Client().get("/accounts/password/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")
