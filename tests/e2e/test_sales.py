"""A sales engineer logs in, copies a customer's scenario, compares, and downloads the PDF."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Group, User

from advisor.engine.facts.catalog import default_catalog
from advisor.scenarios.services import scenario_submit

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "correct-horse-battery"


@pytest.fixture
def sales_engineer(transactional_db: Any) -> User:
    user = User.objects.create_user("sam.sales", password=PASSWORD)
    user.groups.add(Group.objects.get_or_create(name="sales")[0])
    return user


def test_sales_engineer_clones_compares_and_downloads_the_pdf(
    new_page: Any, live_server: Any, sales_engineer: User
) -> None:
    run = scenario_submit(
        name="Acme 70B pre-training",
        customer="Acme AI",
        inputs={"workload": "training", "model": "llama3-70b", "gpu": "h100-sxm", "gpus": 512},
    )
    original = run.scenario
    sales = new_page()
    page = sales.page
    page.goto(live_server.url + "/accounts/login/")
    page.fill("#id_username", "sam.sales")
    page.fill("#id_password", PASSWORD)
    with page.expect_navigation():
        page.click("#login-form button[type=submit]")

    # The workspace lists every customer's scenarios; filter by customer.
    page.goto(live_server.url + "/scenarios/")
    page.select_option("#customer", "Acme AI")
    with page.expect_navigation():
        page.click("form[role=search] button[type=submit]")
    assert "Acme 70B pre-training" in page.inner_text("#scenario-table")
    sales.screenshot("10-sales-workspace")

    # Open it, annotate, copy it, and change the copy to twice the GPUs.
    page.click("text=Acme 70B pre-training")
    page.wait_for_selector("#headline")
    page.wait_for_function("() => window.htmx && document.querySelector('.chart[data-drawn]')")
    page.fill("#notes", "Quote Q-1042: customer prefers Ethernet")
    page.click("#sales-panel button[type=submit]")
    page.wait_for_selector("#notes-status:has-text('Saved')")
    page.click("#clone-button")
    page.wait_for_selector("#wizard-form")
    with page.expect_navigation():
        page.click("button[name=nav][value='goto:hardware']")
    page.fill("input[name=gpus]", "1024")
    with page.expect_navigation():
        page.click("button[name=nav][value='goto:review']")
    page.fill("input[name=name]", "Acme 70B on 1024 GPUs")
    page.click("#submit-button")
    page.wait_for_selector("#headline")
    assert "Acme 70B on 1024 GPUs" in page.inner_text(".crumbs")

    # Compare the original and the copy side by side.
    page.goto(live_server.url + "/scenarios/")
    page.check(f"input[name=s][value='{original.pk}']")
    page.locator("input[name=s]:not([value='" + str(original.pk) + "'])").first.check()
    page.click("#compare-button")
    page.wait_for_selector("#compare-table")
    table = page.inner_text("#compare-table")
    assert "Acme 70B pre-training" in table and "Acme 70B on 1024 GPUs" in table
    gpu_name = default_catalog().gpu("h100-sxm").name  # customers read the display name
    assert f"512 × {gpu_name}" in table and f"1024 × {gpu_name}" in table
    assert "h100-sxm" not in table
    page.wait_for_function("() => document.getElementById('compare-cost')._fullData")
    names = page.evaluate("document.getElementById('compare-cost')._fullData.map(t => t.name)")
    assert "Acme 70B pre-training" in names and "Acme 70B on 1024 GPUs" in names
    sales.screenshot("11-compare")

    # The PDF for the quote.
    page.goto(live_server.url + f"/s/{original.pk}/")
    with page.expect_download() as info:
        page.click("#download-pdf")
    path = info.value.path()
    with open(path, "rb") as fh:
        pdf = fh.read()
    assert pdf.startswith(b"%PDF")
    assert len(pdf) > 50_000
    assert info.value.suggested_filename.endswith(".pdf")
    from tests.frontend.pdfread import pdf_image_count

    assert pdf_image_count(pdf) >= 4
