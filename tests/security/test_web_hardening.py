"""Issue 12, web findings, told with personas: a customer without an account, a stranger who
gets hold of the customer's links, and a sales engineer who opens customer links while
logged out.

- Opening a customer's scenario (/s/<id>/) or draft (/q/<id>/) and then signing up or in took
  it over, and the creator's link returned 404. Only what a session *created* is claimed.
- An old draft link could still rename and re-run a scenario after it changed owner.
- `GET /start/` wrote a draft row per request; anonymous web use had no rate limit.
- The web allowed unlimited concurrent re-runs of one scenario (the API answered 409).
- /admin/login/ had no attempt limit; the sign-in limiter counted REMOTE_ADDR only (behind a
  proxy one attacker locked everyone out) and counted successful sign-ins.
- SQLite said "database is locked" under parallel submissions.
- The BOM CSV did not neutralise tab and carriage-return formula prefixes.
"""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from advisor.scenarios.models import RunStatus, Scenario, ScenarioRun
from frontend.models import QuestionnaireDraft
from frontend.throttle import FORM_ATTEMPTS_PER_WINDOW
from tests.frontend.conftest import make_scenario
from tests.frontend.sample_result import training_result

pytestmark = pytest.mark.django_db(transaction=True)

REPO = Path(__file__).resolve().parents[2]
PASSWORD = "correct-horse-battery-staple"


def answer_the_questionnaire(client: Client, name: str = "Customer cluster") -> tuple[str, str]:
    """Walk the wizard as a customer does; returns (scenario id, draft id)."""
    start = client.post("/start/")
    assert start.status_code == 302
    base = start["Location"].rsplit("/", 2)[0]
    for step, data in (
        ("job", {"workload": "training", "scale": "many"}),
        ("model", {"model_choice": "llama3-8b"}),
        ("hardware", {"gpu": "h100-sxm", "gpus": "16"}),
        ("work", {}),
        ("priorities", {}),
    ):
        assert client.post(f"{base}/{step}/", {"nav": "next", **data}).status_code == 302, step
    done = client.post(f"{base}/review/", {"nav": "submit", "name": name})
    assert done.status_code == 302 and done["Location"].startswith("/s/"), done
    return done["Location"].split("/")[2], base.split("/")[2]


def sign_up(client: Client, username: str) -> Any:
    return client.post(
        "/accounts/signup/",
        {"username": username, "password1": PASSWORD, "password2": PASSWORD},
    )


def sign_in(client: Client, username: str, password: str = PASSWORD, **extra: Any) -> Any:
    return client.post("/accounts/login/", {"username": username, "password": password}, **extra)


@pytest.fixture(autouse=True)
def _quick_passwords_and_a_small_limit(settings: Any) -> None:
    """Hashing is not under test here, and 3 failures tell as much as 10."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.AXES_FAILURE_LIMIT = 3


@pytest.fixture
def sales_engineer(db: Any) -> User:
    user = User.objects.create_user("sam.sales", password=PASSWORD)
    group, _ = Group.objects.get_or_create(name="sales")
    user.groups.add(group)
    return user


# --- Claims: only what this browser created --------------------------------------------------


def test_a_stranger_who_opens_the_links_and_signs_up_takes_nothing() -> None:
    customer, stranger = Client(), Client()
    scenario_id, draft_id = answer_the_questionnaire(customer)

    assert stranger.get(f"/s/{scenario_id}/").status_code == 200
    assert stranger.get(f"/q/{draft_id}/job/").status_code == 200
    assert sign_up(stranger, "stan.stranger").status_code == 302

    scenario = Scenario.objects.get(pk=scenario_id)
    assert scenario.owner is None
    assert QuestionnaireDraft.objects.get(pk=draft_id).owner is None
    assert customer.get(f"/s/{scenario_id}/").status_code == 200  # the creator's link works
    assert customer.get(f"/q/{draft_id}/job/").status_code == 200


def test_a_sales_engineer_opening_customer_links_while_logged_out_takes_nothing(
    sales_engineer: User,
) -> None:
    customer, laptop = Client(), Client()
    scenario_id, draft_id = answer_the_questionnaire(customer)

    laptop.get(f"/s/{scenario_id}/")
    laptop.get(f"/q/{draft_id}/")
    assert sign_in(laptop, "sam.sales").status_code == 302

    assert Scenario.objects.get(pk=scenario_id).owner is None
    assert QuestionnaireDraft.objects.get(pk=draft_id).owner is None
    assert customer.get(f"/s/{scenario_id}/").status_code == 200


def test_the_customer_who_signs_up_keeps_what_they_made() -> None:
    customer, stranger = Client(), Client()
    scenario_id, draft_id = answer_the_questionnaire(customer)
    other_id, _ = answer_the_questionnaire(stranger, name="Stranger's own")
    customer.get(f"/s/{other_id}/")  # opened, not made: stays the stranger's

    response = sign_up(customer, "cora.customer")

    cora = User.objects.get(username="cora.customer")
    assert response.status_code == 302
    assert Scenario.objects.get(pk=scenario_id).owner == cora
    assert QuestionnaireDraft.objects.get(pk=draft_id).owner == cora
    assert Scenario.objects.get(pk=other_id).owner is None
    assert stranger.get(f"/s/{other_id}/").status_code == 200


def test_an_old_draft_link_cannot_change_a_scenario_that_changed_owner() -> None:
    customer, stranger = Client(), Client()
    scenario_id, _ = answer_the_questionnaire(customer)
    # The stranger opens the customer's scenario for editing: an anonymous draft of it.
    edit = stranger.post(f"/s/{scenario_id}/edit")
    assert edit.status_code == 302
    old_draft = edit["Location"].rsplit("/", 2)[0]
    # The customer signs up: the scenario is theirs now.
    sign_up(customer, "cora.customer")
    runs_before = ScenarioRun.objects.filter(scenario_id=scenario_id).count()

    response = stranger.post(f"{old_draft}/review/", {"nav": "submit", "name": "Renamed!"})

    scenario = Scenario.objects.get(pk=scenario_id)
    assert scenario.name == "Customer cluster"
    assert ScenarioRun.objects.filter(scenario_id=scenario_id).count() == runs_before
    assert response.status_code == 302  # sent to the scenario, which it may no longer open
    assert stranger.get(response["Location"]).status_code == 404


def test_a_draft_the_owner_opens_on_their_own_scenario_still_changes_it() -> None:
    customer = Client()
    scenario_id, _ = answer_the_questionnaire(customer)
    sign_up(customer, "cora.customer")
    edit = customer.post(f"/s/{scenario_id}/edit")
    base = edit["Location"].rsplit("/", 2)[0]

    response = customer.post(f"{base}/review/", {"nav": "submit", "name": "Renamed"})

    assert response["Location"] == f"/s/{scenario_id}/"
    assert Scenario.objects.get(pk=scenario_id).name == "Renamed"


# --- GET never writes; anonymous creation is throttled -------------------------------------


def test_get_start_writes_no_draft_and_no_session() -> None:
    visitor = Client()
    for _ in range(5):
        page = visitor.get("/start/")
        assert page.status_code == 200
        assert 'id="start-button"' in page.content.decode()
    assert QuestionnaireDraft.objects.count() == 0
    assert "sessionid" not in visitor.cookies


def test_reading_a_step_or_a_scenario_changes_nothing() -> None:
    customer = Client()
    scenario_id, draft_id = answer_the_questionnaire(customer)
    draft = QuestionnaireDraft.objects.get(pk=draft_id)
    reader = Client()

    reader.get(f"/q/{draft_id}/model/")
    reader.get(f"/q/{draft_id}/")
    reader.get(f"/s/{scenario_id}/")

    after = QuestionnaireDraft.objects.get(pk=draft_id)
    assert (after.step, after.updated_at) == (draft.step, draft.updated_at)
    assert "sessionid" not in reader.cookies


@pytest.mark.parametrize(
    ("action", "limit_key"),
    [("start", "draft"), ("rerun", "run"), ("clone", "scenario")],
)
def test_anonymous_creation_and_runs_are_throttled_per_address(action: str, limit_key: str) -> None:
    scenario = make_scenario()
    ScenarioRun.objects.filter(scenario=scenario).update(status=RunStatus.SUCCEEDED)
    url = {
        "start": "/start/",
        "rerun": f"/s/{scenario.pk}/rerun",
        "clone": f"/s/{scenario.pk}/clone",
    }[action]
    limit = FORM_ATTEMPTS_PER_WINDOW[limit_key]
    visitor = Client(REMOTE_ADDR="203.0.113.7")
    statuses = [visitor.post(url).status_code for _ in range(limit)]
    assert 429 not in statuses

    refused = visitor.post(url)

    assert refused.status_code == 429
    assert refused["Retry-After"] == "300"
    assert Client(REMOTE_ADDR="203.0.113.8").post(url).status_code == 302  # someone else


# --- One unfinished run per scenario, web and API alike -------------------------------------


def test_the_web_does_not_start_a_second_run_while_one_is_unfinished() -> None:
    scenario = make_scenario(status=RunStatus.RUNNING, progress=40)
    visitor = Client()

    responses = [visitor.post(f"/s/{scenario.pk}/rerun", follow=True) for _ in range(3)]

    assert ScenarioRun.objects.filter(scenario=scenario).count() == 1
    assert "already being computed" in responses[-1].content.decode()


def test_the_web_and_the_api_share_the_one_run_rule() -> None:
    from advisor.scenarios.services import RunInProgress, run_start
    from api.errors import ApplicationError
    from api.services import scenario_rerun

    scenario = make_scenario(status=RunStatus.QUEUED, progress=0)
    with pytest.raises(RunInProgress):
        run_start(scenario=scenario)
    with pytest.raises(ApplicationError) as refused:
        scenario_rerun(scenario=scenario)
    assert refused.value.status_code == 409
    assert refused.value.code == "run_in_progress"


# --- Sign-in limits: failures only, by the real client address, admin included ---------------


def test_the_admin_login_is_limited_like_the_site_login(settings: Any) -> None:
    User.objects.create_superuser("ada.admin", password=PASSWORD)
    guesser = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT):
        guesser.post("/admin/login/", {"username": "ada.admin", "password": "guess"})

    right = guesser.post(
        "/admin/login/?next=/admin/", {"username": "ada.admin", "password": PASSWORD}
    )

    assert right.status_code == 429
    assert "_auth_user_id" not in guesser.session
    assert guesser.get("/admin/").status_code == 302  # still sent to the login page


def test_successful_sign_ins_are_never_counted(settings: Any) -> None:
    User.objects.create_user("cora.customer", password=PASSWORD)
    person = Client()
    # More than any limit here (3) or before (10 attempts of any kind per window).
    for _ in range(12):
        assert sign_in(person, "cora.customer").status_code == 302
        person.post("/accounts/logout/")
    assert sign_in(person, "cora.customer").status_code == 302


def test_behind_a_proxy_one_attacker_does_not_lock_out_everyone(settings: Any) -> None:
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    User.objects.create_user("cora.customer", password=PASSWORD)
    proxy = "10.0.0.1"  # every request arrives from the load balancer
    attacker = Client(REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR="198.51.100.66")
    for _ in range(settings.AXES_FAILURE_LIMIT):
        sign_in(attacker, "cora.customer", "guess")
    assert sign_in(attacker, "cora.customer").status_code == 429

    customer = Client(REMOTE_ADDR=proxy, HTTP_X_FORWARDED_FOR="203.0.113.20")
    assert sign_in(customer, "cora.customer").status_code == 302


def test_a_forged_forwarded_for_does_not_dodge_the_limit_without_a_proxy(
    settings: Any,
) -> None:
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 0}
    User.objects.create_user("cora.customer", password=PASSWORD)
    for i in range(settings.AXES_FAILURE_LIMIT):
        forged = Client(REMOTE_ADDR="198.51.100.66", HTTP_X_FORWARDED_FOR=f"192.0.2.{i}")
        sign_in(forged, "cora.customer", "guess")
    again = Client(REMOTE_ADDR="198.51.100.66", HTTP_X_FORWARDED_FOR="192.0.2.200")
    assert sign_in(again, "cora.customer").status_code == 429


# --- SQLite under parallel submissions ----------------------------------------------------


def test_parallel_submissions_on_sqlite_all_succeed(tmp_path: Path) -> None:
    env = {**os.environ, "SQLITE_PATH": str(tmp_path / "db.sqlite3"), "LOG_LEVEL": "ERROR"}
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    migrate = subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v", "0"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
    )
    assert migrate.returncode == 0, migrate.stderr
    result = subprocess.run(
        [sys.executable, "tests/security/sqlite_parallel.py", "8"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.stdout.strip().splitlines()[-1] == "ok 8", result.stdout + result.stderr


# --- BOM CSV --------------------------------------------------------------------------------


@pytest.mark.parametrize("prefix", ["=", "+", "-", "@", "\t", "\r"])
def test_the_bom_csv_neutralises_every_formula_prefix(prefix: str) -> None:
    result = training_result()
    result["bom"][0]["description"] = f'{prefix}HYPERLINK("http://evil.example")'
    scenario = make_scenario(result=result)

    response = Client().get(f"/s/{scenario.pk}/bom.csv")

    rows = list(csv.reader(io.StringIO(response.content.decode())))
    column = rows[0].index("Description")
    assert rows[1][column] == f'\'{prefix}HYPERLINK("http://evil.example")'
