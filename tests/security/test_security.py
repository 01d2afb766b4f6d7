"""Security basics across the whole app (issue 7, item 5), with three personas: an owner, a
stranger (signed in, not the owner, not sales) and an anonymous visitor.

- CSRF: every POST form on every page carries a token and every one of them (and every htmx
  POST) is refused without it.
- A stranger cannot reach another's scenario by id, by its link, through the API, through an
  export or through the admin; nor its sweeps.
- Throttles: every API endpoint counts anonymous callers per address and clients per client,
  in a store every web process shares.
- Secrets come only from the environment.
`check --deploy` on the production settings lives in tests/test_deployment.py.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from advisor.scenarios.models import RunStatus, Scenario, ScenarioRun, Sweep
from advisor.scenarios.services import scenario_submit
from advisor.scenarios.sweeps.services import sweep_create
from api.services import api_client_create

pytestmark = pytest.mark.django_db

REPO = Path(__file__).resolve().parents[2]
TRAINING = {
    "workload": "training",
    "model": "llama3-8b",
    "gpu": "h100-sxm",
    "gpus": 16,
    "training": {"global_batch_sequences": 256, "total_tokens": 1e10},
}


# --- Personas and their things ----------------------------------------------------------------


@dataclass
class World:
    owner: Any
    stranger: Any
    scenario: Scenario
    run: ScenarioRun
    sweep: Sweep
    owner_token: str
    stranger_token: str


def browser(user: Any = None, *, csrf: bool = False) -> Client:
    client = Client(enforce_csrf_checks=csrf)
    if user is not None:
        client.force_login(user)
    return client


@pytest.fixture
def world(django_capture_on_commit_callbacks: Callable[..., Any]) -> World:
    users = get_user_model().objects
    owner = users.create_user(username="olivia.owner", password="correct-horse-battery-1")
    stranger = users.create_user(username="stan.stranger", password="correct-horse-battery-2")
    with django_capture_on_commit_callbacks(execute=True):
        run = scenario_submit(name="Olivia's cluster", inputs=TRAINING, owner=owner)
    scenario = run.scenario
    with django_capture_on_commit_callbacks(execute=True):
        sweep = sweep_create(scenario=scenario, axes={"nic_gbps": [200, 400]}, owner=owner)
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED, run.error
    # The owner's API client is a user of its own; its scenarios are the ones it owns.
    owner_client = api_client_create(name="olivia-quotes")
    stranger_client = api_client_create(name="stan-quotes")
    api_scenario = Scenario.objects.create(
        name="Quoted", inputs=TRAINING, owner=owner_client.client.user
    )
    ScenarioRun.objects.create(scenario=api_scenario)
    return World(
        owner=owner,
        stranger=stranger,
        scenario=scenario,
        run=run,
        sweep=sweep,
        owner_token=owner_client.key,
        stranger_token=stranger_client.key,
    )


# --- CSRF on every form ------------------------------------------------------------------------


@dataclass
class Form:
    page: str
    action: str
    fields: dict[str, str] = field(default_factory=dict)
    has_token: bool = False


class FormParser(HTMLParser):
    """POST forms (with their fields) and htmx POST targets of one page."""

    def __init__(self, page: str) -> None:
        super().__init__()
        self.page = page
        self.forms: list[Form] = []
        self.hx_posts: list[str] = []
        self.hx_csrf_header = False
        self._open: Form | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if "hx-post" in a:
            self.hx_posts.append(a["hx-post"])
        if "X-CSRFToken" in a.get("hx-headers", ""):
            self.hx_csrf_header = True
        if tag == "form" and a.get("method", "get").lower() == "post":
            self._open = Form(page=self.page, action=a.get("action") or self.page)
            self.forms.append(self._open)
        elif self._open is not None and tag in ("input", "textarea", "select") and a.get("name"):
            if a["name"] == "csrfmiddlewaretoken":
                self._open.has_token = True
            elif a.get("type") not in ("checkbox", "radio") or "checked" in a:
                self._open.fields.setdefault(a["name"], a.get("value", ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._open = None


def crawl(client: Client, url: str) -> FormParser:
    response = client.get(url, follow=True)
    assert response.status_code == 200, f"{url}: {response.status_code}"
    final = response.request["PATH_INFO"]
    parser = FormParser(final)
    parser.feed(response.content.decode())
    return parser


def pages_of(world: World) -> dict[str, tuple[Any, list[str]]]:
    """Every page with a form, by persona (who sees it) -> (user, urls)."""
    from frontend.services import draft_create

    s, w = world.scenario.pk, world.sweep.pk
    # GET /start/ writes nothing (issue 12): the questionnaire's pages are crawled by a draft.
    draft = draft_create(owner=None, answers={})
    return {
        "anonymous": (
            None,
            ["/", "/accounts/login/", "/accounts/signup/", "/start/", f"/q/{draft.pk}/job/"],
        ),
        "owner": (
            world.owner,
            ["/", "/scenarios/", f"/s/{s}/", "/sweeps/", f"/sweeps/new/{s}/", f"/sweeps/{w}/"],
        ),
        "sales": (sales_engineer(), ["/scenarios/", f"/s/{s}/", f"/sweeps/{w}/"]),
    }


def sales_engineer() -> Any:
    from django.contrib.auth.models import Group

    user = get_user_model().objects.create_user(
        username="sam.sales", password="correct-horse-battery-4"
    )
    user.groups.add(Group.objects.get_or_create(name="sales")[0])
    return user


def test_every_post_form_carries_a_csrf_token_and_is_refused_without_it(world: World) -> None:
    checked: list[str] = []
    for persona, (user, urls) in pages_of(world).items():
        for url in urls:
            page = crawl(browser(user), url)
            for form in page.forms:
                assert form.has_token, f"{persona} {form.page}: form to {form.action} has no token"
                refused = browser(user, csrf=True).post(form.action, form.fields)
                assert refused.status_code == 403, f"{persona}: POST {form.action} without token"
                checked.append(form.action)
            for target in page.hx_posts:
                assert page.hx_csrf_header, f"{page.page}: htmx POSTs without the CSRF header"
                refused = browser(user, csrf=True).post(target, {})
                assert refused.status_code == 403, f"{persona}: htmx POST {target} without token"
                checked.append(target)
    # Not vacuous: the login, sign-up, log-out, questionnaire, re-run, clone, notes, edit and
    # sweep forms were all found and refused.
    for expected in (
        "/accounts/login/",
        "/accounts/signup/",
        "/accounts/logout/",
        "rerun",
        "clone",
        "notes",
        "edit",
        "/sweeps/new/",
        "/start/",
        "/q/",
    ):
        assert any(expected in action for action in checked), expected
    assert Scenario.objects.count() == 2
    assert ScenarioRun.objects.filter(scenario=world.scenario).count() == 1


# --- Strangers ----------------------------------------------------------------------------------


def scenario_urls(world: World) -> list[str]:
    s = world.scenario.pk
    return [
        f"/s/{s}/",
        f"/s/{s}/progress",
        f"/s/{s}/report.pdf",
        f"/s/{s}/bom.csv",
        f"/s/{s}/result.json",
        f"/sweeps/new/{s}/",
        f"/sweeps/{world.sweep.pk}/",
        f"/sweeps/{world.sweep.pk}/progress",
        f"/sweeps/{world.sweep.pk}/results.csv",
    ]


def test_the_owner_reaches_every_page_and_export_of_their_scenario(world: World) -> None:
    owner = browser(world.owner)
    for url in scenario_urls(world):
        assert owner.get(url).status_code == 200, url


@pytest.mark.parametrize("who", ["stranger", "anonymous"])
def test_a_stranger_cannot_reach_anothers_scenario_by_id_link_or_export(
    world: World, who: str
) -> None:
    visitor = browser(world.stranger if who == "stranger" else None)
    for url in scenario_urls(world):
        status = visitor.get(url).status_code
        if who == "anonymous" and url.startswith("/sweeps/new/"):
            assert status == 302, url  # to the login page, before anything is looked up
        else:
            assert status == 404, f"{who} GET {url}: {status}"
    for action in ("rerun", "edit", "clone", "notes"):
        assert visitor.post(f"/s/{world.scenario.pk}/{action}").status_code in (404, 302)
    assert visitor.post(f"/sweeps/new/{world.scenario.pk}/", {"servers": "2"}).status_code in (
        404,
        302,
    )
    # Refused, and nothing changed.
    assert ScenarioRun.objects.filter(scenario=world.scenario).count() == 1
    assert Scenario.objects.count() == 2
    assert Sweep.objects.count() == 1


def test_a_stranger_cannot_reach_anothers_scenario_through_the_api(world: World) -> None:
    api_scenario = Scenario.objects.exclude(pk=world.scenario.pk).get()
    run = api_scenario.runs.get()
    urls = [
        f"/api/v1/scenarios/{api_scenario.pk}/",
        f"/api/v1/scenarios/{api_scenario.pk}/bom/",
        f"/api/v1/runs/{run.pk}/",
        f"/api/v1/scenarios/{world.scenario.pk}/",
        f"/api/v1/runs/{world.run.pk}/",
        f"/api/v1/sweeps/{world.sweep.pk}/",
        f"/api/v1/sweeps/{world.sweep.pk}/results/",
    ]
    stranger = Client(HTTP_AUTHORIZATION=f"Token {world.stranger_token}")
    owner = Client(HTTP_AUTHORIZATION=f"Token {world.owner_token}")
    for url in urls:
        assert stranger.get(url).status_code == 404, url
    assert owner.get(urls[0]).status_code == 200
    refused = stranger.post(f"/api/v1/scenarios/{api_scenario.pk}/runs/")
    assert refused.status_code == 404
    assert api_scenario.runs.count() == 1
    ids = [s["id"] for s in stranger.get("/api/v1/scenarios/").json()["results"]]
    assert ids == []
    assert Client().get(urls[0]).status_code == 401


@pytest.mark.parametrize("who", ["stranger", "anonymous"])
def test_a_stranger_cannot_reach_anothers_scenario_through_the_admin(
    world: World, who: str
) -> None:
    visitor = browser(world.stranger if who == "stranger" else None)
    urls = [
        "/admin/",
        "/admin/scenarios/scenario/",
        f"/admin/scenarios/scenario/{world.scenario.pk}/change/",
        f"/admin/scenarios/scenariorun/{world.run.pk}/change/",
    ]
    for url in urls:
        response = visitor.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/admin/login/"), url
        assert "Olivia" not in visitor.get(url, follow=True).content.decode()


def test_a_staff_member_without_permissions_sees_no_scenario_in_the_admin(world: World) -> None:
    clerk = get_user_model().objects.create_user(
        username="cleo.clerk", password="correct-horse-battery-3", is_staff=True
    )
    response = browser(clerk).get(f"/admin/scenarios/scenario/{world.scenario.pk}/change/")

    assert response.status_code == 403


# --- Throttles ------------------------------------------------------------------------------------


def api_views() -> Iterator[tuple[str, Any]]:
    def walk(patterns: list[Any], prefix: str) -> Iterator[tuple[str, Any]]:
        for p in patterns:
            if isinstance(p, URLResolver):
                yield from walk(p.url_patterns, prefix + str(p.pattern))
            elif isinstance(p, URLPattern):
                yield prefix + str(p.pattern), getattr(p.callback, "cls", None)

    for route, view in walk(get_resolver().url_patterns, ""):
        if route.startswith("api/v1/") and view is not None:
            yield route, view


def test_every_api_endpoint_is_throttled_per_address_and_per_client() -> None:
    from api.throttling import AnonymousThrottle, ClientThrottle

    views = list(api_views())
    assert any(route.startswith("api/v1/sweeps/") for route, _ in views)
    for route, view in views:
        classes = view().get_throttles()
        kinds = {type(t) for t in classes}
        assert {AnonymousThrottle, ClientThrottle} <= kinds, route


def test_anonymous_callers_and_each_client_are_stopped_at_their_rate(
    world: World, settings: Any
) -> None:
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {"anon": "2/minute", "client": "3/minute"},
    }
    settings.CACHES = {
        **settings.CACHES,
        settings.API_THROTTLE_CACHE: {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": "security-throttle",
        },
    }
    anonymous = Client()
    assert [anonymous.get("/api/v1/sweeps/").status_code for _ in range(3)] == [401, 401, 429]
    owner = Client(HTTP_AUTHORIZATION=f"Token {world.owner_token}")
    assert [owner.get("/api/v1/sweeps/").status_code for _ in range(4)] == [200, 200, 200, 429]
    # Another client has its own budget.
    stranger = Client(HTTP_AUTHORIZATION=f"Token {world.stranger_token}")
    assert stranger.get("/api/v1/sweeps/").status_code == 200


def test_rate_limit_counters_are_shared_by_every_web_process_when_redis_is_there() -> None:
    code = "from django.conf import settings as s; print(s.CACHES[s.API_THROTTLE_CACHE]['BACKEND'])"
    env = {
        **os.environ,
        "DATABASE_URL": "postgresql://x@127.0.0.1/x",
        "REDIS_URL": "redis://127.0.0.1:1/0",
    }
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "django.core.cache.backends.redis.RedisCache"


# --- Secrets -------------------------------------------------------------------------------

SECRET_PATTERNS = [
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
    re.compile(r"""(?i)(secret_key|password|passwd|api_key|token)\s*=\s*["'][^"'\s{}$]{12,}["']"""),
    re.compile(r"(?i)postgres(ql)?://[^:/@\s]+:[^@\s${}]+@(?!db:|localhost|127\.0\.0\.1)"),
    re.compile(r"AKIA[0-9A-Z]{16}"),
]
# The development fallback key (refused in production, see settings) and compose's local-only
# database password are the only credential-looking literals allowed.
ALLOWED = ("dev-only-insecure-key-never-use-in-production", "advisor:advisor@db:5432")


def test_no_secret_is_committed_to_the_repository() -> None:
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    offenders = []
    for name in tracked:
        if name.startswith("tests/") or not name.endswith(
            (".py", ".yml", ".yaml", ".toml", ".sh", ".cfg", ".ini", ".env", ".json")
        ):
            continue
        path = REPO / name
        if not path.is_file():
            continue
        for number, line in enumerate(path.read_text(errors="ignore").splitlines(), 1):
            if any(ok in line for ok in ALLOWED):
                continue
            if any(p.search(line) for p in SECRET_PATTERNS):
                offenders.append(f"{name}:{number}: {line.strip()[:80]}")
    assert offenders == []


def test_the_production_secret_key_is_the_one_in_the_environment() -> None:
    key = "k" * 30 + "-from-the-environment-only-0123456789"
    env = {
        **os.environ,
        "DJANGO_ENV": "production",
        "SECRET_KEY": key,
        "ALLOWED_HOSTS": "advisor.example.com",
        "API_PUBLIC_BASE_URL": "https://advisor.example.com",
    }
    env.pop("DEBUG", None)
    result = subprocess.run(
        [sys.executable, "-c", "from django.conf import settings as s; print(s.SECRET_KEY)"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == key
