"""Reads of a finished run under load: a fixed number of queries per page whatever the size
of the list, the large result column left in the database once this process has read the
run, and a page served from the caches identical to one built from scratch."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client
from rest_framework.test import APIClient

from advisor.scenarios.models import Scenario, ScenarioRun
from advisor.scenarios.results import memo_clear
from api.services import api_client_create
from tests.frontend.conftest import make_scenario

pytestmark = pytest.mark.django_db

# Each response masks the CSRF token afresh: the only part of a page that may differ.
CSRF = re.compile(r'(csrfmiddlewaretoken" value="|CSRFToken": ")[A-Za-z0-9]+')


def _forget_everything() -> None:
    cache.clear()
    memo_clear()


def _html(response: Any) -> str:
    assert response.status_code == 200
    return CSRF.sub(r"\1-", response.content.decode())


def _result_column_loaded(queries: Any) -> list[str]:
    """The queries that selected a run's whole result column (not one key of it: a key
    transform passes the column to a function, ``JSON_TYPE("…"."result", '$."key"')`` on
    SQLite, ``("…"."result" -> 'key')`` on PostgreSQL)."""
    return [
        q["sql"]
        for q in queries
        if re.search(r'(?<!\()"scenarios_scenariorun"\."result"(,| FROM)', q["sql"])
    ]


@pytest.fixture
def api_caller(db: Any) -> tuple[APIClient, User]:
    issued = api_client_create(name="reads")
    http = APIClient()
    http.credentials(HTTP_AUTHORIZATION=f"Token {issued.key}")
    return http, issued.client.user


def test_a_cached_result_page_is_the_page_built_from_scratch(sales_client: Client) -> None:
    scenario = make_scenario()
    _forget_everything()
    built = _html(sales_client.get(f"/s/{scenario.pk}/"))
    cached = _html(sales_client.get(f"/s/{scenario.pk}/"))
    assert cached == built
    _forget_everything()
    assert _html(sales_client.get(f"/s/{scenario.pk}/")) == built


def test_a_result_page_read_again_takes_few_queries_and_not_the_result(
    sales_client: Client, django_assert_num_queries: Any
) -> None:
    scenario = make_scenario()
    sales_client.get(f"/s/{scenario.pk}/")  # this process has read the run
    # session, user, sales group, scenario, history (its newest run is the quoted one when
    # no run is calibrated), the calibrated runs (the panel, and the shown run's label),
    # current catalog, the measurements panel (the run's recorded catalog is the built-in one)
    with django_assert_num_queries(8) as captured:
        response = sales_client.get(f"/s/{scenario.pk}/")
    assert response.status_code == 200
    assert not _result_column_loaded(captured.captured_queries)


def test_an_anonymous_result_page_takes_four_queries(
    client: Client, django_assert_num_queries: Any
) -> None:
    """The page a shared link opens (most page views under load): no session, no user."""
    scenario = make_scenario()
    client.get(f"/s/{scenario.pk}/")
    # scenario, history, the calibrated runs, current catalog (the run's recorded catalog is
    # that same catalog, read without a query)
    with django_assert_num_queries(4) as captured:
        response = client.get(f"/s/{scenario.pk}/")
    assert response.status_code == 200 and 'id="whatif"' in response.content.decode()
    assert not _result_column_loaded(captured.captured_queries)


def test_the_list_takes_the_same_queries_for_3_or_30_scenarios_and_no_result(
    sales_client: Client, sales_user: User, django_assert_num_queries: Any
) -> None:
    for i in range(3):
        make_scenario(owner=sales_user, name=f"S{i}", customer=f"C{i % 2}")
    # session, user, sales group, customers, scenarios with their latest run, those runs,
    # their recommendations and costs, drafts
    with django_assert_num_queries(8) as few:
        first = sales_client.get("/scenarios/")
    for i in range(27):
        make_scenario(owner=sales_user, name=f"T{i}")
    with django_assert_num_queries(8) as many:
        second = sales_client.get("/scenarios/")
    assert first.status_code == second.status_code == 200
    assert not _result_column_loaded(few.captured_queries + many.captured_queries)
    assert second.content.decode().count("/s/") >= 30


def test_the_list_shows_the_same_row_from_the_database_parts_or_the_kept_result(
    sales_client: Client, sales_user: User
) -> None:
    from advisor.engine.facts.formatting import usd_compact
    from advisor.scenarios.results import stored_result

    scenario = make_scenario(owner=sales_user)
    _forget_everything()
    from_parts = _html(sales_client.get("/scenarios/"))
    kept = _html(sales_client.get("/scenarios/"))
    memo_clear()
    run = ScenarioRun.objects.get(scenario=scenario)
    result = stored_result(run)  # this process now keeps the whole typed result
    assert result is not None
    from_result = _html(sales_client.get("/scenarios/"))
    assert from_parts == kept == from_result
    assert usd_compact(result.cost.network_capex_usd) in from_parts


def test_compare_read_again_takes_a_fixed_number_of_queries(
    sales_client: Client, django_assert_num_queries: Any
) -> None:
    a, b = make_scenario(name="A"), make_scenario(name="B")
    url = f"/compare/?s={a.pk}&s={b.pk}"
    _forget_everything()
    built = _html(sales_client.get(url))
    # session, user, sales group, GPU names, then per scenario: the scenario, its run
    with django_assert_num_queries(8) as captured:
        cached = _html(sales_client.get(url))
    assert cached == built
    assert not _result_column_loaded(captured.captured_queries)


def test_the_api_serves_the_same_result_from_its_cache(
    api_caller: tuple[APIClient, User], django_assert_num_queries: Any
) -> None:
    http, user = api_caller
    scenario: Scenario = make_scenario(owner=user)
    run = scenario.runs.get()
    _forget_everything()
    built = http.get(f"/api/v1/scenarios/{scenario.pk}/").json()
    built_run = http.get(f"/api/v1/runs/{run.pk}/").json()
    # the client with its user and whether they are in sales, the scenario, its latest run
    with django_assert_num_queries(3) as captured:
        cached = http.get(f"/api/v1/scenarios/{scenario.pk}/").json()
    assert not _result_column_loaded(captured.captured_queries)
    # the client with its user and sales membership, the run with its scenario
    with django_assert_num_queries(2):
        cached_run = http.get(f"/api/v1/runs/{run.pk}/").json()
    assert cached == built and cached_run == built_run
    assert cached["result"] == built_run["result"] and cached["result"]["recommendation"]


def test_a_run_saved_again_is_read_afresh(sales_client: Client) -> None:
    scenario = make_scenario()
    run = scenario.runs.get()
    sales_client.get(f"/s/{scenario.pk}/")
    result = dict(run.result)
    result["recommendation"] = {**result["recommendation"], "headline": "A new headline here"}
    run.result = result
    run.save()
    cache.clear()  # the page's own per-run fragments
    assert "A new headline here" in sales_client.get(f"/s/{scenario.pk}/").content.decode()


def test_the_catalog_is_written_once_per_catalog(api_caller: tuple[APIClient, User]) -> None:
    from rest_framework.renderers import JSONRenderer

    from advisor.scenarios.catalog_store import catalog_current
    from api.apis.quotes import CatalogApi, catalog_served

    http, _user = api_caller
    first = http.get("/api/v1/catalog/").json()
    catalog = catalog_current()
    assert catalog_served(catalog) is catalog_served(catalog)
    assert http.get("/api/v1/catalog/").json() == first
    fresh = JSONRenderer().render(CatalogApi.OutputSerializer(catalog.to_dict()).data)
    assert first == json.loads(fresh)
    assert first["version"] == catalog.version and first["gpus"]


def test_the_accuracy_page_from_its_cache_is_the_page_rendered_afresh(client: Client) -> None:
    cache.clear()
    rendered = _html(client.get("/accuracy/"))
    assert _html(client.get("/accuracy/")) == rendered
    cache.clear()
    assert _html(client.get("/accuracy/")) == rendered
    assert "How accurate is this?" in rendered and "held-out-summary" in rendered


def test_api_reads_take_a_fixed_number_of_queries(
    api_caller: tuple[APIClient, User], django_assert_num_queries: Any
) -> None:
    """What `make load` reads through the API: the list whatever its length, the catalog."""
    http, user = api_caller
    for i in range(3):
        make_scenario(owner=user, name=f"S{i}")
    http.get("/api/v1/scenarios/?limit=10")
    # the client with its user and sales membership, the count, the page with latest runs
    with django_assert_num_queries(3) as few:
        first = http.get("/api/v1/scenarios/?limit=10")
    for i in range(12):
        make_scenario(owner=user, name=f"T{i}")
    with django_assert_num_queries(3) as many:
        second = http.get("/api/v1/scenarios/?limit=10")
    assert first.status_code == second.status_code == 200
    assert len(second.json()["results"]) == 10
    assert not _result_column_loaded(few.captured_queries + many.captured_queries)
    # the client with its user, the current catalog
    with django_assert_num_queries(2):
        assert http.get("/api/v1/catalog/").status_code == 200


def test_a_sales_engineers_token_sees_everyones_scenarios_in_the_same_queries(
    django_assert_num_queries: Any,
) -> None:
    """The sales-group check rides on the token's own query: none of its own."""
    from django.contrib.auth.models import Group

    issued = api_client_create(name="sales-desk")
    issued.client.user.groups.add(Group.objects.get_or_create(name="sales")[0])
    http = APIClient()
    http.credentials(HTTP_AUTHORIZATION=f"Token {issued.key}")
    theirs = make_scenario(owner=User.objects.create_user("someone.else"), name="Theirs")
    http.get(f"/api/v1/scenarios/{theirs.pk}/")
    with django_assert_num_queries(3):
        response = http.get(f"/api/v1/scenarios/{theirs.pk}/")
    assert response.status_code == 200 and response.json()["name"] == "Theirs"

    outsider = api_client_create(name="customer-system")
    http.credentials(HTTP_AUTHORIZATION=f"Token {outsider.key}")
    assert http.get(f"/api/v1/scenarios/{theirs.pk}/").status_code == 404


def test_a_what_if_takes_a_fixed_number_of_queries(
    client: Client, api_caller: tuple[APIClient, User], django_assert_num_queries: Any
) -> None:
    """The live what-if reads the scenario and its run, and nothing per priced point."""
    http, user = api_caller
    shared = make_scenario()
    body = {"nics_per_node": 2, "fabric": "roce"}
    url = f"/s/{shared.pk}/whatif"
    client.post(url, data=json.dumps(body), content_type="application/json")
    # the scenario, its quoted run (its recorded catalog is the built-in one: no query)
    with django_assert_num_queries(2):
        response = client.post(url, data=json.dumps(body), content_type="application/json")
    assert response.status_code == 200 and response.json()["point"]["feasible"] is True
    own = make_scenario(owner=user)
    api_url = f"/api/v1/scenarios/{own.pk}/whatif/"
    http.post(api_url, body, format="json")
    # the client with its user and sales membership, the scenario, its quoted run
    with django_assert_num_queries(3):
        response = http.post(api_url, body, format="json")
    assert response.status_code == 200 and response.json()["point"]["feasible"] is True
