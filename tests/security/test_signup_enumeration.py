"""Sign-up does not say whether a username exists (issue 26, Build 5).

A stranger probing names sees the same page for a taken name as for a free one: the same
status and the same body apart from the CSRF token, for every way a sign-up can fail; a taken
name with otherwise valid details gets one neutral sentence and no account. Real validation
errors (password mismatch, password rules) are still shown.
"""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client

from frontend.signup import NOT_CREATED

pytestmark = pytest.mark.django_db

STRONG = "Str0ng-pass-phrase!"
# The CSRF token is printed twice: in the form and in the page's htmx headers.
CSRF = re.compile(rb'(name="csrfmiddlewaretoken" value="|"X-CSRFToken": ")[^"]*"')


@pytest.fixture(autouse=True)
def _quick_passwords(settings: object) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # type: ignore[attr-defined]


@pytest.fixture
def grace(db: object) -> User:
    return User.objects.create_user("grace", password=STRONG)


def post(username: str, password1: str, password2: str) -> tuple[int, bytes]:
    # A fresh client per attempt: one browser's throttle count is not what is compared.
    response = Client().post(
        "/accounts/signup/",
        {"username": username, "password1": password1, "password2": password2},
    )
    return response.status_code, CSRF.sub(b"", response.content)


@pytest.mark.parametrize(
    ("password1", "password2"),
    [(STRONG, STRONG + "x"), ("short", "short"), ("", "")],
    ids=["mismatch", "too-weak", "missing"],
)
def test_a_taken_name_fails_exactly_like_a_free_one(
    grace: User, password1: str, password2: str
) -> None:
    taken_status, taken_body = post("grace", password1, password2)
    grace.delete()  # the very same name, now free: only the account's existence differs
    free_status, free_body = post("grace", password1, password2)

    assert taken_status == free_status == 200
    assert taken_body == free_body
    assert b"already exists" not in taken_body
    assert b"errorlist" in taken_body  # the real error is still shown


def test_a_taken_name_with_valid_details_creates_nothing_and_names_nothing(grace: User) -> None:
    status, body = post("GRACE", STRONG, STRONG)

    assert status == 200
    assert NOT_CREATED.encode() in body
    assert b"already exists" not in body and b"errorlist" not in body
    assert User.objects.filter(username__iexact="grace").count() == 1
    assert User.objects.get(username="grace").check_password(STRONG)


def test_a_free_name_with_valid_details_still_signs_up(db: object) -> None:
    response = Client().post(
        "/accounts/signup/", {"username": "hedy", "password1": STRONG, "password2": STRONG}
    )

    assert response.status_code == 302
    assert User.objects.filter(username="hedy").exists()
