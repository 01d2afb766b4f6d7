"""A customer without an account, start to finish in a real browser."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _into_wizard(page: Any) -> None:
    """/start/ shows a start page (a GET writes nothing); its button opens the questionnaire."""
    page.wait_for_load_state("load")
    if page.locator("#wizard-form").count() == 0:
        with page.expect_navigation():
            page.click("#start-form button[type=submit]")
    page.wait_for_selector("#wizard-form")


def _next(page: Any) -> None:
    with page.expect_navigation():
        page.click("#next-button")


def test_multi_server_training_gets_a_fabric_and_drawn_charts(
    new_page: Any, live_server: Any
) -> None:
    customer = new_page()
    page = customer.page
    page.goto(live_server.url + "/")
    customer.screenshot("01-home")
    page.click("#start-button")
    _into_wizard(page)

    # Step 1: the job
    page.check("input[name=workload][value=training]")
    page.check("input[name=scale][value=many]")
    customer.screenshot("02-wizard-job")
    _next(page)
    # Step 2: the model
    page.check("input[name=model_choice][value='llama3-70b']")
    _next(page)
    # Step 3: the GPUs
    page.check("input[name=gpu][value='h100-sxm']")
    page.fill("input[name=gpus]", "512")
    customer.screenshot("03-wizard-hardware")
    _next(page)
    # Step 4: the work, step 5: money and people (defaults are fine)
    _next(page)
    page.check("input[name=team_skills][value=ethernet]")
    _next(page)
    # Review
    page.fill("input[name=name]", "Llama 70B pre-training on 512 H100")
    page.fill("input[name=customer]", "Acme AI")
    customer.screenshot("04-wizard-review")
    page.click("#submit-button")
    page.wait_for_selector("#headline")
    page.wait_for_function(
        "() => ['chart-cost','chart-breakdown','chart-scaling','chart-topology']"
        ".every(id => document.getElementById(id) && document.getElementById(id)._fullData)"
    )

    headline = page.inner_text("#headline-title")
    assert "NICs per server" in headline
    assert "network $" in headline
    assert page.locator("#rationale li").count() >= 2
    for chart in ("chart-cost", "chart-breakdown", "chart-scaling", "chart-topology"):
        traces = page.evaluate(f"document.getElementById('{chart}')._fullData.length")
        assert traces > 0, chart
        points = page.evaluate(
            f"document.getElementById('{chart}')._fullData"
            ".reduce((n, t) => n + ((t.x && t.x.length) || 0), 0)"
        )
        assert points > 0, chart
    # The recommended design is marked on the cost chart.
    names = page.evaluate("document.getElementById('chart-cost')._fullData.map(t => t.name)")
    assert "Recommended" in names
    # Plotly drew SVG, not just an empty div.
    assert page.locator("#chart-cost .main-svg").count() > 0
    customer.screenshot("05-results")
    page.click("#bom summary")
    assert page.locator("#bom table.data tbody tr").count() > 0
    customer.screenshot("06-results-bom")

    page.click("#accuracy-link")
    page.wait_for_selector("#validation-table")
    assert page.locator("#validation-table .validation-row").count() > 3
    page.wait_for_function("() => document.getElementById('chart-validation')._fullData")
    customer.screenshot("07-accuracy")


def test_single_server_fine_tuning_needs_no_compute_fabric(new_page: Any, live_server: Any) -> None:
    customer = new_page()
    page = customer.page
    page.goto(live_server.url + "/start/")  # a page with a button: GET writes nothing
    with page.expect_navigation():
        page.click("#start-button")
    page.check("input[name=workload][value=fine_tuning]")
    page.check("input[name=scale][value=one]")
    _next(page)
    page.check("input[name=model_choice][value='llama3-8b']")
    _next(page)
    assert page.input_value("input[name=gpus]") == "8"  # one server's worth, filled in for us
    _next(page)
    page.fill("input[name=total_tokens_b]", "2")
    _next(page)
    _next(page)
    page.click("#submit-button")
    page.wait_for_selector("#headline")
    assert "No compute fabric needed" in page.inner_text("#headline-title")
    assert "inside one server" in page.inner_text("#rationale")
    page.wait_for_function("() => document.getElementById('chart-topology')._fullData")
    assert page.evaluate("document.getElementById('chart-topology')._fullData.length") > 0
    # Scaling either does not apply (said in words) or is drawn as what-if curves.
    assert page.locator("#no-scaling").is_visible() or page.evaluate(
        "document.getElementById('chart-scaling')._fullData.length"
    )
    customer.screenshot("08-results-single-server")


def test_invalid_input_shows_an_inline_error(new_page: Any, live_server: Any) -> None:
    customer = new_page()
    page = customer.page
    page.goto(live_server.url + "/start/")  # a page with a button: GET writes nothing
    with page.expect_navigation():
        page.click("#start-button")
    _next(page)
    _next(page)
    # While typing: htmx checks the answer and names the problem beside the question.
    page.fill("input[name=gpus]", "lots")
    page.locator("input[name=gpus]").dispatch_event("change")
    page.wait_for_function(
        "() => document.getElementById('err-gpus').textContent.includes('whole number')"
    )
    # Pressing Next anyway keeps the person on the page with the same message.
    with page.expect_navigation():
        page.click("#next-button")
    assert page.url.endswith("/hardware/")
    error = page.inner_text("#err-gpus")
    assert "Enter a whole number; 'lots' is not one." in error
    assert page.locator("#q-gpus .why").is_visible()
    customer.screenshot("09-wizard-inline-error")
    # Fixing it moves on, and nothing typed earlier was lost.
    page.fill("input[name=gpus]", "128")
    _next(page)
    assert page.url.endswith("/work/")
    with page.expect_navigation():
        page.click("button[name=nav][value=back]")
    assert page.input_value("input[name=gpus]") == "128"


def test_progress_bar_follows_the_run_and_the_answer_appears(
    new_page: Any, live_server: Any
) -> None:
    from advisor.engine import evaluate
    from advisor.scenarios.models import RunStatus, Scenario, ScenarioRun

    inputs = {"workload": "training", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 256}
    scenario = Scenario.objects.create(name="Waiting for a worker", inputs=inputs)
    run = ScenarioRun.objects.create(scenario=scenario, status=RunStatus.RUNNING, progress=30)
    customer = new_page()
    page = customer.page
    page.goto(f"{live_server.url}/s/{scenario.pk}/")
    bar = page.locator("[role=progressbar]")
    assert bar.get_attribute("aria-valuenow") == "30"
    customer.screenshot("12-progress")
    # A worker reports progress: the bar moves without the person reloading.
    ScenarioRun.objects.filter(pk=run.pk).update(progress=70)
    page.wait_for_selector("[role=progressbar][aria-valuenow='70']")
    # The worker finishes: the page shows the answer by itself.
    ScenarioRun.objects.filter(pk=run.pk).update(
        status=RunStatus.SUCCEEDED, progress=100, result=evaluate(inputs)
    )
    page.wait_for_selector("#headline-title")
    assert "NICs per server" in page.inner_text("#headline-title")


def test_serving_a_model_split_across_servers(new_page: Any, live_server: Any) -> None:
    customer = new_page()
    page = customer.page
    page.goto(live_server.url + "/start/")  # a page with a button: GET writes nothing
    with page.expect_navigation():
        page.click("#start-button")
    page.check("input[name=workload][value=inference]")
    page.check("input[name=scale][value=many]")
    _next(page)
    page.check("input[name=model_choice][value='llama3.1-405b']")
    # BF16: left as usual, Meta's FP8 release fits one server and nothing is split
    page.select_option("select[name=precision]", "bf16")
    _next(page)
    page.fill("input[name=gpus]", "16")
    _next(page)
    # The questions follow the workload: serving asks about load and latency, not tokens.
    assert page.locator("input[name=total_tokens_b]").count() == 0
    page.check("input[name=replicas][value=split]")
    page.fill("input[name=target_ms_per_token]", "40")
    _next(page)
    page.check("input[name=gpu_pricing][value=cloud]")
    assert page.locator("#q-gpu_hour_usd").is_visible()  # asked only for rented GPUs
    _next(page)
    page.click("#submit-button")
    page.wait_for_selector("#headline")
    page.wait_for_function("() => document.getElementById('chart-breakdown')._fullData")
    assert "per token" in page.inner_text("#headline").lower()
    if page.locator(".warning-latency").count():  # a missed latency target is said up front
        assert "40 ms per token" in page.inner_text("#warnings")
        warnings_top = page.locator("#warnings").bounding_box()["y"]
        assert warnings_top < page.locator("#headline").bounding_box()["y"]
    assert page.evaluate("document.getElementById('chart-breakdown')._fullData.length") == 3
    customer.screenshot("13-results-inference-split")
