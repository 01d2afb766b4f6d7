"""Issue 12: a strict Content-Security-Policy (scripts from this origin only, no inline
script) with Plotly, htmx, the admin and the API docs still working. Every browser test fails
on a CSP violation in the console (tests/e2e/conftest.py); these visit what the others do not.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from tests.frontend.conftest import make_scenario

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "correct-horse-battery-staple"


@pytest.fixture
def staff(transactional_db: Any) -> User:
    return User.objects.create_superuser("ada.admin", password=PASSWORD)


def test_an_injected_inline_script_is_refused_and_noticed(new_page: Any, live_server: Any) -> None:
    visitor = new_page()
    page = visitor.page
    response = page.goto(live_server.url + "/")
    directives = dict(
        part.strip().split(" ", 1)
        for part in response.headers["content-security-policy"].split(";")
    )
    assert directives["script-src"] == "'self'"
    assert directives["object-src"] == "'none'"
    assert directives["frame-ancestors"] == "'none'"

    page.evaluate(
        "() => { const s = document.createElement('script');"
        " s.textContent = 'window.__injected = 1'; document.body.appendChild(s); }"
    )

    assert page.evaluate("() => window.__injected") is None
    page.wait_for_function("() => true")  # let the console message arrive
    assert any("inline script" in text for text in visitor.csp_violations())
    visitor.console_errors.clear()  # seen: the fixture's own check would fail on it


def test_charts_and_htmx_work_under_the_policy(new_page: Any, live_server: Any) -> None:
    scenario = make_scenario()
    visitor = new_page()
    page = visitor.page
    page.goto(f"{live_server.url}/s/{scenario.pk}/")
    page.wait_for_selector("#headline")
    page.wait_for_function(
        "() => window.htmx && window.Plotly && document.querySelector('.chart[data-drawn]')"
    )
    assert visitor.csp_violations() == []


def test_the_admin_works_under_the_policy(new_page: Any, live_server: Any, staff: User) -> None:
    admin = new_page()
    page = admin.page
    page.goto(live_server.url + "/admin/login/")
    page.fill("#id_username", "ada.admin")
    page.fill("#id_password", PASSWORD)
    with page.expect_navigation():
        page.click("input[type=submit]")
    page.wait_for_selector("#site-name")
    for path in (
        "/admin/auth/user/",
        "/admin/auth/user/add/",
        f"/admin/auth/user/{staff.pk}/change/",
    ):
        page.goto(live_server.url + path)
        page.wait_for_load_state("load")
    assert admin.csp_violations() == []


def test_the_api_docs_work_under_the_policy(new_page: Any, live_server: Any) -> None:
    reader = new_page()
    page = reader.page
    page.goto(live_server.url + "/api/v1/docs/")
    page.wait_for_selector("#swagger-ui .info", timeout=30_000)
    assert "Fabric Advisor API" in page.inner_text("#swagger-ui .info")
    assert reader.csp_violations() == []
