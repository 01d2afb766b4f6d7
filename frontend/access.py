"""Who may open what, and what an anonymous visitor's session remembers.

Scenarios and drafts follow one rule (advisor.scenarios.selectors.scenario_get): a thing with
no owner opens by its unguessable UUID link alone; an owned one only for its owner and for
sales engineers. Everything else is a 404, so a stranger cannot even learn that it exists.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.http import Http404, HttpRequest

from advisor.scenarios.models import Scenario
from advisor.scenarios.selectors import scenario_get, user_is_sales
from frontend.models import QuestionnaireDraft

SESSION_SCENARIOS = "fabric_scenarios"
SESSION_DRAFTS = "fabric_drafts"
# What this browser session *created* (not merely opened): the only things a sign-up or
# sign-in may claim. Opening a customer's link must never hand their work to the opener.
SESSION_CREATED_SCENARIOS = "fabric_created_scenarios"
SESSION_CREATED_DRAFTS = "fabric_created_drafts"
REMEMBER_AT_MOST = 50


def scenario_or_404(request: HttpRequest, scenario_id: uuid.UUID | str) -> Scenario:
    scenario = scenario_get(scenario_id=scenario_id, user=request.user)
    if scenario is None:
        raise Http404("No such scenario")
    return scenario


def can_open(user: Any, owner_id: int | None) -> bool:
    if owner_id is None or user_is_sales(user):
        return True
    return bool(user is not None and user.is_authenticated and owner_id == user.pk)


def draft_or_404(request: HttpRequest, draft_id: uuid.UUID | str) -> QuestionnaireDraft:
    try:
        draft = QuestionnaireDraft.objects.get(pk=draft_id)
    except (QuestionnaireDraft.DoesNotExist, ValueError, TypeError):
        raise Http404("No such questionnaire") from None
    if not can_open(request.user, draft.owner_id):
        raise Http404("No such questionnaire")
    return draft


def _remembered(request: HttpRequest, key: str) -> list[str]:
    """The ids this session keeps under ``key``, newest first ([] when none)."""
    return list(request.session.get(key, []))


def _remember(request: HttpRequest, key: str, item_id: uuid.UUID | str) -> None:
    ids = [i for i in _remembered(request, key) if i != str(item_id)]
    request.session[key] = [str(item_id), *ids][:REMEMBER_AT_MOST]


def remember_scenario(request: HttpRequest, scenario: Scenario) -> None:
    _remember(request, SESSION_SCENARIOS, scenario.pk)


def remember_draft(request: HttpRequest, draft: QuestionnaireDraft) -> None:
    _remember(request, SESSION_DRAFTS, draft.pk)


def remember_created_scenario(request: HttpRequest, scenario: Scenario) -> None:
    """This session made `scenario` (anonymously): it may claim it at sign-up or sign-in."""
    remember_scenario(request, scenario)
    if scenario.owner_id is None:
        _remember(request, SESSION_CREATED_SCENARIOS, scenario.pk)


def remember_created_draft(request: HttpRequest, draft: QuestionnaireDraft) -> None:
    """This session made `draft` (anonymously): it may claim it at sign-up or sign-in."""
    remember_draft(request, draft)
    if draft.owner_id is None:
        _remember(request, SESSION_CREATED_DRAFTS, draft.pk)


def created_scenario_ids(request: HttpRequest) -> list[str]:
    return _remembered(request, SESSION_CREATED_SCENARIOS)


def created_draft_ids(request: HttpRequest) -> list[str]:
    return _remembered(request, SESSION_CREATED_DRAFTS)


def draft_may_write_scenario(draft: QuestionnaireDraft) -> bool:
    """A draft edits its scenario only while both have the same owner.

    A draft opened on an anonymous scenario is anonymous too; once the scenario's creator
    signs up and claims it, the old draft link (which anybody may hold) can no longer rename
    or recompute it.
    """
    scenario = draft.scenario
    return scenario is None or scenario.owner_id == draft.owner_id


def remembered_scenario_ids(request: HttpRequest) -> list[str]:
    return _remembered(request, SESSION_SCENARIOS)


def remembered_draft_ids(request: HttpRequest) -> list[str]:
    return _remembered(request, SESSION_DRAFTS)
