"""Password guessing and sign-up spam are slowed down per client address."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from frontend.throttle import FORM_ATTEMPTS_PER_WINDOW

pytestmark = pytest.mark.django_db


def test_a_guesser_is_stopped_after_the_allowed_attempts_even_with_the_right_password(
    client: Client,
) -> None:
    from django.conf import settings

    User.objects.create_user("grace", password="correct-horse-battery")
    limit = settings.AXES_FAILURE_LIMIT  # django-axes counts failed sign-ins per address
    for _ in range(limit - 1):
        wrong = client.post("/accounts/login/", {"username": "grace", "password": "guess"})
        assert wrong.status_code == 200

    last_wrong = client.post("/accounts/login/", {"username": "grace", "password": "guess"})
    assert last_wrong.status_code == 429  # the failure that reaches the limit locks at once
    right = client.post(
        "/accounts/login/", {"username": "grace", "password": "correct-horse-battery"}
    )

    assert right.status_code == 429
    assert b"Too many attempts from your address" in right.content
    assert "_auth_user_id" not in client.session


def test_the_owner_signs_in_normally_within_the_limit(client: Client) -> None:
    User.objects.create_user("grace", password="correct-horse-battery")
    client.post("/accounts/login/", {"username": "grace", "password": "guess"})

    response = client.post(
        "/accounts/login/", {"username": "grace", "password": "correct-horse-battery"}
    )

    assert response.status_code == 302
    assert client.session["_auth_user_id"] == str(User.objects.get(username="grace").pk)


def test_sign_up_spam_is_refused_and_creates_no_account(client: Client) -> None:
    limit = FORM_ATTEMPTS_PER_WINDOW["signup"]
    for i in range(limit):
        client.post(
            "/accounts/signup/", {"username": f"bot{i}", "password1": "x", "password2": "y"}
        )

    refused = client.post(
        "/accounts/signup/",
        {
            "username": "bot-final",
            "password1": "Str0ng-pass-phrase!",
            "password2": "Str0ng-pass-phrase!",
        },
    )

    assert refused.status_code == 429
    assert not User.objects.filter(username="bot-final").exists()
