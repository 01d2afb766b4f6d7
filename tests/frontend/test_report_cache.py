"""A PDF is drawn once per run and cover (preparer, reference, customer) and then served from
the cache; anonymous visitors get a few exports per window (drawing one takes a worker for
seconds)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from advisor.scenarios import reports
from frontend import throttle
from tests.frontend.conftest import make_scenario

pytestmark = pytest.mark.django_db


@pytest.fixture
def drawings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The preparer of each PDF actually drawn (not served from the cache)."""
    drawn: list[str] = []
    draw = reports._draw_report_pdf

    def counting(*args: Any, **kwargs: Any) -> bytes:
        drawn.append(kwargs["prepared_by"])
        return draw(*args, **kwargs)

    monkeypatch.setattr(reports, "_draw_report_pdf", counting)
    return drawn


def test_the_same_report_is_drawn_once_and_served_again(
    drawings: list[str], sales_client: Client
) -> None:
    scenario = make_scenario(name="Cached report")

    first = sales_client.get(f"/s/{scenario.pk}/report.pdf")
    second = sales_client.get(f"/s/{scenario.pk}/report.pdf")

    assert first.status_code == second.status_code == 200
    assert first.content == second.content
    assert len(drawings) == 1


def test_another_preparer_or_reference_draws_a_new_report(
    drawings: list[str], sales_client: Client, customer_client: Client
) -> None:
    scenario = make_scenario(name="Cached report")

    sales_client.get(f"/s/{scenario.pk}/report.pdf")
    customer_client.get(f"/s/{scenario.pk}/report.pdf")
    scenario.quote_reference = "Q-2026-17"
    scenario.save()
    sales_client.get(f"/s/{scenario.pk}/report.pdf")

    assert len(drawings) == 3
    assert drawings[0] == drawings[2] != drawings[1]


def test_anonymous_exports_are_limited_per_address(
    monkeypatch: pytest.MonkeyPatch, drawings: list[str]
) -> None:
    monkeypatch.setitem(throttle.FORM_ATTEMPTS_PER_WINDOW, "export", 2)
    scenario = make_scenario(name="Anonymous report")
    visitor = Client()

    statuses = [visitor.get(f"/s/{scenario.pk}/report.pdf").status_code for _ in range(3)]

    assert statuses == [200, 200, 429]
    refused = visitor.get(f"/s/{scenario.pk}/report.pdf")
    assert int(refused["Retry-After"]) == throttle.WINDOW_S
    assert len(drawings) == 1  # the second export came from the cache


def test_signed_in_people_are_not_limited_by_the_anonymous_export_limit(
    monkeypatch: pytest.MonkeyPatch, customer_client: Client, customer_user: Any
) -> None:
    monkeypatch.setitem(throttle.FORM_ATTEMPTS_PER_WINDOW, "export", 1)
    scenario = make_scenario(name="Own report", owner=customer_user)

    statuses = [customer_client.get(f"/s/{scenario.pk}/report.pdf").status_code for _ in range(3)]

    assert statuses == [200, 200, 200]
