"""Pages that every visitor sees, and the static files they need (all served by us)."""

from __future__ import annotations

import pytest
from django.contrib.staticfiles import finders
from django.test import Client

pytestmark = pytest.mark.django_db


def test_home_invites_without_an_account(client: Client) -> None:
    html = client.get("/").content.decode()
    assert 'action="/start/"' in html and "no account required" in html
    assert "/static/vendor/htmx.min.js" in html
    assert "cdn" not in html.lower()


def test_accuracy_page_shows_predicted_vs_measured_with_sources(client: Client) -> None:
    from advisor.engine.tools.validation import validation_report

    report = validation_report()
    html = client.get("/accuracy/").content.decode()
    assert 'id="validation-table"' in html
    assert f"{sum(1 for r in report['rows'] if r['passed'])} / {len(report['rows'])}" in html
    first = report["rows"][0]
    assert str(first["source"])[:30] in html.replace("&#x27;", "'").replace("&amp;", "&")


def test_plotly_and_htmx_are_our_own_static_files() -> None:
    plotly_js = finders.find("vendor/plotly/plotly.min.js")
    htmx_js = finders.find("vendor/htmx.min.js")
    assert plotly_js and htmx_js
    with open(plotly_js, "rb") as fh:
        assert b"plotly.js" in fh.read(200)
    with open(htmx_js, "rb") as fh:
        assert fh.read(9) == b"var htmx="


def test_signup_and_login_pages_render(client: Client) -> None:
    assert b'id="signup-form"' in client.get("/accounts/signup/").content
    assert b'id="login-form"' in client.get("/accounts/login/").content


def test_every_page_links_a_favicon_that_exists(client: Client) -> None:
    html = client.get("/").content.decode()
    assert '<link rel="icon" href="/static/frontend/favicon.svg"' in html
    assert client.get("/favicon.ico")["Location"] == "/static/frontend/favicon.svg"
    from django.contrib.staticfiles import finders

    assert finders.find("frontend/favicon.svg")
