"""Who gets in: tokens, revocation, staff sessions, and the management commands."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from advisor.scenarios.models import Scenario
from api.models import ApiClient
from api.selectors import key_hash
from tests.api.conftest import TWO_SERVER_TRAINING, Caller

pytestmark = pytest.mark.django_db


def create_client_with_the_command(name: str) -> str:
    out = StringIO()
    call_command("create_api_client", name, stdout=out)
    token_line = next(line for line in out.getvalue().splitlines() if "token:" in line)
    return token_line.split("token:")[1].strip()


def test_the_command_prints_a_key_once_and_stores_only_its_hash() -> None:
    key = create_client_with_the_command("acme-quotes")

    client = ApiClient.objects.get(name="acme-quotes")
    assert client.key_hash == key_hash(key)
    assert key not in {client.key_hash, client.key_prefix}
    assert key.startswith(client.key_prefix + ".")
    assert client.user.username == "api-client.acme-quotes"
    assert not client.user.has_usable_password()
    assert client.revoked_at is None


def test_the_printed_key_authenticates_as_the_clients_user() -> None:
    key = create_client_with_the_command("acme-quotes")
    http = APIClient()
    http.credentials(HTTP_AUTHORIZATION=f"Token {key}")

    response = http.post(
        "/api/v1/scenarios/", {"name": "Q", "inputs": TWO_SERVER_TRAINING}, format="json"
    )

    assert response.status_code == 202
    owner = Scenario.objects.get().owner
    assert owner == ApiClient.objects.get(name="acme-quotes").user


def test_a_second_client_with_the_same_name_is_refused() -> None:
    create_client_with_the_command("acme-quotes")

    with pytest.raises(CommandError, match="already exists"):
        call_command("create_api_client", "acme-quotes", stdout=StringIO())
    assert ApiClient.objects.count() == 1


def test_a_name_with_spaces_is_refused() -> None:
    with pytest.raises(CommandError, match="letters, digits"):
        call_command("create_api_client", "acme quotes", stdout=StringIO())
    assert ApiClient.objects.count() == 0
    assert get_user_model().objects.count() == 0


def test_a_revoked_token_gets_401_at_once(client_a: Caller) -> None:
    assert client_a.http.get("/api/v1/scenarios/").status_code == 200

    call_command("revoke_api_client", client_a.name, stdout=StringIO())

    response = client_a.http.get("/api/v1/scenarios/")
    assert response.status_code == 401
    assert response.json() == {
        "error": {
            "code": "authentication_failed",
            "message": "Invalid or revoked token.",
            "fields": {},
        }
    }
    assert response["WWW-Authenticate"] == "Token"


def test_revoking_an_unknown_client_is_an_error() -> None:
    with pytest.raises(CommandError, match="no API client named 'ghost'"):
        call_command("revoke_api_client", "ghost", stdout=StringIO())


@pytest.mark.parametrize(
    "header",
    [
        "Token not-a-real-key",
        "Token abc.def",
        "Token",
        "Token one two",
        "token ",
    ],
)
def test_wrong_or_malformed_tokens_get_401(client_a: Caller, header: str) -> None:
    http = APIClient()
    http.credentials(HTTP_AUTHORIZATION=header)

    response = http.get("/api/v1/scenarios/")

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "authentication_failed"


def test_a_key_with_the_right_prefix_but_wrong_secret_gets_401(client_a: Caller) -> None:
    prefix = client_a.key.split(".")[0]
    http = APIClient()
    http.credentials(HTTP_AUTHORIZATION=f"Token {prefix}.guessed")

    assert http.get("/api/v1/scenarios/").status_code == 401


def test_an_anonymous_caller_gets_401_with_a_token_challenge(anonymous: Caller) -> None:
    response = anonymous.http.get("/api/v1/scenarios/")

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert response.json() == {
        "error": {
            "code": "not_authenticated",
            "message": "Authentication credentials were not provided.",
            "fields": {},
        }
    }


def test_a_signed_in_staff_user_uses_the_api_with_the_session(staff: Caller) -> None:
    assert staff.http.get("/api/v1/scenarios/").status_code == 200


def test_a_signed_in_user_who_is_not_staff_gets_403(customer_user: Caller) -> None:
    response = customer_user.http.get("/api/v1/scenarios/")

    assert response.status_code == 403
    assert response.json()["error"] == {
        "code": "permission_denied",
        "message": "The API is open to API clients (token) and to signed-in staff.",
        "fields": {},
    }


def test_session_posts_need_a_csrf_token(staff: Caller) -> None:
    http = APIClient(enforce_csrf_checks=True)
    http.force_login(staff.user)

    response = http.post(
        "/api/v1/scenarios/", {"name": "Q", "inputs": TWO_SERVER_TRAINING}, format="json"
    )

    assert response.status_code == 403
    assert response.json()["error"]["code"] == "permission_denied"
    assert "CSRF" in response.json()["error"]["message"]
    assert Scenario.objects.count() == 0


def test_using_the_token_records_when_it_was_last_used(client_a: Caller) -> None:
    assert client_a.api_client is not None
    assert client_a.api_client.last_used_at is None

    client_a.http.get("/api/v1/scenarios/")

    client_a.api_client.refresh_from_db()
    assert client_a.api_client.last_used_at is not None
