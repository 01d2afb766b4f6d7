"""Reads for the API: clients by key, and the scenarios and runs a caller may see.

Visibility is the web's rule (advisor.scenarios.selectors.scenario_list): staff and sales see
every scenario, everyone else only their own. Unlike the web, an ownerless scenario (an
anonymous questionnaire) is never reachable through the API by its id alone.
"""

from __future__ import annotations

import hashlib
import hmac
import uuid
from datetime import datetime
from typing import Any

from django.contrib.auth.models import Group
from django.db.models import Exists, OuterRef, QuerySet

from advisor.scenarios.models import Scenario, ScenarioRun
from advisor.scenarios.results import RESULT_COLUMNS
from advisor.scenarios.selectors import (
    SALES_GROUP,
    as_uuid,
    scenario_list,
    scenarios_with_latest_run,
    user_is_sales_known,
)
from api.models import ApiClient

_SALES_MEMBERSHIP = Group.objects.filter(name=SALES_GROUP, user=OuterRef("user_id"))


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def key_prefix_of(key: str) -> str:
    return key.partition(".")[0]


def api_client_for_key(*, key: str) -> ApiClient | None:
    """The active client holding `key`, or None (unknown, malformed or revoked)."""
    prefix = key_prefix_of(key)
    if not prefix or len(prefix) > 16:
        return None
    client = (
        ApiClient.objects.select_related("user")
        .annotate(user_in_sales=Exists(_SALES_MEMBERSHIP))
        .filter(key_prefix=prefix, revoked_at__isnull=True)
        .first()
    )
    if client is None or not hmac.compare_digest(client.key_hash, key_hash(key)):
        return None
    # Whether the client's user is a sales engineer, asked in the same query: every read
    # checks visibility (advisor.scenarios.selectors.user_is_sales), which would ask again.
    user_is_sales_known(client.user, is_sales=client.user.is_staff or client.user_in_sales)
    return client


def scenario_list_visible(
    *,
    user: Any,
    customer: str | None = None,
    status: str | None = None,
    created_after: datetime | None = None,
    created_before: datetime | None = None,
) -> QuerySet[Scenario]:
    """Scenarios `user` may see, newest first, each annotated with its latest run."""
    qs = scenarios_with_latest_run(scenario_list(user=user))
    if customer:
        qs = qs.filter(customer=customer)
    if status:
        qs = qs.filter(latest_run_status=status)  # type: ignore[misc]  # annotated above
    if created_after is not None:
        qs = qs.filter(created_at__gte=created_after)
    if created_before is not None:
        qs = qs.filter(created_at__lt=created_before)
    return qs.order_by("-created_at", "-pk")


def scenario_get_visible(*, user: Any, scenario_id: uuid.UUID | str) -> Scenario | None:
    pk = as_uuid(scenario_id)
    return None if pk is None else scenario_list(user=user).filter(pk=pk).first()


def run_get_visible(*, user: Any, run_id: uuid.UUID | str) -> ScenarioRun | None:
    pk = as_uuid(run_id)
    if pk is None:
        return None
    visible = scenario_list(user=user).values("pk")
    return (
        ScenarioRun.objects.select_related("scenario")
        .defer(*RESULT_COLUMNS)  # the typed result is usually kept per process
        .filter(pk=pk, scenario__in=visible)
        .first()
    )
