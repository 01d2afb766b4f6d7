"""The sweep pages: start from a scenario (CSRF-protected form), watch, read charts, export."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from advisor.scenarios.models import Scenario, Sweep

pytestmark = pytest.mark.django_db

TRAINING = {
    "workload": "training",
    "model": "llama3-8b",
    "gpu": "h100-sxm",
    "gpus": 16,
    "training": {"global_batch_sequences": 256, "total_tokens": 1e10},
}
FORM = {
    "servers": "1..8 x2",
    "fabric": ["roce", "infiniband"],
    "nic_gbps": "200, 400",
    "nics_per_node": "4, 8",
    "oversubscription": "1-2",
}


@pytest.fixture
def run_tasks(django_capture_on_commit_callbacks: Any) -> Callable[[], Any]:
    return lambda: django_capture_on_commit_callbacks(execute=True)


def person(username: str) -> Client:
    user = get_user_model().objects.create_user(username=username, password="pw-for-tests-1")
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user)
    browser.user = user  # type: ignore[attr-defined]
    return browser


@pytest.fixture
def owner() -> Client:
    return person("olivia")


@pytest.fixture
def stranger() -> Client:
    return person("stan")


@pytest.fixture
def scenario(owner: Client) -> Scenario:
    return Scenario.objects.create(name="Two servers", inputs=TRAINING, owner=owner.user)  # type: ignore[attr-defined]


def csrf_token_of(browser: Client, url: str) -> str:
    page = browser.get(url)
    assert page.status_code == 200
    match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode())
    assert match
    return match.group(1)


def start(browser: Client, scenario: Scenario, form: dict[str, Any] = FORM) -> Any:
    url = f"/sweeps/new/{scenario.pk}/"
    return browser.post(url, {**form, "csrfmiddlewaretoken": csrf_token_of(browser, url)})


def test_the_owner_starts_a_sweep_and_reads_its_charts_and_csv(
    owner: Client, scenario: Scenario, run_tasks: Callable[[], Any]
) -> None:
    with run_tasks():
        response = start(owner, scenario)

    sweep = Sweep.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/sweeps/{sweep.pk}/"
    assert sweep.total_points == 4 * 2 * 2 * 2 * 2
    page = owner.get(response["Location"]).content.decode()
    for chart in ("by_servers", "efficiency", "bandwidth", "oversubscription"):
        assert f'id="sweep-{chart}-data"' in page
    assert 'id="top-designs"' in page
    exported = owner.get(f"/sweeps/{sweep.pk}/results.csv")
    rows = list(csv.reader(io.StringIO(exported.content.decode())))
    assert rows[0][:4] == ["i", "servers", "gpus", "fabric"]
    assert len(rows) == 1 + 64
    assert f"sweep-{sweep.pk}.csv" in exported["Content-Disposition"]
    listing = owner.get("/sweeps/").content.decode()
    assert f"/sweeps/{sweep.pk}/" in listing


def test_sweep_pages_name_fabrics_by_their_labels(
    owner: Client, scenario: Scenario, run_tasks: Callable[[], Any]
) -> None:
    form = owner.get(f"/sweeps/new/{scenario.pk}/").content.decode()
    for label in ("Ethernet (TCP)", "RoCE v2", "InfiniBand"):
        assert f'<span class="c-title">{label}</span>' in form
    with run_tasks():
        response = start(owner, scenario)

    page = owner.get(response["Location"]).content.decode()
    grid = re.search(r"<td>Fabrics</td><td>([^<]*)</td>", page)
    assert grid and sorted(grid.group(1).split(", ")) == ["InfiniBand", "RoCE v2"]
    top_designs = page[page.index('id="top-designs"') :]
    assert "RoCE v2 " in top_designs or "InfiniBand " in top_designs
    for wrong in ("Roce V2", "Infiniband", ">roce ", ">infiniband "):
        assert wrong not in page and wrong not in form


def test_a_running_sweep_shows_its_progress_and_the_poll_refreshes_when_done(
    owner: Client, scenario: Scenario
) -> None:
    start(owner, scenario)  # never committed in this test: stays queued
    sweep = Sweep.objects.get()

    page = owner.get(f"/sweeps/{sweep.pk}/").content.decode()
    assert 'id="sweep-progress"' in page
    assert "Waiting for free workers" in page
    Sweep.objects.filter(pk=sweep.pk).update(status="running", done_points=16, done_chunks=1)
    fragment = owner.get(f"/sweeps/{sweep.pk}/progress").content.decode()
    assert "16 of 64 design points evaluated (25 %)" in fragment
    Sweep.objects.filter(pk=sweep.pk).update(status="succeeded", done_points=64)
    assert owner.get(f"/sweeps/{sweep.pk}/progress")["HX-Refresh"] == "true"


def test_the_form_refuses_a_post_without_its_csrf_token(owner: Client, scenario: Scenario) -> None:
    response = owner.post(f"/sweeps/new/{scenario.pk}/", FORM)

    assert response.status_code == 403
    assert Sweep.objects.count() == 0


def test_unreadable_axes_are_shown_next_to_their_field_and_nothing_starts(
    owner: Client, scenario: Scenario
) -> None:
    response = start(owner, scenario, {**FORM, "servers": "8-2", "fabric": []})

    assert response.status_code == 400
    page = response.content.decode()
    assert "cannot read the range &#x27;8-2&#x27;" in page
    assert "pick at least one fabric" in page
    assert Sweep.objects.count() == 0


def test_anonymous_visitors_must_sign_in_to_start_a_sweep(scenario: Scenario) -> None:
    response = Client().get(f"/sweeps/new/{scenario.pk}/")

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_a_stranger_cannot_start_see_poll_or_export_anothers_sweep(
    owner: Client, stranger: Client, scenario: Scenario, run_tasks: Callable[[], Any]
) -> None:
    with run_tasks():
        start(owner, scenario)
    sweep = Sweep.objects.get()

    assert stranger.get(f"/sweeps/new/{scenario.pk}/").status_code == 404
    for url in (
        f"/sweeps/{sweep.pk}/",
        f"/sweeps/{sweep.pk}/progress",
        f"/sweeps/{sweep.pk}/results.csv",
    ):
        assert stranger.get(url).status_code == 404, url
    assert f"/sweeps/{sweep.pk}/" not in stranger.get("/sweeps/").content.decode()
    assert stranger.get(f"/sweeps/?scenario={scenario.pk}").status_code == 404
    assert stranger.get("/sweeps/?scenario=not-a-uuid").status_code == 404
    assert Sweep.objects.count() == 1
