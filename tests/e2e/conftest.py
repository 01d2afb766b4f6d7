"""Browser tests: Playwright's sync API drives Debian's Chromium against the live server.

Never downloads a browser: the executable is /usr/bin/chromium (override with
FABRIC_CHROMIUM). Every request a page makes is recorded, and a test fails if any of them
left the server (CDN scripts, fonts, analytics...).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("FABRIC_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-output" / "screenshots"


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    """One Chromium for the browser tests, stopped when they are done.

    Playwright's sync API keeps an event loop running in this thread while it is open, and
    Django's ORM refuses to run in a thread with a running loop unless told that this is
    fine (it is: the tests are sequential). The permission lives exactly as long as the
    browser, so later tests and their subprocesses (manage.py check --deploy) never see it.
    """
    if not Path(CHROMIUM).exists():
        # `make test` installs Debian's chromium, so there a missing browser is a failure.
        if os.environ.get("FABRIC_REQUIRE_SERVICES") == "1":
            pytest.fail(f"Chromium not found at {CHROMIUM}; make test should have installed it")
        pytest.skip(f"Chromium not found at {CHROMIUM}: apt-get install chromium")
    from playwright.sync_api import sync_playwright

    with pytest.MonkeyPatch.context() as env:
        env.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            yield browser
            browser.close()


class PageRecorder:
    """A page plus every URL it requested, to prove nothing left the server."""

    def __init__(self, page: Any, base_url: str) -> None:
        self.page = page
        self.base_url = base_url
        self.requests: list[str] = []
        self.console_errors: list[str] = []
        page.on("request", lambda request: self.requests.append(request.url))
        page.on(
            "console",
            lambda msg: self.console_errors.append(msg.text) if msg.type == "error" else None,
        )

    def csp_violations(self) -> list[str]:
        """What the Content-Security-Policy refused (Chromium says so in the console)."""
        return [text for text in self.console_errors if "Content Security Policy" in text]

    def outside(self) -> list[str]:
        return [url for url in self.requests if not url.startswith(self.base_url)]

    def screenshot(self, name: str) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def check(self, name: str) -> None:
        """What every page must pass: no horizontal scroll at this viewport, no serious or
        critical axe-core violation, no console error; and a screenshot to look at."""
        page = self.page
        page.wait_for_load_state("load")
        width = page.evaluate(
            "() => Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"
        )
        viewport = page.evaluate("() => window.innerWidth")
        if width > viewport:
            wide = page.evaluate(WIDEST_ELEMENTS)
            raise AssertionError(f"{name}: page is {width} px wide at {viewport} px: {wide}")
        problems = axe_problems(page)
        assert not problems, f"{name}: axe serious/critical violations: {problems}"
        assert not self.console_errors, f"{name}: console errors: {self.console_errors}"
        self.screenshot(name)


# The elements wider than the viewport, innermost first: what to fix when a page scrolls.
WIDEST_ELEMENTS = """() => {
  const vw = window.innerWidth;
  return Array.from(document.querySelectorAll('body *'))
    .filter(el => el.getBoundingClientRect().right > vw + 1)
    .slice(-5)
    .map(el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
         (typeof el.className === 'string' ? '.' + el.className.split(' ').join('.') : '') +
         ' ' + Math.round(el.getBoundingClientRect().right));
}"""
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


def axe_problems(page: Any) -> list[str]:
    """axe-core's serious and critical violations on the page, as readable lines."""
    from axe_playwright_python.sync_playwright import Axe

    response = Axe().run(page).response
    out = []
    for violation in response.get("violations", []):
        if violation.get("impact") in ("serious", "critical"):
            targets = [n.get("target") for n in violation.get("nodes", [])][:3]
            out.append(f"{violation['id']} ({violation['impact']}): {targets}")
    return out


@pytest.fixture
def new_page(browser: Any, live_server: Any) -> Iterator[Any]:
    """Factory: a fresh browser context (its own cookies) recording its requests;
    `new_page(phone=True)` is a 390 px wide phone."""
    contexts: list[Any] = []
    recorders: list[PageRecorder] = []

    def make(phone: bool = False) -> PageRecorder:
        context = browser.new_context(
            viewport=PHONE if phone else DESKTOP,
            accept_downloads=True,
            is_mobile=phone,
            has_touch=phone,
            device_scale_factor=1,
        )
        context.set_default_timeout(20_000)
        contexts.append(context)
        recorder = PageRecorder(context.new_page(), live_server.url)
        recorders.append(recorder)
        return recorder

    yield make
    for context in contexts:
        context.close()
    leaked = [url for r in recorders for url in r.outside()]
    assert not leaked, f"requests left the server: {leaked}"
    # Every browser test, whatever it checks: nothing the page tried was refused by the CSP.
    refused = [text for r in recorders for text in r.csp_violations()]
    assert not refused, f"Content-Security-Policy violations: {refused}"
