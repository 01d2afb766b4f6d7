"""The front page's example is what the wizard gives for the inputs the page shows."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.test import Client

from advisor.engine.result.records import EngineResult
from advisor.reports import presenters
from advisor.scenarios.models import Scenario

pytestmark = pytest.mark.django_db(transaction=True)


def test_entering_the_example_in_the_wizard_gives_the_same_answer() -> None:
    from frontend.example import EXAMPLE_CHANGES, home_example

    cache.clear()
    example = home_example()
    assert example is not None
    client = Client()
    html = client.get("/").content.decode()
    assert example["title"] in html
    # Every input is on the page, defaults included (pricing, sequence, memory sharing).
    for label, value in example["inputs"]:
        assert label in html and value.replace("'", "&#x27;") in html, label
    labels = [label for label, _ in example["inputs"]]
    for needed in ("Pricing", "Sequence length", "Memory sharing", "Tokens", "Team"):
        assert needed in labels
    # A person enters the example's changes in the wizard and presses Next to the end.
    start = client.get("/start/")
    if start.status_code != 302:  # a start page with a button (GET never writes)
        start = client.post("/start/")
    base = start["Location"].rsplit("/", 2)[0]
    by_step = {
        "job": ("workload", "scale"),
        "model": ("model_choice",),
        "hardware": ("gpu", "gpus"),
        "work": (),
        "priorities": ("team_skills",),
    }
    for step, names in by_step.items():
        data = {"nav": "next", **{n: EXAMPLE_CHANGES[n] for n in names}}
        assert client.post(f"{base}/{step}/", data).status_code == 302, step
    done = client.post(f"{base}/review/", {"nav": "submit"})
    assert done.status_code == 302
    result = EngineResult.from_dict(Scenario.objects.get().runs.get().result)
    head = presenters.headline(result)
    assert example["title"].split(" · ")[0] in head["title"]
    assert example["costs"] == presenters.cost_figures(result.cost)["rows"]
    assert example["inputs"] == presenters.input_summary(result, _gpu_names())


def _gpu_names() -> dict[str, str]:
    from advisor.scenarios.reports import gpu_names

    return gpu_names()


def test_the_example_is_cached_per_catalog_and_engine_version(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from frontend import example as ex

    cache.clear()
    calls = []
    real = ex._compute

    def counting() -> object:
        calls.append(1)
        return real()

    monkeypatch.setattr(ex, "_compute", counting)
    first = ex.home_example()
    assert ex.home_example() == first and len(calls) == 1
    monkeypatch.setattr(ex, "ENGINE_VERSION", "9.9.9-test")
    ex.home_example()
    assert len(calls) == 2
