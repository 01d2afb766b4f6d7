"""What if: one changed design or load of a scenario, priced in the request.

The result page's live what-if and ``POST /api/v1/scenarios/{id}/whatif/`` share this module:
change the servers, the number format, the fabric, the NICs (count and speed), the
oversubscription, the training batch or the serving load (request rate or users) and
deployment, and get the step time (or ms per token, time to first token, tokens/s and the
deployment), the idle GPUs, the network capex and the network's life cost. Which figures a
what-if shows is the engine's one rule (:mod:`advisor.engine.tools.whatif`,
docs/MODEL.md "What-if"): with the answer's own design (no design field changed) they are the
engine's answer for the changed size and load (nothing changed: the answer itself), with a
design the user fixed they are that design priced as a sweep prices a design point. A change
the catalog cannot build is an answer too (``feasible`` false and the reason), not an error;
a value outside the engine's input limits is a field-named error.

The engine call runs under the same wall-time limit as ``POST /api/v1/evaluate/``
(``ENGINE_IN_REQUEST_TIME_LIMIT_S``).
"""

from __future__ import annotations

import copy
import json
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db.models.signals import post_delete, post_save

from advisor.engine import ENGINE_VERSION
from advisor.engine.calibration.fabric_fit import FabricFit
from advisor.engine.errors import ScenarioError
from advisor.engine.facts.catalog import Catalog
from advisor.engine.facts.formatting import first_token
from advisor.engine.facts.limits import GPUS_MAX, LIMITS, is_number
from advisor.engine.facts.vocabulary import FABRIC_LABELS
from advisor.engine.input.scenario import (
    DEPLOYMENTS,
    PRECISIONS,
    InferenceSpec,
    model_parallel_size,
    parse_scenario,
)
from advisor.engine.result.records import EngineResult
from advisor.engine.tools.whatif import (
    NO_FABRIC,
    DesignChoice,
    answer_deployment,
    answer_design,
    deployment_of,
    design_label,
    whatif_point,
)
from advisor.measurements.selectors import run_calibration_fit
from advisor.scenarios.engine_calls import InvalidScenario
from advisor.scenarios.models import ScenarioRun
from advisor.scenarios.run_lru import RunLRU
from advisor.scenarios.timelimit import wall_time_limit

FABRICS: tuple[str, ...] = tuple(FABRIC_LABELS)
"""The fabrics a what-if may fix (scenario v1's ``design.fabric``); an answer with no compute
fabric also offers its own, ``none`` (:data:`advisor.engine.tools.whatif.NO_FABRIC`)."""
NIC_GBPS_CHOICES: tuple[int, ...] = (25, 50, 100, 200, 400, 800)
NICS_PER_NODE_CHOICES: tuple[int, ...] = (1, 2, 4, 8)
OVERSUBSCRIPTION_CHOICES: tuple[float, ...] = (1.0, 1.5, 2.0, 3.0, 4.0)
"""What the page offers; the endpoint takes any value inside the engine's limits."""
ENGINE_CHOOSES = "auto"
DEPLOYMENT_CHOICES: tuple[str, ...] = (ENGINE_CHOOSES, *DEPLOYMENTS)
"""A serving what-if's deployments: the engine's choice (no ``inference.deployment``), or one
of scenario v1's."""

FIELDS: tuple[str, ...] = (
    "servers",
    "precision",
    "fabric",
    "nic_gbps",
    "nics_per_node",
    "oversubscription",
    "global_batch_sequences",
    "requests_per_s",
    "concurrent_requests",
    "deployment",
)


@dataclass(frozen=True)
class WhatIf:
    """One what-if: the design and load it prices (every field set)."""

    servers: int
    precision: str
    """The number format (scenario v1's ``precision``): the model's weights and math."""
    fabric: str
    nic_gbps: float
    nics_per_node: int
    oversubscription: float
    global_batch_sequences: int | None = None
    """Training only: the global batch in sequences."""
    requests_per_s: float | None = None
    """Serving only: Poisson arrivals per second (None: the closed loop of the scenario)."""
    concurrent_requests: int | None = None
    """Serving only: the closed loop's users, the load when ``requests_per_s`` is None."""
    deployment: str | None = None
    """Serving only: one of DEPLOYMENT_CHOICES (None for training)."""

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in FIELDS}

    @property
    def design(self) -> DesignChoice:
        return DesignChoice(
            fabric=self.fabric,
            nic_gbps=self.nic_gbps,
            nics_per_node=self.nics_per_node,
            oversubscription=self.oversubscription,
        )


def baseline(inputs: dict[str, Any], result: EngineResult, catalog: Catalog) -> WhatIf:
    """The what-if of nothing changed: the scenario's size and load on the recommended design
    (fabric ``none`` when the answer needs no compute fabric)."""
    scenario = parse_scenario(inputs, catalog)
    design = answer_design(result)
    training = scenario.training
    serving = scenario.inference
    return WhatIf(
        servers=max(1, scenario.gpus // scenario.gpus_per_node),
        precision=scenario.precision,
        fabric=design.fabric,
        nic_gbps=design.nic_gbps,
        nics_per_node=design.nics_per_node,
        oversubscription=design.oversubscription,
        global_batch_sequences=training.global_batch_sequences if training else None,
        requests_per_s=serving.requests_per_s if serving else None,
        concurrent_requests=serving.concurrent_requests if serving else None,
        deployment=_deployment_asked(serving) if serving else None,
    )


def _deployment_asked(serving: InferenceSpec) -> str:
    """The deployment a serving scenario asks for, as the what-if's control shows it:
    ``inference.deployment``, ``replicas`` for independent replicas, else the engine's choice."""
    if serving.deployment is not None:
        return serving.deployment
    return "replicas" if serving.independent_replicas else ENGINE_CHOOSES


def precisions(inputs: dict[str, Any], catalog: Catalog) -> tuple[str, ...]:
    """The number formats a what-if of these inputs may choose: each the engine takes for this
    model, GPU and workload (the scenario parser's own rules: the GPU runs it, 4-bit formats
    serve only, MXFP4 is an MoE model's experts), in ``PRECISIONS`` order."""
    out = []
    for precision in PRECISIONS:
        try:
            parse_scenario({**inputs, "precision": precision}, catalog)
        except ScenarioError as exc:
            if "precision" in exc.field_errors:
                continue
        out.append(precision)
    return tuple(out)


def fabrics(base: WhatIf) -> tuple[str, ...]:
    """The fabrics a what-if of this baseline may choose: the answer's own ``none`` first when
    it needs no compute fabric, then every fabric a design may fix."""
    return (NO_FABRIC, *FABRICS) if base.fabric == NO_FABRIC else FABRICS


def _number(
    raw: dict[str, Any], name: str, limit_key: str, errors: dict[str, list[str]]
) -> float | None:
    value = raw.get(name)
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            errors[name] = ["must be a number"]
            return None
    if not is_number(value):
        errors[name] = ["must be a number"]
        return None
    limit = LIMITS[limit_key]
    number = float(value)
    if limit.integer and not number.is_integer():
        errors[name] = ["must be a whole number"]
        return None
    if number <= 0 or limit.refuses(number):
        errors[name] = [f"must be {limit.describe()}"]
        return None
    return number


def parse_change(
    raw: Any, base: WhatIf, *, gpus_per_node: int, precisions: tuple[str, ...]
) -> WhatIf:
    """A what-if from request data: fields left out keep the baseline's value; ``precisions``:
    the number formats the scenario may choose (:func:`precisions`).

    Raises :class:`InvalidScenario` naming each bad field (``servers``, ``nic_gbps``...).
    """
    if not isinstance(raw, dict):
        raise InvalidScenario({"non_field_errors": ["must be a JSON object"]})
    errors: dict[str, list[str]] = {}
    unknown = sorted(set(raw) - set(FIELDS))
    for name in unknown:
        errors[name] = [f"unknown field; known: {', '.join(FIELDS)}"]
    precision = raw.get("precision", base.precision)
    if precision not in precisions:
        errors["precision"] = [f"must be one of {', '.join(precisions)} for this model and GPU"]
    fabric = raw.get("fabric", base.fabric)
    if fabric not in fabrics(base):
        errors["fabric"] = [f"must be one of {', '.join(fabrics(base))}"]
    servers_max = GPUS_MAX // max(1, gpus_per_node)
    servers = raw.get("servers")
    if isinstance(servers, str) and servers.strip().isdigit():
        servers = int(servers)
    if servers is not None and (
        isinstance(servers, bool) or not isinstance(servers, int) or not 1 <= servers <= servers_max
    ):
        errors["servers"] = [
            f"must be a whole number >= 1 and <= {servers_max:,} "
            f"({GPUS_MAX:,} GPUs of {gpus_per_node} per server)"
        ]
    nic_gbps = _number(raw, "nic_gbps", "design.nic_gbps", errors)
    nics = _number(raw, "nics_per_node", "design.nics_per_node", errors)
    over = raw.get("oversubscription")
    oversubscription = _number(raw, "oversubscription", "design.oversubscription", errors)
    if over is not None and oversubscription is None and "oversubscription" not in errors:
        errors["oversubscription"] = ["must be a number"]
    batch = _number(raw, "global_batch_sequences", "training.global_batch_sequences", errors)
    if batch is not None and base.global_batch_sequences is None:
        errors["global_batch_sequences"] = ["applies to training and fine-tuning only"]
    rate = _number(raw, "requests_per_s", "inference.requests_per_s", errors)
    users = _number(raw, "concurrent_requests", "inference.concurrent_requests", errors)
    for name, value in (("requests_per_s", rate), ("concurrent_requests", users)):
        if value is not None and base.global_batch_sequences is not None:
            errors[name] = ["applies to serving only"]
    deployment = raw.get("deployment", base.deployment)
    if "deployment" in raw and base.deployment is None:
        errors["deployment"] = ["applies to serving only"]
    elif base.deployment is not None and deployment not in DEPLOYMENT_CHOICES:
        errors["deployment"] = [f"must be one of {', '.join(DEPLOYMENT_CHOICES)}"]
    if fabric == NO_FABRIC:  # the answer's own storage / in-band network: nothing to fix
        for name, value, kept in (
            ("nic_gbps", nic_gbps, base.nic_gbps),
            ("nics_per_node", nics, base.nics_per_node),
            ("oversubscription", oversubscription, base.oversubscription),
        ):
            if value is not None and value != kept and name not in errors:
                errors[name] = ["applies to a compute fabric: choose one first"]
    if errors:
        raise InvalidScenario(errors)
    return WhatIf(
        servers=int(servers) if servers is not None else base.servers,
        precision=str(precision),
        fabric=str(fabric),
        nic_gbps=nic_gbps if nic_gbps is not None else base.nic_gbps,
        nics_per_node=int(nics) if nics is not None else base.nics_per_node,
        oversubscription=oversubscription
        if oversubscription is not None
        else base.oversubscription,
        global_batch_sequences=int(batch) if batch is not None else base.global_batch_sequences,
        requests_per_s=rate if rate is not None or "requests_per_s" in raw else base.requests_per_s,
        concurrent_requests=int(users) if users is not None else base.concurrent_requests,
        deployment=deployment,
    )


def changed_inputs(
    inputs: dict[str, Any],
    change: WhatIf,
    base: WhatIf,
    *,
    gpus_per_node: int,
    fixed: bool = True,
) -> dict[str, Any]:
    """Scenario v1 inputs with the what-if applied: its size, its number format and its users
    where changed from ``base`` (unchanged, they stay as the inputs say them, the engine's
    default at every size), its rate, its serving deployment where changed (the engine's shape
    for it: the scenario's parallelism, pools and replica independence give way) and
    (``fixed``: a design field changed) its fixed design; the answer's own design leaves
    ``design`` as it was."""
    out = copy.deepcopy(inputs)
    out["gpus"] = change.servers * gpus_per_node
    out["gpus_per_node"] = gpus_per_node
    if change.precision != base.precision:
        out["precision"] = change.precision
    if change.global_batch_sequences is not None:
        training = dict(out.get("training") or {})
        training["global_batch_sequences"] = change.global_batch_sequences
        training.pop("global_batch_tokens", None)
        out["training"] = training
    if out.get("workload") == "inference":
        serving = dict(out.get("inference") or {})
        serving["requests_per_s"] = change.requests_per_s
        if change.concurrent_requests != base.concurrent_requests:
            serving["concurrent_requests"] = change.concurrent_requests
        if change.deployment != base.deployment:
            # a changed deployment takes the engine's shape for it: the asked one's replica
            # parallelism, pools and replica independence no longer apply
            for key in ("deployment", "pools", "independent_replicas"):
                serving.pop(key, None)
            if change.deployment != ENGINE_CHOOSES:
                serving["deployment"] = change.deployment
            out.pop("parallelism", None)
        out["inference"] = serving
    if fixed:
        design = dict(out.get("design") or {})
        design.update(
            fabric=change.fabric,
            nic_gbps=change.nic_gbps,
            nics_per_node=change.nics_per_node,
            oversubscription=change.oversubscription,
        )
        out["design"] = design
    parallelism = out.get("parallelism")
    if isinstance(parallelism, dict) and parallelism.get("dp") is not None:
        # the engine's rule (plans.resized) on the inputs to save; a size the plan does not
        # divide keeps the asked dp, which the engine refuses naming the field
        model_parallel = model_parallel_size(
            *(int(parallelism.get(key) or 1) for key in ("tp", "cp", "pp"))
        )
        if out["gpus"] % model_parallel == 0:
            out["parallelism"] = {**parallelism, "dp": out["gpus"] // model_parallel}
    return out


def _field_of(path: str) -> str:
    """An engine field path as the what-if field the user changed."""
    if path in ("gpus", "gpus_per_node"):
        return "servers"
    if path.startswith("training.global_batch"):
        return "global_batch_sequences"
    if path in ("inference.requests_per_s", "inference.concurrent_requests"):
        return path.split(".", 1)[1]
    if path in ("inference.deployment", "inference.independent_replicas") or path.startswith(
        "inference.pools"
    ):
        return "deployment"
    if path.startswith("design."):
        return path.split(".", 1)[1]
    return path


def evaluate_whatif(
    *,
    inputs: dict[str, Any],
    change: WhatIf,
    base: WhatIf,
    result: EngineResult,
    gpus_per_node: int,
    catalog: Catalog,
    calibration: FabricFit | None = None,
) -> dict[str, Any]:
    """Price one what-if by the engine's rule (:func:`advisor.engine.tools.whatif.whatif_point`):
    the point (a sweep row, plus the fabric it names), ``priced_as`` (``answer``: the engine's
    answer for the changed size and load; ``fixed``: the design the user fixed), the changed
    inputs (to save as a new scenario) and the engine's time. Raises InvalidScenario
    (field-named) and :class:`advisor.scenarios.timelimit.EvaluationTimeout`."""
    fixed = change.design != base.design
    new_inputs = changed_inputs(inputs, change, base, gpus_per_node=gpus_per_node, fixed=fixed)
    started = time.perf_counter()
    try:
        with wall_time_limit(settings.ENGINE_IN_REQUEST_TIME_LIMIT_S) as deadline:
            row, source = whatif_point(
                new_inputs,
                change.design if fixed else None,
                catalog=catalog,
                answer=result if change == base else None,
                tick=deadline.check,
                calibration=calibration,
            )
    except ScenarioError as exc:
        errors: dict[str, list[str]] = {}
        for path, messages in exc.field_errors.items():
            errors.setdefault(_field_of(path), []).extend(messages)
        raise InvalidScenario(errors) from exc
    point = row.to_dict()
    point.pop("i", None)
    point["fabric_label"] = design_label(row.fabric)
    if row.inference:  # the deployment it runs and its first token, in the answer's words
        point["deployment_label"] = (
            answer_deployment(result) if change == base else deployment_of(new_inputs, catalog)
        )
        point["ttft_label"] = first_token(point.get("ttft_ms"))
    return {
        "change": change.to_dict(),
        "priced_as": source,
        "point": point,
        "inputs": new_inputs,
        "engine_ms": round((time.perf_counter() - started) * 1e3, 1),
    }


def calibration_of(*, run: ScenarioRun, result: EngineResult, catalog: Catalog) -> FabricFit | None:
    """The customer's fit a calibrated run was evaluated with, for its what-ifs; None (and no
    query) for a default run."""
    if result.calibration is None:
        return None
    return run_calibration_fit(run=run, catalog=catalog)


# A bounded, thread-safe LRU of priced what-ifs, keyed by value: the run priced against,
# the scenario's inputs, the change, the catalog and the engine's version. The engine is
# deterministic, so an entry is the answer computing it again would give. It pays for the
# page's opening price (nothing changed: asked on every visit of a result page) and for a
# control set back to a value already priced; a size never priced still costs its engine
# time.
PRICED_MAX = 512
"""What-ifs kept per process: each a few kilobytes (a sweep row and the changed inputs)."""
_priced: RunLRU[dict[str, Any]] = RunLRU(PRICED_MAX)


def priced_clear() -> None:
    """Forget every kept what-if (tests)."""
    _priced.clear()


def _forget_run(sender: Any, instance: Any, **_kwargs: Any) -> None:
    # A run saved again (recomputed in place by an admin, or a test) is priced afresh.
    _priced.drop_run(instance.pk)


post_save.connect(_forget_run, sender=ScenarioRun, dispatch_uid="whatif-priced-save")
post_delete.connect(_forget_run, sender=ScenarioRun, dispatch_uid="whatif-priced-delete")


def answer(
    *,
    inputs: dict[str, Any],
    result: EngineResult,
    raw: Any,
    catalog: Catalog,
    calibration: FabricFit | None = None,
    run_id: Any = None,
) -> dict[str, Any]:
    """The what-if of request data ``raw`` against a scenario's inputs and its result (the
    API's and the page's one entry): the change, the baseline (nothing changed) and the priced
    point; ``calibration``: the fit of a calibrated answer (:func:`calibration_of`). Raises
    InvalidScenario naming each bad field, EvaluationTimeout past the limit.

    ``run_id``: the succeeded run whose ``result`` this is (a finished result never changes,
    nor the fit it was evaluated with). Given, a what-if this process priced already for that
    run, inputs, catalog and engine is answered from ``_priced``; its ``engine_ms`` is
    then this request's (next to nothing), not the first one's."""
    try:
        scenario = parse_scenario(inputs, catalog)
    except ScenarioError as exc:
        raise InvalidScenario(dict(exc.field_errors)) from exc
    base = baseline(inputs, result, catalog)
    change = parse_change(
        raw, base, gpus_per_node=scenario.gpus_per_node, precisions=precisions(inputs, catalog)
    )
    started = time.perf_counter()
    key = (
        run_id,  # the result priced against: its recommendation is the baseline
        json.dumps(inputs, sort_keys=True, default=str),
        change,
        scenario.gpus_per_node,
        catalog,  # by value (a frozen dataclass): an edited catalog is another key
        ENGINE_VERSION,
    )
    kept = _priced.get(key) if run_id is not None else None
    if kept is not None:
        engine_ms = round((time.perf_counter() - started) * 1e3, 1)
        return {**copy.deepcopy(kept), "engine_ms": engine_ms, "baseline": base.to_dict()}
    priced = evaluate_whatif(
        inputs=inputs,
        change=change,
        base=base,
        result=result,
        gpus_per_node=scenario.gpus_per_node,
        catalog=catalog,
        calibration=calibration,
    )
    if run_id is not None:
        _priced.put(key, copy.deepcopy(priced))
    return {**priced, "baseline": base.to_dict()}
