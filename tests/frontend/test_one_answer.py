"""One job, one answer: the questionnaire's defaults are the engine's, and the web editor
keeps every input of a scenario it opens (a property over the whole scenario v1 schema)."""

from __future__ import annotations

import functools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.input.echo import scenario_echo
from advisor.engine.input.scenario import parse_scenario
from frontend import questionnaire as qn
from tests.support.schema_strategy import from_schema

CATALOG = default_catalog()
STEPS = qn.build_steps(CATALOG)
QUESTIONS = {q.name: q for s in STEPS for q in s.questions}


@functools.cache
def _scenario_schema() -> tuple[dict[str, Any], dict[str, Any]]:
    """The scenario v1 schema the API publishes, with the components it refers to."""
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    components = schema["components"]["schemas"]
    body = components["ScenarioCreateRequest"]["properties"]["inputs"]
    return body, components


def scenarios() -> st.SearchStrategy[dict[str, Any]]:
    return st.deferred(lambda: from_schema(*_scenario_schema()))


def _minimal(workload: str, **more: Any) -> dict[str, Any]:
    return {"workload": workload, "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 2048, **more}


@pytest.mark.parametrize("workload", ["training", "inference", "rag"])
def test_the_questionnaires_defaults_give_the_engine_what_the_api_default_gives_it(
    workload: str,
) -> None:
    answers = {
        **qn.default_answers(STEPS),
        "workload": workload,
        "model_choice": "llama3-70b",
        "gpu": "h100-sxm",
        "gpus": "2048",
    }
    from_web = parse_scenario(qn.answers_to_inputs(answers, CATALOG), CATALOG)
    # a RAG pipeline is a serving scenario with a rag section (every default: an empty one)
    api = _minimal("inference", rag={}) if workload == "rag" else _minimal(workload)
    from_api = parse_scenario(api, CATALOG)

    assert from_web == from_api
    assert from_web.constraints.team_skills == qn.ENGINE_CONSTRAINTS.team_skills
    assert from_web.constraints.gpu_pricing == qn.ENGINE_CONSTRAINTS.gpu_pricing


# What the job is (asked, never defaulted by the engine), and a custom model's shape.
_NOT_ENGINE_DEFAULTS = ("workload", "scale", "gpu", "gpus", "model_choice")


def test_every_default_the_questionnaire_shows_is_the_engines() -> None:
    def echoed(raw: dict[str, Any]) -> dict[str, Any]:
        return scenario_echo(parse_scenario(raw, CATALOG)).to_dict()

    parsed = echoed(_minimal("inference"))
    parsed["training"] = echoed(_minimal("training"))["training"]
    parsed["rag"] = echoed(_minimal("inference", rag={}))["rag"]
    for name, question in QUESTIONS.items():
        paths = qn.QUESTION_FIELDS.get(name, ())
        if not question.default or not paths or name in _NOT_ENGINE_DEFAULTS:
            continue
        engine = qn._get_path(parsed, paths[0])
        if name == "replicas":
            assert (question.default, engine) == ("auto", None)  # the engine chooses
            continue
        if name == "total_tokens_b":
            engine = engine / 1e9
        if name.startswith("custom_"):
            continue  # a preset model: no custom fields
        assert engine is not qn._MISSING, name
        shown = question.default
        assert shown in (str(engine), f"{engine:g}" if not isinstance(engine, str) else ""), name


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inputs=scenarios())
def test_a_scenario_opened_and_submitted_unchanged_in_the_web_editor_keeps_every_input(
    inputs: dict[str, Any],
) -> None:
    answers = qn.inputs_to_answers(inputs, CATALOG)

    assert qn.edited_inputs(inputs, answers, CATALOG) == inputs


def _leaves(data: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(data, dict):
        return {prefix: data}
    out: dict[str, Any] = {}
    for key, value in data.items():
        out.update(_leaves(value, f"{prefix}.{key}" if prefix else key))
    return out


def _another_answer(question: qn.Question, current: str) -> st.SearchStrategy[str]:
    if question.choices:
        others = [c.value for c in question.choices if c.value != current]
        return st.sampled_from(others)
    if question.kind in ("int", "float"):
        return st.integers(1, 4096).map(str).filter(lambda v: v != current)
    return st.text(max_size=10).filter(lambda v: v != current)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inputs=scenarios(), name=st.sampled_from(sorted(qn.QUESTION_FIELDS)), data=st.data())
def test_changing_one_answer_changes_only_the_fields_that_question_writes(
    inputs: dict[str, Any], name: str, data: st.DataObject
) -> None:
    answers = qn.inputs_to_answers(inputs, CATALOG)
    answers[name] = data.draw(_another_answer(QUESTIONS[name], answers.get(name, "")))

    out = qn.edited_inputs(inputs, answers, CATALOG)

    owned = qn.QUESTION_FIELDS[name]
    if name == "workload":
        owned = (*owned, "training", "inference", "rag", "parallelism")
    if name.startswith("custom_"):
        owned = (*owned, "model")  # a preset's id stays; a custom model changes one field

    def is_owned(path: str) -> bool:
        return any(path == p or path.startswith(f"{p}.") for p in owned)

    before = {p: v for p, v in _leaves(inputs).items() if not is_owned(p)}
    after = {p: v for p, v in _leaves(out).items() if not is_owned(p)}
    assert after == before


# --- Through the faces themselves: the wizard's pages and the API ----------------------------

API_MADE: dict[str, Any] = {
    "workload": "training",
    "model": "llama3-8b",
    "gpu": "h100-sxm",
    "gpus": 16,
    "sequence_length": 8192,
    "training": {"global_batch_tokens": 2_097_152, "total_tokens": 2.5e10},
    "parallelism": {"tp": 2, "micro_batch": 1},
    "design": {"fabric": "roce", "nic_gbps": 400, "nics_per_node": 8, "oversubscription": 1},
    "constraints": {
        "gpu_pricing": "owned",
        "gpu_hour_usd": 3.1,
        "utilization": 0.65,
        "allow_oversubscription": True,
        "pue": 1.15,
        "team_skills": "ethernet",
    },
    "name": "from the quoting system",
}


def _walk_unchanged(client: Any, location: str) -> Any:
    """Press Next on every page without touching an answer, then submit."""
    base = location.rstrip("/").rsplit("/", 1)[0]
    for step in ("job", "model", "hardware", "work", "priorities"):
        response = client.post(f"{base}/{step}/", {"nav": "next"})
        assert response.status_code == 302, response.content.decode()[:2000]
    return client.post(f"{base}/review/", {"nav": "submit"})


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("action", ["edit", "clone"])
def test_an_api_scenario_resubmitted_unchanged_in_the_web_editor_keeps_every_input(
    action: str,
) -> None:
    from django.test import Client

    from advisor.scenarios.models import Scenario
    from tests.api.conftest import token_caller

    api = token_caller("quotes")
    created = api.http.post(
        "/api/v1/scenarios/", {"name": "API-made", "inputs": API_MADE}, format="json"
    )
    assert created.status_code == 202, created.json()
    scenario = Scenario.objects.get(pk=created.json()["id"])
    from django.contrib.auth.models import Group, User

    engineer = User.objects.create_user("sam.sales", password="correct-horse-battery")
    engineer.groups.add(Group.objects.get_or_create(name="sales")[0])
    staff = Client()
    staff.force_login(engineer)

    opened = staff.post(f"/s/{scenario.pk}/{action}")
    assert opened.status_code == 302
    response = _walk_unchanged(staff, opened["Location"])

    assert response.status_code == 302
    target = Scenario.objects.get(pk=response["Location"].strip("/").rsplit("/", 1)[-1])
    assert (target.pk == scenario.pk) == (action == "edit")
    assert target.inputs == API_MADE


@pytest.mark.django_db(transaction=True)
def test_the_same_minimal_job_gets_the_same_recommendation_from_the_web_and_the_api() -> None:
    from django.test import Client

    from advisor.scenarios.models import Scenario
    from tests.api.conftest import token_caller

    minimal = {"workload": "training", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 2048}
    api = token_caller("quotes")
    created = api.http.post("/api/v1/scenarios/", {"name": "API", "inputs": minimal}, format="json")
    assert created.status_code == 202, created.json()

    web = Client()
    start = web.post("/start/")
    base = start["Location"].rstrip("/").rsplit("/", 1)[0]
    web.post(f"{base}/job/", {"nav": "next", "workload": "training", "scale": "many"})
    web.post(f"{base}/model/", {"nav": "next", "model_choice": "llama3-70b"})
    web.post(f"{base}/hardware/", {"nav": "next", "gpu": "h100-sxm", "gpus": "2048"})
    web.post(f"{base}/work/", {"nav": "next"})
    web.post(f"{base}/priorities/", {"nav": "next"})
    submitted = web.post(f"{base}/review/", {"nav": "submit"})
    assert submitted.status_code == 302

    from_api = Scenario.objects.get(pk=created.json()["id"])
    from_web = Scenario.objects.exclude(pk=from_api.pk).get()
    catalog = CATALOG
    assert parse_scenario(from_web.inputs, catalog) == parse_scenario(from_api.inputs, catalog)
    api_result = from_api.runs.get().result
    web_result = from_web.runs.get().result
    assert web_result["recommendation"] == api_result["recommendation"]
    assert web_result["cost"] == api_result["cost"]
