"""Writes for the web app's own state (questionnaire drafts)."""

from __future__ import annotations

import uuid

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db import transaction
from django.db.models import Q

from advisor.scenarios.models import Scenario
from advisor.scenarios.services import owner_or_none, scenario_claim_anonymous
from frontend.models import QuestionnaireDraft


def draft_create(
    *,
    owner: AbstractBaseUser | AnonymousUser | None,
    answers: dict[str, str],
    step: str = "job",
    scenario: Scenario | None = None,
) -> QuestionnaireDraft:
    return QuestionnaireDraft.objects.create(
        owner=owner_or_none(owner), answers=answers, step=step, scenario=scenario
    )


def draft_save(
    *,
    draft: QuestionnaireDraft,
    answers: dict[str, str] | None = None,
    step: str | None = None,
    errors: dict[str, list[str]] | None = None,
    scenario: Scenario | None = None,
) -> QuestionnaireDraft:
    fields = ["updated_at"]
    if answers is not None:
        draft.answers = {str(k): str(v) for k, v in answers.items()}
        fields.append("answers")
    if step is not None:
        draft.step = step
        fields.append("step")
    if errors is not None:
        draft.errors = errors
        fields.append("errors")
    if scenario is not None:
        draft.scenario = scenario
        fields.append("scenario")
    draft.save(update_fields=fields)
    return draft


@transaction.atomic
def account_claim_session(
    *, user: AbstractBaseUser, scenario_ids: list[str], draft_ids: list[str]
) -> int:
    """Attach what this browser *created* anonymously to the account that just signed up/in.

    The ids are the session's created ones (frontend.access.created_*_ids), never those it
    merely opened. A draft that edits a scenario goes along only with that scenario, so a
    claimed draft never points at a scenario owned by someone else (or by nobody).
    """
    claimed_ids = scenario_claim_anonymous(user=user, scenario_ids=scenario_ids)
    drafts = QuestionnaireDraft.objects.filter(pk__in=_uuids(draft_ids), owner__isnull=True)
    drafts.filter(Q(scenario__isnull=True) | Q(scenario__owner=user)).update(owner=user)
    return claimed_ids


def _uuids(raw: list[str]) -> list[str]:
    out = []
    for item in raw:
        try:
            out.append(str(uuid.UUID(str(item))))
        except ValueError:
            continue
    return out
