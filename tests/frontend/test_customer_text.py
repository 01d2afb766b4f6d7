"""Every page, PDF and CSV a customer gets, for a grid of scenarios, in plain words: no
catalog id, no internal key, no number in e-notation, no over-capacity stand-in printed as a
time."""

from __future__ import annotations

import csv
import html
import io
import json
import re
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from advisor.engine.tools.audit_text import INTERNAL_ID
from advisor.scenarios.models import RunStatus
from advisor.scenarios.services import scenario_submit
from tests.frontend.pdfread import pdf_text
from tests.frontend.test_serving_chart import DISAGGREGATED

pytestmark = pytest.mark.django_db(transaction=True)

GRID: dict[str, dict[str, Any]] = {
    "one fine-tuning server": {
        "workload": "fine_tuning",
        "model": "llama3-8b",
        "gpu": "h100-sxm",
        "gpus": 8,
    },
    "70B training, 64 GPUs": {
        "workload": "training",
        "model": "llama3-70b",
        "gpu": "h100-sxm",
        "gpus": 64,
    },
    "mixture of experts, 256 GPUs": {
        "workload": "training",
        "model": "mixtral-8x7b",
        "gpu": "h100-sxm",
        "gpus": 256,
        "constraints": {"team_skills": "ethernet", "prefer": "cost"},
    },
    "serving replicas": {
        "workload": "inference",
        "model": "llama3-8b",
        "gpu": "l40s",
        "gpus": 32,
    },
    "split serving": {
        "workload": "inference",
        "model": "llama3.1-405b",
        "gpu": "h100-sxm",
        "gpus": 32,
        "precision": "bf16",  # split over servers (Meta's FP8 release fits one)
        "inference": {"independent_replicas": False, "requests_per_s": 2},
    },
    # the latency chart's disaggregated answer at 100 times its load: over capacity
    "disaggregated serving over capacity": {
        **DISAGGREGATED,
        "inference": {**DISAGGREGATED["inference"], "requests_per_s": 50},
    },
}

E_NOTATION = re.compile(r"\b\d+(?:\.\d+)?[eE][+-]?\d+\b")
# the load model's time to first token over capacity (3,600 s), a stand-in said in words
OVER_CAPACITY_FIGURE = re.compile(r"\b3,?600,?000\b")
# snake_case words are the engine's and the inputs' keys ("allow_oversubscription",
# "job_share"), never words a customer reads.
INTERNAL_KEY = re.compile(r"(?<![\w/.$%-])[a-z]+(?:_[a-z0-9]+)+(?![\w/.-])")
# Names a network engineer types: nccl-tests binaries (all_reduce_perf) and Mellanox tools.
COMMAND_NAMES = re.compile(r"^(?:\w+_perf|show_gids|ib_write_bw|ib_write_lat|hw_counters)$")


def visible_text(page: str) -> str:
    page = re.sub(r"(?is)<(script|style|svg)\b.*?</\1>", " ", page)
    page = re.sub(r"(?s)<[^>]+>", " ", page)
    return " ".join(html.unescape(page).split())


CHART_WORDS = frozenset({"text", "name", "ticktext", "hovertext", "hovertemplate"})
"""The keys of a Plotly figure whose strings a reader sees (labels, legends, hovers)."""


def chart_text(page: str) -> str:
    """The words of a page's charts: its figures ride in ``application/json`` scripts, so the
    page's visible text never holds them (a switch's catalog id labelled the topology)."""
    words: list[str] = []

    def walk(node: Any, key: str = "") -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, k)
        elif isinstance(node, list):
            for v in node:
                walk(v, key)
        elif isinstance(node, str) and key in CHART_WORDS:
            words.append(node)

    for body in re.findall(r'(?s)<script[^>]*type="application/json"[^>]*>(.*?)</script>', page):
        walk(json.loads(body))
    return " | ".join(words)


def problems(where: str, text: str) -> list[str]:
    text = re.sub(r"https?://\S+", "<link>", text)  # a scenario's link holds its UUID
    found = []
    for pattern, what in (
        (INTERNAL_ID, "catalog id"),
        (E_NOTATION, "e-notation"),
        (INTERNAL_KEY, "key"),
        (OVER_CAPACITY_FIGURE, "over-capacity stand-in"),
    ):
        for match in pattern.finditer(text):
            if pattern is INTERNAL_KEY and COMMAND_NAMES.match(match.group(0)):
                continue
            start = max(0, match.start() - 60)
            found.append(
                f"{where}: {what} {match.group(0)!r} in …{text[start : match.end() + 30]}…"
            )
    return found


@pytest.fixture
def engineer() -> tuple[User, Client]:
    user = User.objects.create_user("sam.sales", password="correct-horse-battery")
    user.groups.add(Group.objects.get_or_create(name="sales")[0])
    client = Client()
    client.force_login(user)
    return user, client


def test_no_face_shows_an_id_a_key_or_e_notation(engineer: tuple[User, Client]) -> None:
    user, client = engineer
    ids = []
    for name, inputs in GRID.items():
        run = scenario_submit(name=name, inputs=inputs, owner=user, customer="Acme AI")
        run.refresh_from_db()
        assert run.status == RunStatus.SUCCEEDED, (name, run.error)
        ids.append(str(run.scenario_id))
    found: list[str] = []
    for scenario_id, name in zip(ids, GRID, strict=True):
        page = client.get(f"/s/{scenario_id}/")
        assert page.status_code == 200
        found += problems(f"{name} page", visible_text(page.content.decode()))
        found += problems(f"{name} charts", chart_text(page.content.decode()))
        found += problems(
            f"{name} PDF", pdf_text(client.get(f"/s/{scenario_id}/report.pdf").content)
        )
        rows = csv.reader(io.StringIO(client.get(f"/s/{scenario_id}/bom.csv").content.decode()))
        found += problems(f"{name} CSV", " | ".join(" ; ".join(r) for r in rows))
        plan = client.get(f"/s/{scenario_id}/acceptance.pdf")
        if plan.status_code == 200:
            found += problems(f"{name} acceptance PDF", pdf_text(plan.content))
    query = "&".join(f"s={i}" for i in ids[:4])
    found += problems("compare", visible_text(client.get(f"/compare/?{query}").content.decode()))
    found += problems(
        "compare PDF", pdf_text(client.get(f"/compare/comparison.pdf?{query}").content)
    )
    compare_csv = client.get(f"/compare/comparison.csv?{query}").content.decode()
    found += problems("compare CSV", compare_csv)
    assert not found, "\n".join(found[:60]) + f"\n({len(found)} in all)"
