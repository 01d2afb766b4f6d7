"""Issue 12: `gpus=inf`, `1e309` or `sequence_length=-inf` in the questionnaire's live check
gave a 500 (OverflowError), and a draft holding such an answer failed on every submit. Now a
non-finite number is a field error, and the engine's limits are the questionnaire's too."""

from __future__ import annotations

import pytest
from django.test import Client

from advisor.engine.facts.catalog import default_catalog
from advisor.scenarios.models import Scenario
from frontend import questionnaire as qn
from frontend.models import QuestionnaireDraft
from frontend.services import draft_create

pytestmark = pytest.mark.django_db


def new_draft(**answers: str) -> QuestionnaireDraft:
    steps = qn.build_steps(default_catalog())
    return draft_create(owner=None, answers={**qn.default_answers(steps), **answers})


@pytest.mark.parametrize(
    ("step", "field", "value"),
    [
        ("hardware", "gpus", "inf"),
        ("hardware", "gpus", "1e309"),
        ("hardware", "gpus", "nan"),
        ("hardware", "gpus_per_node", "-inf"),
        ("model", "sequence_length", "-inf"),
        ("work", "total_tokens_b", "1e309"),
        ("priorities", "gpu_hour_usd", "inf"),
    ],
)
def test_the_live_check_names_a_non_finite_number_as_a_field_error(
    step: str, field: str, value: str
) -> None:
    draft = new_draft(gpu_pricing="cloud")
    response = Client().post(f"/q/{draft.pk}/{step}/check", {field: value, "gpu": "h100-sxm"})
    assert response.status_code == 200
    html = response.content.decode()
    assert f'id="err-{field}"' in html
    assert "is not one." in html


@pytest.mark.parametrize(
    ("step", "field", "value", "message"),
    [
        ("hardware", "gpus", "200000", "Must be between 1 and 131,072"),
        ("priorities", "gpu_hour_usd", "1e308", "Must be between 0 and 1,000"),
        ("work", "total_tokens_b", "1e9", "Must be between 0.000000001 and 1,000,000"),
    ],
)
def test_the_engine_limits_are_the_questionnaires_limits(
    step: str, field: str, value: str, message: str
) -> None:
    draft = new_draft(gpu_pricing="cloud")
    response = Client().post(f"/q/{draft.pk}/{step}/check", {field: value, "gpu": "h100-sxm"})
    assert message in response.content.decode()


def test_a_draft_saved_with_an_infinite_gpu_count_is_sent_back_to_that_question() -> None:
    draft = new_draft(gpus="inf", scale="many", gpu="h100-sxm")
    client = Client()
    response = client.post(f"/q/{draft.pk}/review/", {"nav": "submit", "name": "x"})
    assert response.status_code == 302
    assert response["Location"] == f"/q/{draft.pk}/hardware/"
    draft.refresh_from_db()
    assert draft.errors["gpus"]  # named beside its question (the engine's words)
    assert Scenario.objects.count() == 0
