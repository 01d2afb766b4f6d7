"""Idempotency-Key: the same key and body return the same scenario, never a second one."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import IntegrityError

from advisor.scenarios.models import Scenario, ScenarioRun
from api.models import IdempotencyRecord
from api.services import scenario_submit_api
from tests.api.conftest import TWO_SERVER_TRAINING, Caller

pytestmark = pytest.mark.django_db

BODY = {"name": "Quote 17", "inputs": TWO_SERVER_TRAINING, "customer": "ACME"}


def post(caller: Caller, body: dict[str, Any], key: str | None = "quote-17") -> Any:
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key is not None else {}
    return caller.http.post("/api/v1/scenarios/", body, format="json", **headers)


def test_the_same_key_and_body_return_the_first_scenario(client_a: Caller) -> None:
    first = post(client_a, BODY)
    again = post(client_a, BODY)

    assert first.status_code == again.status_code == 202
    assert again.json() == first.json()
    assert "Idempotent-Replayed" not in first
    assert again["Idempotent-Replayed"] == "true"
    assert Scenario.objects.count() == 1
    assert ScenarioRun.objects.count() == 1


def test_key_order_and_whitespace_of_the_body_do_not_matter(client_a: Caller) -> None:
    first = post(client_a, BODY)
    reordered = {"customer": "ACME", "inputs": dict(reversed(TWO_SERVER_TRAINING.items()))}
    reordered["name"] = "Quote 17"

    again = post(client_a, reordered)

    assert again.json()["id"] == first.json()["id"]
    assert Scenario.objects.count() == 1


def test_the_same_key_with_another_body_is_a_409_and_creates_nothing(client_a: Caller) -> None:
    first = post(client_a, BODY)

    conflict = post(client_a, {**BODY, "customer": "Globex"})

    assert conflict.status_code == 409
    assert conflict.json() == {
        "error": {
            "code": "idempotency_conflict",
            "message": "This Idempotency-Key was already used with a different request body; "
            "use a new key for a new scenario.",
            "fields": {"Idempotency-Key": ["already used with a different request body"]},
        }
    }
    assert list(Scenario.objects.values_list("pk", flat=True)) == [
        Scenario.objects.get(pk=first.json()["id"]).pk
    ]
    assert Scenario.objects.get().customer == "ACME"


def test_different_keys_make_different_scenarios(client_a: Caller) -> None:
    post(client_a, BODY, key="one")
    post(client_a, BODY, key="two")

    assert Scenario.objects.count() == 2


def test_without_a_key_every_post_makes_a_scenario(client_a: Caller) -> None:
    post(client_a, BODY, key=None)
    post(client_a, BODY, key=None)

    assert Scenario.objects.count() == 2
    assert IdempotencyRecord.objects.count() == 0


def test_keys_are_per_client(client_a: Caller, client_b: Caller) -> None:
    mine = post(client_a, BODY)
    theirs = post(client_b, BODY)

    assert theirs.status_code == 202
    assert theirs.json()["id"] != mine.json()["id"]
    assert Scenario.objects.count() == 2


def test_an_invalid_body_does_not_use_up_the_key(client_a: Caller) -> None:
    bad = post(client_a, {**BODY, "inputs": {**TWO_SERVER_TRAINING, "gpus": 0}})
    good = post(client_a, BODY)

    assert bad.status_code == 400
    assert good.status_code == 202
    assert Scenario.objects.count() == 1


def test_an_overlong_key_is_a_400(client_a: Caller) -> None:
    response = post(client_a, BODY, key="k" * 256)

    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {
        "Idempotency-Key": ["must be 1-255 printable characters"]
    }
    assert Scenario.objects.count() == 0


def test_a_request_that_loses_the_race_replays_the_winners_scenario(
    client_a: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two requests with one key both miss the lookup; the unique constraint decides."""
    winner = scenario_submit_api(owner=client_a.user, idempotency_key="race", **BODY)
    real_filter = IdempotencyRecord.objects.filter

    def lookup_misses_once(*args: Any, **kwargs: Any) -> Any:
        monkeypatch.setattr(IdempotencyRecord.objects, "filter", real_filter)
        return real_filter(pk=-1)

    monkeypatch.setattr(IdempotencyRecord.objects, "filter", lookup_misses_once)

    loser = scenario_submit_api(owner=client_a.user, idempotency_key="race", **BODY)

    assert loser.replayed is True
    assert loser.scenario.pk == winner.scenario.pk
    assert Scenario.objects.count() == 1
    assert ScenarioRun.objects.count() == 1


def test_the_constraint_allows_one_record_per_client_and_key(client_a: Caller) -> None:
    submission = scenario_submit_api(owner=client_a.user, idempotency_key="k", **BODY)

    with pytest.raises(IntegrityError):
        IdempotencyRecord.objects.create(
            owner=client_a.user, key="k", request_hash="x", scenario=submission.scenario
        )
