"""One JSON error shape for every failure, and never a stack trace."""

from __future__ import annotations

import json
from typing import Any

import pytest

from advisor.scenarios.models import Scenario
from tests.api.conftest import TWO_SERVER_TRAINING, Caller

pytestmark = pytest.mark.django_db


def assert_error_shape(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"code", "message", "fields"}
    assert body["error"]["code"] == code
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return dict(body["error"])


def test_an_unsupported_method_is_a_405(client_a: Caller) -> None:
    error = assert_error_shape(
        client_a.http.delete("/api/v1/scenarios/"), 405, "method_not_allowed"
    )
    assert error["message"] == 'Method "DELETE" not allowed.'


def test_a_body_that_is_not_json_is_a_415(client_a: Caller) -> None:
    response = client_a.http.post(
        "/api/v1/scenarios/", "name=x", content_type="application/x-www-form-urlencoded"
    )

    assert_error_shape(response, 415, "unsupported_media_type")
    assert Scenario.objects.count() == 0


def test_malformed_json_is_a_400_parse_error(client_a: Caller) -> None:
    response = client_a.http.post(
        "/api/v1/scenarios/", '{"name": "x", ', content_type="application/json"
    )

    error = assert_error_shape(response, 400, "parse_error")
    assert error["message"].startswith("JSON parse error")


def test_nan_is_not_json(client_a: Caller) -> None:
    body = '{"inputs": {"workload": "training", "gpus": NaN}}'

    response = client_a.http.post("/api/v1/evaluate/", body, content_type="application/json")

    assert_error_shape(response, 400, "parse_error")


def test_a_body_over_the_size_limit_is_a_413_and_is_not_read(
    client_a: Caller, settings: Any
) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 2048
    body = json.dumps({"name": "x" * 4096, "inputs": TWO_SERVER_TRAINING})

    response = client_a.http.post("/api/v1/scenarios/", body, content_type="application/json")

    error = assert_error_shape(response, 413, "payload_too_large")
    assert error["message"] == "The request body is larger than the limit of 2048 bytes."
    assert Scenario.objects.count() == 0


def test_an_unknown_url_under_the_api_is_a_json_404(client_a: Caller) -> None:
    error = assert_error_shape(client_a.http.get("/api/v1/nothing-here/"), 404, "not_found")
    assert error["message"] == "No such endpoint."


def test_a_url_carrying_a_line_feed_is_a_json_404_too(client_a: Caller) -> None:
    """The catch-all's "." stopped at a line feed, so such a path fell through to Django's HTML
    404 (schemathesis: POST /api/v1/scenarios/<id with %0A>/whatif/)."""
    for path in ("/api/v1/scenarios/%0A/whatif/", "/api/v1/a%0Ab/"):
        response = client_a.http.post(path, {}, format="json")
        error = assert_error_shape(response, 404, "not_found")
        assert error["message"] == "No such endpoint."


def test_a_missing_trailing_slash_is_pointed_out(client_a: Caller) -> None:
    error = assert_error_shape(client_a.http.get("/api/v1/scenarios"), 404, "not_found")
    assert error["message"] == "No such endpoint; did you mean /api/v1/scenarios/ ?"


def test_an_id_that_is_not_a_uuid_is_a_404(client_a: Caller) -> None:
    assert_error_shape(client_a.http.get("/api/v1/scenarios/42/"), 404, "not_found")


def test_a_bug_is_a_500_in_the_same_shape_without_a_stack_trace(
    client_a: Caller, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def explode(**kwargs: Any) -> None:
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr("api.apis.scenarios.scenario_list_visible", explode)

    response = client_a.http.get("/api/v1/scenarios/")

    error = assert_error_shape(response, 500, "server_error")
    assert error["message"] == "Something went wrong on our side; it has been logged."
    assert "secret internal detail" not in response.content.decode()
    assert "Traceback" not in response.content.decode()
    assert "secret internal detail" in caplog.text  # but the server logs it


def test_an_engine_bug_in_a_synchronous_evaluation_is_a_500_not_a_traceback(
    client_a: Caller, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_engine(*args: Any, **kwargs: Any) -> None:
        raise ZeroDivisionError("division by zero in topology")

    monkeypatch.setattr("api.apis.quotes.evaluate_inputs", broken_engine)

    response = client_a.http.post(
        "/api/v1/evaluate/", {"inputs": TWO_SERVER_TRAINING}, format="json"
    )

    assert_error_shape(response, 500, "server_error")
    assert "topology" not in response.content.decode()


def test_asking_for_html_is_a_406_answered_in_json(client_a: Caller) -> None:
    response = client_a.http.get("/api/v1/catalog/", HTTP_ACCEPT="text/html")

    assert_error_shape(response, 406, "not_acceptable")
