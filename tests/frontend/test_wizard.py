"""The wizard in the browser's shoes: next, back, save and resume, inline errors, submit."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from advisor.scenarios.models import RunStatus, Scenario
from frontend.models import QuestionnaireDraft

pytestmark = pytest.mark.django_db(transaction=True)


def _start(client: Client) -> str:
    response = client.post("/start/")  # a GET only shows the start page (writes nothing)
    assert response.status_code == 302
    return response["Location"].rsplit("/", 2)[0]  # /q/<uuid>


def _post(client: Client, base: str, step: str, **data: Any) -> Any:
    return client.post(f"{base}/{step}/", {"nav": "next", **data})


def test_a_customer_walks_through_and_gets_a_computed_scenario() -> None:
    client = Client()
    base = _start(client)
    assert _post(client, base, "job", workload="training", scale="many")["Location"].endswith(
        "/model/"
    )
    _post(client, base, "model", model_choice="llama3-70b", precision="bf16")
    _post(client, base, "hardware", gpu="h100-sxm", gpus="128")
    _post(client, base, "work")
    _post(client, base, "priorities", team_skills="both")
    response = client.post(f"{base}/review/", {"nav": "submit", "name": "My cluster"})
    assert response.status_code == 302
    scenario = Scenario.objects.get()
    assert response["Location"] == f"/s/{scenario.pk}/"
    assert scenario.name == "My cluster"
    assert scenario.owner is None
    assert scenario.inputs["gpus"] == 128
    run = scenario.runs.get()
    assert run.status == RunStatus.SUCCEEDED  # eager task ran when the request committed
    page = client.get(response["Location"])
    assert page.status_code == 200
    assert b'id="headline"' in page.content
    # The browser remembers it; the list shows it.
    assert str(scenario.pk) in client.session["fabric_scenarios"]
    assert b"My cluster" in client.get("/scenarios/").content


def test_invalid_input_is_named_next_to_its_question_and_nothing_moves_on() -> None:
    client = Client()
    base = _start(client)
    response = _post(client, base, "hardware", gpu="h100-sxm", gpus="lots")
    assert response.status_code == 200  # a normal answer: htmx and browsers log no error
    html = response.content.decode()
    assert 'id="err-gpus"' in html
    assert "Enter a whole number; &#x27;lots&#x27; is not one." in html
    assert 'aria-invalid="true"' in html
    draft = QuestionnaireDraft.objects.get()
    assert draft.step == "hardware"
    assert draft.answers["gpus"] == "lots"  # kept, so the person can correct it


def test_engine_rules_are_checked_on_the_step_that_caused_them() -> None:
    client = Client()
    base = _start(client)
    _post(client, base, "job", workload="inference", scale="many")
    _post(client, base, "model", model_choice="deepseek-v3")
    # With the serving shape left to the advisor (the default, as in the API), 8 GPUs are
    # too few for the model however it is served: the GPU count's question says so.
    response = _post(client, base, "hardware", gpu="h100-sxm", gpus="8")
    assert response.status_code == 200
    html = response.content.decode()
    assert html.index('id="err-gpus"') < html.index("does not fit on 8 x NVIDIA H100 SXM5 80GB")
    # Too big for one server when every server must serve alone: the replicas question.
    response = _post(client, base, "work", replicas="independent")
    assert response.status_code == 200
    html = response.content.decode()
    assert "does not fit inside one server of 8 x NVIDIA H100 SXM5 80GB" in html
    assert html.index('id="err-replicas"') < html.index("does not fit")
    # Split across servers, it is the GPU count that is too small: back to that question.
    response = _post(client, base, "work", replicas="split")
    assert response["Location"].endswith("/hardware/")
    page = client.get(response["Location"]).content.decode()
    assert "does not fit on 8 x NVIDIA H100 SXM5 80GB" in page
    assert page.index('id="err-gpus"') < page.index("does not fit on 8 x NVIDIA H100 SXM5 80GB")
    # Submitting anyway lands on the same question; nothing is saved.
    response = client.post(f"{base}/review/", {"nav": "submit"})
    assert response["Location"].endswith("/hardware/")
    assert not Scenario.objects.exists()


def test_back_keeps_the_answers_without_judging_them() -> None:
    client = Client()
    base = _start(client)
    response = client.post(f"{base}/hardware/", {"nav": "back", "gpus": "96", "gpu": "b200"})
    assert response["Location"].endswith("/model/")
    page = client.get(f"{base}/hardware/").content.decode()
    assert 'value="96"' in page
    assert 'value="b200" checked' in page


def test_switching_to_one_server_replaces_the_default_gpu_count() -> None:
    client = Client()
    base = _start(client)
    _post(client, base, "job", workload="fine_tuning", scale="one")
    assert QuestionnaireDraft.objects.get().answers["gpus"] == "8"


@pytest.mark.parametrize(
    ("workload", "scale"),
    [(w, s) for w in ("training", "fine_tuning", "inference", "rag") for s in ("one", "many")],
)
def test_every_step_one_choice_gets_defaults_that_compute(workload: str, scale: str) -> None:
    """Pressing Next through the wizard with the defaults never fails on a later step."""
    client = Client()
    base = _start(client)
    assert _post(client, base, "job", workload=workload, scale=scale).status_code == 302
    for step in ("model", "hardware", "work", "priorities"):
        response = _post(client, base, step)
        assert response.status_code == 302, (step, response.content.decode()[:2000])
        assert response["Location"].endswith("/") and "/job/" not in response["Location"]
    response = client.post(f"{base}/review/", {"nav": "submit"})
    assert response.status_code == 302 and response["Location"].startswith("/s/")
    answers = QuestionnaireDraft.objects.get().answers
    if workload == "fine_tuning":
        assert answers["total_tokens_b"] == "1"  # fine-tuning sized, not pre-training's 1000
    if workload == "training":
        assert answers["total_tokens_b"] == "1000"
    if scale == "one" and workload not in ("inference", "rag"):
        # Llama 3 70B cannot train on 8 GPUs: the largest preset that does takes its place.
        assert answers["model_choice"] not in ("", "llama3-70b")
    if scale == "many":
        assert answers["model_choice"] == "llama3-70b"


def test_a_model_the_person_chose_is_never_replaced() -> None:
    client = Client()
    base = _start(client)
    _post(client, base, "job", workload="training", scale="many")
    _post(client, base, "model", model_choice="mixtral-8x7b")
    client.post(f"{base}/job/", {"nav": "next", "workload": "training", "scale": "one"})
    assert QuestionnaireDraft.objects.get().answers["model_choice"] == "mixtral-8x7b"


def test_save_shows_a_private_resume_link_that_works_in_another_browser() -> None:
    client = Client()
    base = _start(client)
    response = client.post(f"{base}/model/", {"nav": "save", "model_choice": "mixtral-8x7b"})
    assert response.status_code == 200
    draft = QuestionnaireDraft.objects.get()
    assert f"/q/{draft.pk}/" in response.content.decode()
    other = Client()
    resumed = other.get(f"/q/{draft.pk}/")
    assert resumed["Location"] == f"/q/{draft.pk}/model/"
    assert 'value="mixtral-8x7b" checked' in other.get(resumed["Location"]).content.decode()


def test_live_check_returns_out_of_band_errors_and_changes_nothing(client: Client) -> None:
    base = _start(client)
    response = client.post(f"{base}/hardware/check", {"gpus": "-3", "gpu": "h100-sxm"})
    html = response.content.decode()
    assert 'id="err-gpus"' in html and 'hx-swap-oob="true"' in html
    assert "Must be at least 1; you entered -3." in html
    assert QuestionnaireDraft.objects.get().answers["gpus"] == "64"  # saved only by navigation


def test_a_signed_in_persons_draft_is_closed_to_others(customer_client: Client) -> None:
    base = _start(customer_client)
    assert customer_client.get(f"{base}/job/").status_code == 200
    assert Client().get(f"{base}/job/").status_code == 404
    assert Client().post(f"{base}/job/check", {"gpus": "1"}).status_code == 404


def test_an_unknown_draft_is_a_404() -> None:
    assert Client().get("/q/6f1c3a9e-0000-4000-8000-000000000000/job/").status_code == 404


def test_a_dropdown_of_sentences_is_shown_as_cards_and_posts_the_same() -> None:
    client = Client()
    base = _start(client)
    html = client.get(f"{base}/work/").content.decode()
    assert 'name="sharding"' in html and '<select name="sharding"' not in html
    assert 'type="radio" name="sharding" value="zero3"' in html
    assert '<select name="precision"' in client.get(f"{base}/model/").content.decode()
    _post(client, base, "work", sharding="zero3")
    assert QuestionnaireDraft.objects.get().answers["sharding"] == "zero3"


@pytest.mark.parametrize(
    ("model", "gpus", "placeholder"),
    [
        ("llama3-70b", "16384", "usual for 16,384 GPUs: 4,096 (16.8M tokens)"),
        # a mixture-of-experts pretraining: the MoE batch (DeepSeek-V3's practice)
        ("deepseek-v3", "2048", "usual for 2,048 GPUs: 16,384 (67.1M tokens)"),
    ],
)
def test_the_batch_question_shows_the_batch_the_engine_would_use_for_this_cluster(
    model: str, gpus: str, placeholder: str
) -> None:
    client = Client()
    base = _start(client)
    _post(client, base, "job", workload="training", scale="many")
    _post(client, base, "model", model_choice=model, sequence_length="4096")
    _post(client, base, "hardware", gpu="h100-sxm", gpus=gpus)
    html = client.get(f"{base}/work/").content.decode()
    assert f'placeholder="{placeholder}"' in html
