"""A 10,000-point sweep started in a real browser, its progress shown, its charts drawn.

Chromium (Playwright) drives the live server; two real Celery worker processes evaluate the
chunks. The workers start only once the sweep is queued, so its progress page is certainly
what the browser sees first; htmx then swaps in the charts when the last chunk commits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from advisor.scenarios.models import Scenario, Sweep, SweepStatus
from tests.e2e.conftest import browser, new_page  # noqa: F401 (fixtures)
from tests.support.workers import WorkerProcess

pytestmark = [pytest.mark.e2e, pytest.mark.services, pytest.mark.django_db(transaction=True)]

SEVENTY_B_TRAINING = {
    "workload": "training",
    "model": "llama3-70b",
    "gpu": "h100-sxm",
    "gpus": 64,
    "training": {"global_batch_sequences": 1024, "total_tokens": 1e12},
}


def test_a_ten_thousand_point_sweep_shows_its_progress_then_its_charts(
    new_page: Callable[[], Any],  # noqa: F811
    live_server: Any,
    worker_factory: Callable[..., WorkerProcess],
    purge_queue: None,
) -> None:
    owner = get_user_model().objects.create_user(
        username="sara.sales", password="correct-horse-battery-9"
    )
    scenario = Scenario.objects.create(
        name="70B, 8 servers", inputs=SEVENTY_B_TRAINING, owner=owner
    )
    visitor = new_page()
    page = visitor.page
    page.goto(live_server.url + "/accounts/login/")
    page.fill("input[name=username]", "sara.sales")
    page.fill("input[name=password]", "correct-horse-battery-9")
    with page.expect_navigation():
        page.click("#login-form button[type=submit]")

    page.goto(f"{live_server.url}/sweeps/new/{scenario.pk}/")
    page.fill("input[name=servers]", "2-100 step 2")
    page.uncheck("input[name=fabric][value=ethernet]")
    page.check("input[name=fabric][value=roce]")
    page.check("input[name=fabric][value=infiniband]")
    page.fill("input[name=nic_gbps]", "100, 200, 400, 800, 1600")
    page.fill("input[name=nics_per_node]", "1, 2, 4, 8")
    page.fill("input[name=oversubscription]", "1, 1.5, 2, 3, 4")
    visitor.screenshot("sweep-01-form")
    with page.expect_navigation():
        page.click("#sweep-form button[type=submit]")

    sweep = Sweep.objects.get()
    assert sweep.total_points == 10_000
    page.wait_for_selector("#sweep-progress")
    assert "Waiting for free workers" in page.inner_text("#sweep-progress-text")
    visitor.screenshot("sweep-02-progress")

    worker_factory("first")
    worker_factory("second")
    page.wait_for_selector("#sweep-by_servers[data-drawn]", timeout=240_000)
    page.wait_for_selector("#sweep-oversubscription[data-drawn]")
    visitor.screenshot("sweep-03-charts")

    sweep.refresh_from_db()
    assert sweep.status == SweepStatus.SUCCEEDED
    assert (sweep.done_points, sweep.done_chunks) == (10_000, sweep.total_chunks)
    assert page.locator("#top-designs tbody tr").count() == 15
