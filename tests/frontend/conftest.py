"""Personas for the web app: a customer without an account, a signed-up customer, a stranger,
and a sales engineer."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from advisor.engine.facts.catalog import default_catalog
from advisor.scenarios.models import RunStatus, Scenario, ScenarioRun
from tests.frontend.sample_result import training_result


@pytest.fixture
def sales_user(db: Any) -> User:
    user = User.objects.create_user("sam.sales", password="correct-horse-battery")
    group, _ = Group.objects.get_or_create(name="sales")
    user.groups.add(group)
    return user


@pytest.fixture
def sales_client(sales_user: User) -> Client:
    client = Client()
    client.force_login(sales_user)
    return client


@pytest.fixture
def customer_user(db: Any) -> User:
    return User.objects.create_user("cora.customer", password="correct-horse-battery")


@pytest.fixture
def customer_client(customer_user: User) -> Client:
    client = Client()
    client.force_login(customer_user)
    return client


@pytest.fixture
def stranger_client(db: Any) -> Client:
    user = User.objects.create_user("stan.stranger", password="correct-horse-battery")
    client = Client()
    client.force_login(user)
    return client


def make_scenario(
    *,
    owner: User | None = None,
    name: str = "70B training",
    customer: str = "",
    result: dict[str, Any] | None = None,
    status: str = RunStatus.SUCCEEDED,
    progress: int = 100,
) -> Scenario:
    """A scenario with one run holding a canned result (no engine call)."""
    scenario = Scenario.objects.create(
        name=name,
        owner=owner,
        customer=customer,
        inputs={"workload": "training", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 512},
    )
    ScenarioRun.objects.create(
        scenario=scenario,
        status=status,
        progress=progress,
        result=(result if result is not None else training_result())
        if status == RunStatus.SUCCEEDED
        else None,
        engine_version="1.0.0",
        catalog_version=default_catalog().version,
    )
    return scenario
