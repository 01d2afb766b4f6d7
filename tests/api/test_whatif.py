"""What if: one changed design or load of a scenario, priced in the request."""

from __future__ import annotations

from typing import Any

import pytest

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.facts.formatting import first_token
from advisor.engine.tools.sweep import evaluate_points
from tests.api.conftest import TWO_SERVER_TRAINING, Caller, latest_run
from tests.support.scenarios import SERVING_70B_5_RPS

pytestmark = pytest.mark.django_db


def _whatif(caller: Caller, scenario_id: str, body: dict[str, Any]) -> Any:
    return caller.http.post(f"/api/v1/scenarios/{scenario_id}/whatif/", body, format="json")


def test_nothing_changed_is_the_recommended_design(client_a: Caller, submitted: Any) -> None:
    created = submitted()
    run = latest_run(created["id"])
    recommendation = run.result["recommendation"]

    response = _whatif(client_a, created["id"], {})

    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["run_id"] == str(run.pk)
    assert body["change"] == body["baseline"]
    assert body["change"]["servers"] == 2
    assert body["change"]["fabric"] == recommendation["fabric"]
    assert body["change"]["nics_per_node"] == recommendation["nics_per_node"]
    point = body["point"]
    assert point["feasible"] is True
    assert point["step_time_s"] == pytest.approx(run.result["metrics"]["step_time_s"], rel=1e-5)
    assert point["network_capex_usd"] > 0
    assert point["decision_cost_usd"] >= point["network_capex_usd"]
    assert body["priced_as"] == "answer"  # the answer's own figures, not a re-pricing
    assert point["network_capex_usd"] == pytest.approx(run.result["cost"]["network_capex_usd"])
    assert point["fabric_label"]
    assert "design" not in body["inputs"]  # the answer's own design: none fixed
    assert body["inputs"]["gpus"] == TWO_SERVER_TRAINING["gpus"]


def test_a_change_is_priced_as_a_sweep_prices_that_point(client_a: Caller, submitted: Any) -> None:
    created = submitted()
    change = {
        "servers": 6,
        "fabric": "roce",
        "nic_gbps": 200,
        "nics_per_node": 4,
        "oversubscription": 2,
        "global_batch_sequences": 512,
    }

    response = _whatif(client_a, created["id"], change)

    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["change"] == {
        **change,
        "precision": "bf16",
        "requests_per_s": None,
        "concurrent_requests": None,
        "deployment": None,
    }
    assert "deployment_label" not in body["point"]  # training
    assert "precision" not in body["inputs"]  # unchanged: as the inputs say it
    inputs = {**TWO_SERVER_TRAINING, "training": {**TWO_SERVER_TRAINING["training"]}}
    inputs["training"]["global_batch_sequences"] = 512
    axes = {k: [change[k]] for k in ("servers", "fabric", "nic_gbps", "nics_per_node")}
    axes["oversubscription"] = [2]
    rows, _ = evaluate_points(inputs, axes, 0, 1, catalog=default_catalog())
    expected = rows[0].to_dict()
    expected.pop("i")
    assert body["priced_as"] == "fixed"
    assert body["point"] == {**expected, "fabric_label": "RoCE v2"}
    assert body["inputs"]["gpus"] == 48
    assert body["inputs"]["training"]["global_batch_sequences"] == 512
    assert body["inputs"]["design"] == {
        "fabric": "roce",
        "nic_gbps": 200,
        "nics_per_node": 4,
        "oversubscription": 2,
    }


def test_more_bandwidth_is_never_slower(client_a: Caller, submitted: Any) -> None:
    created = submitted()
    slow = _whatif(client_a, created["id"], {"fabric": "roce", "nic_gbps": 100, "nics_per_node": 1})
    fast = _whatif(client_a, created["id"], {"fabric": "roce", "nic_gbps": 400, "nics_per_node": 8})
    slow, fast = slow.json(), fast.json()
    assert fast["point"]["step_time_s"] <= slow["point"]["step_time_s"]
    assert fast["point"]["network_capex_usd"] > slow["point"]["network_capex_usd"]


def test_a_design_the_catalog_cannot_build_is_an_answer(client_a: Caller, submitted: Any) -> None:
    created = submitted()
    response = _whatif(client_a, created["id"], {"nic_gbps": 3200})
    assert response.status_code == 200
    point = response.json()["point"]
    assert point["feasible"] is False
    assert "3200G" in point["reason"]
    assert point["step_time_s"] is None


def test_bad_values_are_named_by_field(client_a: Caller, submitted: Any) -> None:
    created = submitted()
    response = _whatif(
        client_a,
        created["id"],
        {
            "servers": 0,
            "precision": "fp4",
            "fabric": "token-ring",
            "nic_gbps": 1e9,
            "requests_per_s": 5,
            "concurrent_requests": 64,
            "deployment": "split",
            "x": 1,
        },
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "validation_error"
    assert set(error["fields"]) == {
        "servers",
        "precision",
        "fabric",
        "nic_gbps",
        "requests_per_s",
        "concurrent_requests",
        "deployment",
        "x",
    }
    assert "serving only" in error["fields"]["requests_per_s"][0]
    assert "serving only" in error["fields"]["concurrent_requests"][0]
    assert "serving only" in error["fields"]["deployment"][0]
    assert "3,200" in error["fields"]["nic_gbps"][0]
    # fp4 serves only: training on H100 takes bf16, fp8 and fp16
    assert error["fields"]["precision"] == ["must be one of bf16, fp8, fp16 for this model and GPU"]


def test_a_changed_number_format_is_the_engines_answer_at_that_format(
    client_a: Caller, submitted: Any
) -> None:
    """Llama 3 70B served in BF16 on two H100 servers, asked at FP8 (the format the release
    remedy of a serving shortfall names): the point is the engine's answer for the scenario at
    fp8, and the inputs to save name it."""
    from advisor.engine import evaluate

    serving = {**SERVING_70B_5_RPS, "inference": {"requests_per_s": 20}}
    created = submitted(inputs=serving)
    body = _whatif(client_a, created["id"], {"precision": "fp8"}).json()
    assert body["baseline"]["precision"] == "bf16" and body["change"]["precision"] == "fp8"
    assert body["priced_as"] == "answer"
    assert body["inputs"] == {**serving, "precision": "fp8"}
    at_fp8 = evaluate({**serving, "precision": "fp8"})
    assert body["point"]["ms_per_token"] == pytest.approx(at_fp8["metrics"]["ms_per_token"])
    assert body["point"]["network_capex_usd"] == pytest.approx(at_fp8["cost"]["network_capex_usd"])
    kept = _whatif(client_a, created["id"], {}).json()
    assert body["point"]["ms_per_token"] < kept["point"]["ms_per_token"]


def test_a_size_the_model_does_not_fit_is_an_answer(client_a: Caller, submitted: Any) -> None:
    """llama3.1-405b does not fit on one H100 server: the point says so, as a sweep's would."""
    created = submitted(inputs={**TWO_SERVER_TRAINING, "model": "llama3.1-405b", "gpus": 256})
    response = _whatif(client_a, created["id"], {"servers": 1})
    assert response.status_code == 200
    point = response.json()["point"]
    assert point["feasible"] is False
    assert "does not fit" in point["reason"]


def test_too_slow_is_a_503(client_a: Caller, submitted: Any, settings: Any) -> None:
    created = submitted()
    settings.ENGINE_IN_REQUEST_TIME_LIMIT_S = 1e-6
    response = _whatif(client_a, created["id"], {"servers": 7})
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "evaluation_timeout"


def test_only_after_a_run_succeeded_and_only_for_its_owner(
    client_a: Caller, client_b: Caller, submitted: Any
) -> None:
    pending = submitted(finish=False)
    assert _whatif(client_a, pending["id"], {}).status_code == 409
    created = submitted()
    assert _whatif(client_b, created["id"], {}).status_code == 404


def test_a_what_if_priced_again_is_the_same_answer_without_the_engine(
    client_a: Caller, submitted: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What-ifs are kept per process by value: the page's opening price and a control set
    back cost no engine time, and answer exactly what pricing again would."""
    from advisor.scenarios import whatif

    created = submitted()
    calls: list[int] = []
    real = whatif.whatif_point

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(whatif, "whatif_point", counting)
    change = {"fabric": "roce", "nics_per_node": 2}
    first = _whatif(client_a, created["id"], change).json()
    again = _whatif(client_a, created["id"], change).json()
    assert len(calls) == 1
    assert {k: v for k, v in again.items() if k != "engine_ms"} == {
        k: v for k, v in first.items() if k != "engine_ms"
    }
    other = _whatif(client_a, created["id"], {**change, "nics_per_node": 4}).json()
    assert len(calls) == 2 and other["point"] != first["point"]
    whatif.priced_clear()
    assert _whatif(client_a, created["id"], change).json()["point"] == first["point"]
    assert len(calls) == 3
    run = latest_run(created["id"])
    run.save()  # a run saved again (recomputed in place) is priced afresh
    assert _whatif(client_a, created["id"], change).json()["point"] == first["point"]
    assert len(calls) == 4


def test_a_changed_deployment_is_the_engines_answer_for_it(
    client_a: Caller, submitted: Any
) -> None:
    """Llama 3 70B on two H100 servers at 5 requests/s: the engine disaggregates prompt and
    answer GPUs inside each server; a serving engineer asks what independent replicas would
    do.  The point is the engine's answer with ``deployment: replicas`` (its shape said in
    the answer's words), the inputs to save say so; split over the two servers it is TP8 x PP2,
    and on one server, where there is nothing to split over, a point with the reason."""
    from advisor.engine import evaluate

    serving = SERVING_70B_5_RPS
    created = submitted(inputs=serving)
    kept = _whatif(client_a, created["id"], {}).json()
    assert kept["baseline"]["deployment"] == "auto"
    assert kept["point"]["deployment_label"].startswith("disaggregated ")
    body = _whatif(client_a, created["id"], {"deployment": "replicas"}).json()
    assert body["priced_as"] == "answer"
    replicas = {**serving, "inference": {"requests_per_s": 5, "deployment": "replicas"}}
    assert body["inputs"] == replicas
    answer = evaluate(replicas)
    assert body["point"]["deployment_label"] == "4 x TP4 replicas"
    assert body["point"]["ms_per_token"] == pytest.approx(answer["metrics"]["ms_per_token"])
    split = _whatif(client_a, created["id"], {"deployment": "split"}).json()
    assert split["point"]["deployment_label"] == "1 x TP8 x PP2 split replica"
    # on one server there is nothing to split over: a point with the engine's reason
    one = _whatif(client_a, created["id"], {"deployment": "split", "servers": 1}).json()
    assert one["point"]["feasible"] is False
    assert "one scale-up domain" in one["point"]["reason"]
    unknown = _whatif(client_a, created["id"], {"deployment": None})
    assert unknown.status_code == 400
    assert "must be one of auto, replicas" in unknown.json()["error"]["fields"]["deployment"][0]


def test_a_changed_user_count_is_the_engines_answer_for_it(
    client_a: Caller, submitted: Any
) -> None:
    """The questionnaire's default serving load is a closed loop of 64 users; a serving
    engineer asks what 2,000 would do.  The point is the engine's answer for 2,000 users (more
    than the servers' KV memory holds: answered as queueing, the first token later), and the
    inputs to save name them; an unchanged count stays as the inputs say it (none given)."""
    from advisor.engine import evaluate

    closed = {**SERVING_70B_5_RPS, "inference": {}}
    created = submitted(inputs=closed)
    kept = _whatif(client_a, created["id"], {}).json()
    assert kept["baseline"]["concurrent_requests"] == 64
    assert kept["inputs"]["inference"] == {"requests_per_s": None}
    body = _whatif(client_a, created["id"], {"concurrent_requests": 2000}).json()
    assert body["priced_as"] == "answer"
    assert body["inputs"]["inference"]["concurrent_requests"] == 2000
    answer = evaluate(body["inputs"])
    assert body["point"]["ttft_ms"] == pytest.approx(answer["metrics"]["ttft_ms"], rel=1e-5)
    assert body["point"]["ttft_ms"] > 10 * kept["point"]["ttft_ms"]
    # the first token in the answer's own words, for the page to show as it is
    assert body["point"]["ttft_label"] == first_token(body["point"]["ttft_ms"])
    assert body["point"]["ttft_label"].endswith((" s", " min"))
    bad = _whatif(client_a, created["id"], {"concurrent_requests": 0})
    assert bad.status_code == 400
    assert "concurrent_requests" in bad.json()["error"]["fields"]
