"""A bounded, repeatable attack pass (issue 26, "a repeat of the attack pass").

Walks the URLconf and sends, per route, a handful of hostile requests: a NUL or other control
character in a query parameter, a malformed id, unknown body fields on every API POST, and
negative / zero / huge scenario inputs; plus oversized and adversarial nccl-tests uploads
through the web form and the API. Every answer must be below 500 and arrive within 2 s; the
API's refusals must name the field. The probe count is bounded (a few per route) so this runs
in the ordinary suite.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from advisor.measurements.models import Measurement
from advisor.scenarios.models import Scenario
from tests.api.conftest import TWO_SERVER_TRAINING, Caller, token_caller
from tests.frontend.conftest import make_scenario

pytestmark = pytest.mark.django_db

BUDGET_S = 2.0
HOSTILE = ["\x00", "\x01", "\x1b[2J", "\x7f"]
MALFORMED_IDS = ["zzz", "00000000-0000-0000-0000-00000000000g", "1", "%00"]
CONVERTER = re.compile(r"<(?:(?P<kind>\w+):)?(?P<name>\w+)>")


def routes() -> Iterator[str]:
    """Every `path()` route of the project, with its converters left in place."""

    def walk(patterns: list[Any], prefix: str) -> Iterator[str]:
        for pattern in patterns:
            route = str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns, prefix + route.lstrip("^"))
            elif isinstance(pattern, URLPattern) and not route.startswith("^"):
                yield prefix + route

    yield from walk(get_resolver().url_patterns, "/")


def fill(route: str, ids: dict[str, str]) -> str:
    return CONVERTER.sub(lambda m: ids.get(m["name"], "x"), route)


def timed(call: Any, *args: Any, **kwargs: Any) -> tuple[Any, float]:
    start = time.perf_counter()
    response = call(*args, **kwargs)
    return response, time.perf_counter() - start


@pytest.fixture
def sales(db: Any) -> Client:
    user = User.objects.create_user("sam.sales", password="correct-horse-battery")
    user.groups.add(Group.objects.get_or_create(name="sales")[0])
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def caller(db: Any) -> Caller:
    return token_caller("quotes-a")


@pytest.fixture
def ids(caller: Caller) -> dict[str, str]:
    scenario = make_scenario(owner=caller.user, name="Probe target")
    run = scenario.runs.get()
    measurement = Measurement.objects.create(owner=caller.user, name="stored", text="")
    return {
        "scenario_id": str(scenario.pk),
        "pk": str(scenario.pk),
        "run_id": str(run.pk),
        "measurement_id": str(measurement.pk),
    }


def test_the_walk_finds_the_main_pages_and_api_endpoints() -> None:
    found = set(routes())
    assert "/api/v1/scenarios/" in found
    assert "/api/v1/runs/<uuid:run_id>/" in found
    assert "/accounts/signup/" in found
    assert len(found) > 20


def test_control_characters_in_a_query_parameter_never_give_a_5xx(
    sales: Client, caller: Caller, ids: dict[str, str]
) -> None:
    statuses: dict[str, set[int]] = {}
    for route in routes():
        if "admin" in route:
            continue
        url = fill(route, ids)
        client = caller.http if url.startswith("/api/") else sales
        for char in HOSTILE[:2]:
            for parameter in ("q", "customer", "s", "design"):
                response, took = timed(client.get, url, {parameter: f"a{char}b"})
                assert response.status_code < 500, (url, parameter, repr(char))
                assert took < BUDGET_S, (url, parameter, took)
                statuses.setdefault(route, set()).add(response.status_code)
    # The API answers a control character (and an unknown parameter) with a 400.
    assert statuses["/api/v1/measurements/"] == {400}
    assert statuses["/api/v1/scenarios/"] == {400}


def test_malformed_ids_in_paths_and_queries_are_400_or_404(
    sales: Client, caller: Caller, ids: dict[str, str]
) -> None:
    for route in routes():
        if "<uuid:" not in route or "admin" in route:
            continue
        for bad in MALFORMED_IDS:
            url = CONVERTER.sub(lambda m, bad=bad: bad if m["kind"] == "uuid" else "x", route)
            client = caller.http if url.startswith("/api/") else sales
            response, took = timed(client.get, url)
            assert response.status_code in (400, 404), (url, response.status_code)
            assert took < BUDGET_S
    for bad in MALFORMED_IDS:
        for url in ("/compare/", "/compare/comparison.csv"):
            assert sales.get(url, {"s": [ids["scenario_id"], bad]}).status_code == 400
        response = caller.http.get("/api/v1/measurements/", {"scenario": bad})
        assert response.status_code == 400


def api_posts() -> list[str]:
    return [
        r
        for r in routes()
        if r.startswith("/api/v1/")
        and any(
            word in r for word in ("scenarios/", "runs/", "whatif/", "acceptance/", "evaluate/")
        )
        and not r.endswith(("bom/", ".pdf", "/<uuid:run_id>/"))
    ]


def test_an_unknown_field_on_every_api_post_is_a_400_naming_it(
    caller: Caller, ids: dict[str, str]
) -> None:
    checked = []
    for route in api_posts():
        if route.endswith("<uuid:scenario_id>/"):
            continue  # the detail takes PATCH/DELETE, not POST
        url = fill(route, ids)
        response, took = timed(
            caller.http.post, url, {"not_a_field": 1, "name": "x"}, format="json"
        )
        assert response.status_code < 500, url
        assert took < BUDGET_S, url
        if response.status_code == 400:
            assert "not_a_field" in str(response.json()["error"]), url
            checked.append(route)
    assert "/api/v1/scenarios/" in checked
    assert "/api/v1/evaluate/" in checked


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("gpus", -16),
        ("gpus", 0),
        ("gpus", 10**12),
        ("gpus", 1e308),
        ("gpus_per_node", 0),
        ("gpus_per_node", -8),
        ("training.global_batch_sequences", -1),
        ("training.global_batch_sequences", 0),
        ("training.total_tokens", -1e10),
        ("training.total_tokens", 1e308),
    ],
)
def test_hostile_scenario_inputs_are_a_400_naming_the_field(
    caller: Caller, field: str, value: Any
) -> None:
    inputs: dict[str, Any] = {
        **TWO_SERVER_TRAINING,
        "training": dict(TWO_SERVER_TRAINING["training"]),
    }
    head, _, tail = field.partition(".")
    if tail:
        inputs[head][tail] = value
    else:
        inputs[head] = value

    for url, body in (
        ("/api/v1/scenarios/", {"name": "probe", "inputs": inputs}),
        ("/api/v1/evaluate/", {"inputs": inputs}),
    ):
        response, took = timed(caller.http.post, url, body, format="json")
        assert response.status_code == 400, (url, field, value, response.status_code)
        assert took < BUDGET_S, (url, field, took)
        assert field.split(".")[-1] in str(response.json()["error"]), (url, field)
    assert Scenario.objects.filter(name="probe").count() == 0


ADVERSARIAL_NCCL = {
    "digits": "# nccl-tests\n" + "1" * 60_000 + "x\n",
    "dotted": "# nccl-tests\n" + "1." * 30_000 + "x\n",
    "command": "# nccl-tests " + "-b 8 " * 12_000 + "\n",
    "columns": "#  size count type redop root time algbw busbw\n" + "  8 " * 15_000 + "\n",
    "unicode-digits": "# nccl-tests\n" + "\uff11\u0661" * 20_000 + "\n",
    "many-lines": "# nccl-tests\n" + "8 2 float sum -1 1.0 0.1 0.1 0\n" * 15_000,
}


@pytest.mark.parametrize("kind", sorted(ADVERSARIAL_NCCL))
def test_adversarial_nccl_uploads_are_answered_quickly_without_a_5xx(
    caller: Caller, kind: str
) -> None:
    text = ADVERSARIAL_NCCL[kind]
    web = Client()
    web.force_login(caller.user)
    upload = SimpleUploadedFile("nccl.txt", text.encode())

    response, took = timed(web.post, "/measurements/", {"name": "probe", "file": upload})
    assert response.status_code < 500 and took < BUDGET_S, ("web", kind, took)

    response, took = timed(
        caller.http.post,
        "/api/v1/measurements/",
        {"name": "probe", "text": text},
        format="json",
    )
    assert response.status_code < 500 and took < BUDGET_S, ("api", kind, took)


def test_an_upload_over_the_size_limit_is_refused_quickly(caller: Caller) -> None:
    text = "# nccl-tests\n" + "9" * 2_000_000
    web = Client()
    web.force_login(caller.user)

    response, took = timed(
        web.post,
        "/measurements/",
        {"name": "probe", "file": SimpleUploadedFile("n.txt", text.encode())},
    )
    assert 400 <= response.status_code < 500 and took < BUDGET_S, (response.status_code, took)
    response, took = timed(
        caller.http.post,
        "/api/v1/measurements/",
        {"name": "probe", "text": text},
        format="json",
    )
    assert 400 <= response.status_code < 500 and took < BUDGET_S, (response.status_code, took)
    assert Measurement.objects.filter(name="probe").count() == 0


@pytest.mark.parametrize("gpus", ["-16", "0", "1e308", "99999999999", "nan", "inf", "16.5"])
def test_hostile_gpu_counts_in_the_questionnaire_are_refused_on_the_page(
    db: Any, gpus: str
) -> None:
    visitor = Client()
    base = visitor.post("/start/")["Location"].rsplit("/", 2)[0]
    visitor.post(f"{base}/job/", {"nav": "next", "workload": "training", "scale": "many"})
    visitor.post(f"{base}/model/", {"nav": "next", "model_choice": "llama3-8b"})

    response, took = timed(
        visitor.post, f"{base}/hardware/", {"nav": "next", "gpu": "h100-sxm", "gpus": gpus}
    )

    # The step is shown again with the error next to the field; the wizard does not move on.
    assert response.status_code == 200 and took < BUDGET_S
    assert 'id="q-gpus"' in response.content.decode()
    assert 'aria-invalid="true"' in response.content.decode()
