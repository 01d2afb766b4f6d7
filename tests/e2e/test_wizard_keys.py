"""The wizard from the keyboard: Enter in a field moves forward, never back to step 1."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_enter_in_a_field_moves_to_the_next_step_and_submits_on_the_last(
    new_page: Any, live_server: Any
) -> None:
    customer = new_page()
    page = customer.page
    page.goto(live_server.url + "/start/")
    with page.expect_navigation():
        page.click("#start-form button[type=submit]")
    page.wait_for_selector("#wizard-form")
    assert page.url.endswith("/job/")

    with page.expect_navigation():
        page.click("#next-button")
    assert page.url.endswith("/model/")
    with page.expect_navigation():
        page.press("input[name=sequence_length]", "Enter")
    assert page.url.endswith("/hardware/")  # not back to /job/

    page.fill("input[name=gpus]", "16")
    with page.expect_navigation():
        page.press("input[name=gpus]", "Enter")
    assert page.url.endswith("/work/")
    assert page.locator("#q-total_tokens_b").count() == 1

    with page.expect_navigation():
        page.press("input[name=total_tokens_b]", "Enter")
    assert page.url.endswith("/priorities/")
    with page.expect_navigation():
        page.click("#next-button")
    assert page.url.endswith("/review/")
    customer.check("wizard-review-keyboard")

    page.fill("input[name=name]", "Typed, then Enter")
    page.press("input[name=name]", "Enter")
    page.wait_for_url("**/s/**")
    assert "Typed, then Enter" in page.inner_text("main")
