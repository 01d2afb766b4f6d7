"""NUL and other control characters are refused with 400 naming the field, on every form value,
query parameter and JSON string, before they reach PostgreSQL (which cannot store NUL); a
malformed id is a 400 or 404, never a 500."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from advisor.measurements.models import Measurement
from advisor.scenarios.models import Scenario
from frontend.models import QuestionnaireDraft
from tests.api.conftest import TWO_SERVER_TRAINING, Caller, token_caller
from tests.frontend.conftest import make_scenario

pytestmark = pytest.mark.django_db


@pytest.fixture
def client_a(db: Any) -> Caller:
    return token_caller("quotes-a")


@pytest.fixture
def sales_client(db: Any) -> Client:
    from django.contrib.auth.models import Group

    user = User.objects.create_user("sam.sales", password="correct-horse-battery")
    user.groups.add(Group.objects.get_or_create(name="sales")[0])
    client = Client()
    client.force_login(user)
    return client


def test_a_nul_in_the_questionnaire_is_refused_naming_the_field() -> None:
    visitor = Client()
    draft_url = visitor.post("/start/")["Location"]
    draft = QuestionnaireDraft.objects.get()
    before = dict(draft.answers)

    response = visitor.post(f"{draft_url}job/", {"name": "Cluster\x00 A"})

    assert response.status_code == 400
    assert "“name”" in response.content.decode()
    assert "U+0000" in response.content.decode()
    draft.refresh_from_db()
    assert draft.answers == before


def test_sales_notes_with_a_nul_are_refused_and_nothing_is_saved(sales_client: Client) -> None:
    scenario = make_scenario(name="Notes target")

    response = sales_client.post(f"/s/{scenario.pk}/notes", {"notes": "call back\x00"})

    assert response.status_code == 400
    assert "“notes”" in response.content.decode()
    scenario.refresh_from_db()
    assert scenario.notes == ""


def test_notes_keep_tabs_and_line_breaks(sales_client: Client) -> None:
    scenario = make_scenario(name="Notes target")

    response = sales_client.post(f"/s/{scenario.pk}/notes", {"notes": "line 1\r\n\tline 2"})

    assert response.status_code == 302
    scenario.refresh_from_db()
    assert scenario.notes == "line 1\r\n\tline 2"


@pytest.mark.parametrize("parameter", ["q", "customer"])
def test_a_nul_in_a_search_parameter_of_the_scenario_list_is_a_400(
    sales_client: Client, parameter: str
) -> None:
    response = sales_client.get("/scenarios/", {parameter: "acme\x00"})

    assert response.status_code == 400
    assert f"“{parameter}”" in response.content.decode()


def test_a_nul_in_an_api_query_parameter_is_a_400_in_the_api_shape(client_a: Caller) -> None:
    response = client_a.http.get("/api/v1/measurements/", {"customer": "acme\x00"})

    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert list(error["fields"]) == ["customer"]
    assert "U+0000" in error["fields"]["customer"][0]


@pytest.mark.parametrize(
    ("name", "shown"),
    [("Cluster\x00", "U+0000"), ("Bell\x07", "U+0007"), ("Half \ud800", "U+D800")],
)
def test_a_control_character_in_a_json_body_is_refused_naming_the_field(
    client_a: Caller, name: str, shown: str
) -> None:
    body = json.dumps({"name": name, "inputs": TWO_SERVER_TRAINING})  # \\u escapes in JSON

    response = client_a.http.post("/api/v1/scenarios/", body, content_type="application/json")

    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {
        "name": [f"must not contain control characters (found {shown})"]
    }
    assert Scenario.objects.count() == 0


def test_a_nul_inside_the_inputs_is_named_by_its_path(client_a: Caller) -> None:
    inputs = {**TWO_SERVER_TRAINING, "model": "llama3-8b\x00"}

    response = client_a.http.post(
        "/api/v1/scenarios/", {"name": "x", "inputs": inputs}, format="json"
    )

    assert response.status_code == 400
    assert list(response.json()["error"]["fields"]) == ["inputs.model"]


def test_an_uploaded_measurement_file_with_a_nul_is_refused(db: Any) -> None:
    user = User.objects.create_user("cora.customer", password="correct-horse-battery")
    client = Client()
    client.force_login(user)
    upload = SimpleUploadedFile("nccl.txt", b"# nccl-tests\n\x00\x00 binary\n")

    response = client.post("/measurements/", {"name": "Lab run", "file": upload})

    assert response.status_code == 400
    assert "U+0000" in response.content.decode()
    assert Measurement.objects.count() == 0


def test_a_malformed_scenario_id_in_the_comparison_is_a_400(sales_client: Client) -> None:
    first, second = make_scenario(name="A"), make_scenario(name="B")

    for url in ("/compare/", "/compare/comparison.csv", "/compare/comparison.pdf"):
        response = sales_client.get(url, {"s": [str(first.pk), "zzz"]})
        assert response.status_code == 400, url
    assert sales_client.get("/compare/", {"s": [str(first.pk), str(second.pk)]}).status_code == 200


def test_a_malformed_measurement_id_in_the_calibrate_form_is_a_400(db: Any) -> None:
    user = User.objects.create_user("cora.customer", password="correct-horse-battery")
    client = Client()
    client.force_login(user)
    scenario = make_scenario(owner=user)

    response = client.post(f"/s/{scenario.pk}/calibrate", {"measurement": "zzz"})

    assert response.status_code == 400
    assert scenario.runs.count() == 1


def test_a_multipart_body_without_a_boundary_is_refused_in_the_apis_shape(
    client_a: Caller,
) -> None:
    """Django cannot split a multipart body whose Content-Type names no boundary; reading the
    form raised in this middleware and Django answered its own HTML 400 where the API documents
    JSON (schemathesis found it on the what-if endpoint)."""
    scenario = make_scenario(name="What-if target")

    response = client_a.http.post(
        f"/api/v1/scenarios/{scenario.pk}/whatif/", b"x=1", content_type="multipart/form-data"
    )

    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert "boundary" in json.dumps(response.json()["error"]["fields"]["body"])


def test_a_page_form_without_a_multipart_boundary_is_a_400_page() -> None:
    response = Client().post("/start/", b"x=1", content_type="multipart/form-data")

    assert response.status_code == 400
    assert "“body”" in response.content.decode()
