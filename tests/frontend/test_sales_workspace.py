"""The sales engineer's workspace: every scenario, search, notes, copies, comparisons."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from advisor.scenarios.models import Scenario
from frontend.models import QuestionnaireDraft
from tests.frontend.conftest import make_scenario
from tests.frontend.sample_result import single_server_result

pytestmark = pytest.mark.django_db


def test_sales_see_every_scenario_and_filter_by_customer(
    sales_client: Client, customer_user: User
) -> None:
    make_scenario(name="Acme 70B", customer="Acme AI", owner=customer_user)
    make_scenario(name="Globex serving", customer="Globex")
    make_scenario(name="Anonymous one")
    html = sales_client.get("/scenarios/").content.decode()
    assert "All scenarios" in html
    assert all(n in html for n in ("Acme 70B", "Globex serving", "Anonymous one"))
    assert '<option value="Acme AI"' in html
    filtered = sales_client.get("/scenarios/", {"customer": "Globex"}).content.decode()
    assert "Globex serving" in filtered and "Acme 70B" not in filtered
    searched = sales_client.get("/scenarios/", {"q": "70b"}).content.decode()
    assert "Acme 70B" in searched and "Globex serving" not in searched


def test_customers_see_only_their_own(customer_client: Client, customer_user: User) -> None:
    make_scenario(name="Mine", owner=customer_user)
    make_scenario(name="Theirs", customer="Other")
    html = customer_client.get("/scenarios/").content.decode()
    assert "Mine" in html and "Theirs" not in html
    assert "All scenarios" not in html


def test_sales_annotate_with_htmx(sales_client: Client) -> None:
    scenario = make_scenario()
    response = sales_client.post(
        f"/s/{scenario.pk}/notes",
        {"notes": "Quote Q-1042 sent", "customer": "Acme AI"},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200 and b"Saved" in response.content
    scenario.refresh_from_db()
    assert (scenario.notes, scenario.customer) == ("Quote Q-1042 sent", "Acme AI")
    assert b"Quote Q-1042 sent" in sales_client.get(f"/s/{scenario.pk}/").content


def test_customers_cannot_annotate(customer_client: Client, customer_user: User) -> None:
    scenario = make_scenario(owner=customer_user)
    assert customer_client.post(f"/s/{scenario.pk}/notes", {"notes": "x"}).status_code == 404
    assert b'id="sales-panel"' not in customer_client.get(f"/s/{scenario.pk}/").content
    scenario.refresh_from_db()
    assert scenario.notes == ""


def test_clone_then_edit_leaves_the_original_alone(
    sales_client: Client, sales_user: User, customer_user: User
) -> None:
    original = make_scenario(name="Acme 70B", customer="Acme AI", owner=customer_user)
    original.notes, original.quote_reference = "Quote Q-1042 sent", "Q-1042"
    original.save()
    response = sales_client.post(f"/s/{original.pk}/clone")
    clone = Scenario.objects.exclude(pk=original.pk).get()
    assert clone.cloned_from == original and clone.owner == sales_user
    assert clone.name == "Acme 70B (copy)" and clone.customer == "Acme AI"
    # A copy is a new quote: neither the notes nor the quote reference come along.
    assert (clone.notes, clone.quote_reference) == ("", "")
    draft = QuestionnaireDraft.objects.get(scenario=clone)
    assert response["Location"] == f"/q/{draft.pk}/job/"
    base = f"/q/{draft.pk}"
    sales_client.post(f"{base}/hardware/", {"nav": "goto:review", "gpu": "h100-sxm", "gpus": "256"})
    response = sales_client.post(f"{base}/review/", {"nav": "submit", "name": "Acme 70B, 256 GPUs"})
    assert response["Location"] == f"/s/{clone.pk}/"
    clone.refresh_from_db()
    original.refresh_from_db()
    assert clone.inputs["gpus"] == 256 and clone.name == "Acme 70B, 256 GPUs"
    assert original.inputs["gpus"] == 512 and original.name == "Acme 70B"
    assert clone.runs.count() == 1


def test_compare_two_to_four_side_by_side(sales_client: Client) -> None:
    a = make_scenario(name="Alpha")
    b = make_scenario(name="Beta", result=single_server_result())
    c = make_scenario(name="Gamma")
    response = sales_client.get("/compare/", {"s": [a.pk, b.pk, c.pk]})
    html = response.content.decode()
    assert response.status_code == 200
    assert all(n in html for n in ("Alpha", "Beta", "Gamma"))
    assert "Network capex" in html and "$2.80M" in html
    assert "none needed (Ethernet)" in html
    # One chart per question with every scenario on the same axes; a topology per scenario.
    for chart in ("cost", "breakdown", "scaling"):
        assert f'<script id="fig-compare-{chart}" type="application/json">' in html
    for i in range(3):
        assert f'<script id="fig-c{i}-topology" type="application/json">' in html


def test_compare_needs_at_least_two_it_may_open(
    sales_client: Client, stranger_client: Client, customer_user: User
) -> None:
    a = make_scenario(name="Alpha", owner=customer_user)
    b = make_scenario(name="Beta", owner=customer_user)
    assert sales_client.get("/compare/", {"s": [a.pk]})["Location"] == "/scenarios/"
    # A stranger cannot compare other people's scenarios: they are simply not there.
    response = stranger_client.get("/compare/", {"s": [a.pk, b.pk]})
    assert response.status_code == 302
