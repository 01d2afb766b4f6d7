"""Fabric Advisor's analytical engine: pure, typed Python, dataclasses in, dataclasses out (its hot
modules also built as C extensions, `make compile`: advisor/engine/_compiled.py).

Public entry points (docs/ENGINE_API.md)::

    from advisor.engine import evaluate, ScenarioError, ENGINE_VERSION
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

# the first engine import: decides which build of the engine this process runs (the compiled
# modules only while their build is fresh, advisor/engine/_compiled.py)
from advisor.engine import _compiled  # noqa: F401
from advisor.engine.build_id import engine_version
from advisor.engine.calibration.fabric_fit import FabricFit, calibration_comparison
from advisor.engine.decision.recommend import recommend as _recommend
from advisor.engine.errors import ScenarioError
from advisor.engine.facts.catalog import Catalog, default_catalog
from advisor.engine.facts.catalog.cloud import CloudFabric, cloud_fabric
from advisor.engine.facts.constants import CONSTANTS_VERSION
from advisor.engine.facts.formatting import significant
from advisor.engine.facts.transports import net_transport
from advisor.engine.input.echo import scenario_echo
from advisor.engine.input.scenario import Design, Scenario, parse_scenario
from advisor.engine.model.echo import workload_info
from advisor.engine.model.performance import (
    evaluate_design,
    model_assumptions,
    set_model_error_source,
)
from advisor.engine.model.planner import plan_workload
from advisor.engine.result.records import CloudReference, DesignEvaluation, EngineResult, Metrics
from advisor.engine.tools.validation import model_error_band

# the composition root: the bounds' model error comes from the calibration residuals, which
# validation computes by running the calibration through performance (so performance does
# not import validation)
set_model_error_source(model_error_band)

ENGINE_VERSION = engine_version()
"""The release and a digest of the engine's source and data (:mod:`advisor.engine.build_id`)."""

__all__ = [
    "ENGINE_VERSION",
    "EngineResult",
    "ScenarioError",
    "evaluate",
    "evaluate_typed",
]


def evaluate(
    scenario: dict[str, Any],
    *,
    catalog: Catalog | None = None,
    progress: Callable[[int], None] | None = None,
    calibration: FabricFit | None = None,
) -> dict[str, Any]:
    """Evaluate a scenario v1 dict; returns a JSON-compatible dict (never NaN or infinity):
    :func:`evaluate_typed`'s answer written as JSON once (``EngineResult.to_dict``), for the
    CLI, sweeps, audit and anyone who wants the JSON contract of docs/ENGINE_API.md."""
    return _evaluate(
        scenario, catalog=catalog, progress=progress, calibration=calibration, scaling_chart=True
    )[1]


def evaluate_typed(
    scenario: dict[str, Any],
    *,
    catalog: Catalog | None = None,
    progress: Callable[[int], None] | None = None,
    calibration: FabricFit | None = None,
    scaling_chart: bool = True,
) -> EngineResult:
    """The engine's answer, built as its typed records (:mod:`advisor.engine.result.records`).

    ``scaling_chart=False``: without the scaling chart (``scaling`` empty), every other
    figure the same (the what-if, :mod:`advisor.engine.tools.whatif`, shows none).

    parse -> plan the workload -> price the given ``design`` (if any) -> recommendation
    (:func:`advisor.engine.decision.recommend.recommend`).  Bad input raises
    :class:`ScenarioError` with per-field messages.  ``to_dict()`` is the JSON the API
    serves; a non-finite number anywhere raises ValueError here, not in a reader.
    """
    return _evaluate(
        scenario,
        catalog=catalog,
        progress=progress,
        calibration=calibration,
        scaling_chart=scaling_chart,
    )[0]


def _evaluate(
    scenario: dict[str, Any],
    *,
    catalog: Catalog | None,
    progress: Callable[[int], None] | None,
    calibration: FabricFit | None,
    scaling_chart: bool,
) -> tuple[EngineResult, dict[str, Any]]:
    """The typed answer and its JSON, written once: the JSON is both the finiteness check
    (:func:`json_safe` raises ValueError on NaN or infinity) and :func:`evaluate`'s answer."""
    cat = catalog or default_catalog()
    s = parse_scenario(scenario, cat)
    default_result: EngineResult | None = None
    if (
        calibration is not None
    ):  # the customer's nccl-tests fit (advisor.engine.calibration.fabric_fit)
        default_result = evaluate_typed(scenario, catalog=cat)
        s = dataclasses.replace(s, calibration=calibration.calibration())
    w = plan_workload(s)
    design_evaluation: DesignEvaluation | None = None
    if s.design is not None:
        design_evaluation = DesignEvaluation(
            design=s.design,
            metrics=evaluate_design(s, w, _laid_out(s, cat)),
        )
    answer = _recommend(s, w, cat, progress, scaling_chart=scaling_chart)
    rationale = answer.recommendation.rationale
    cloud = cloud_fabric(s.constraints.cloud) if s.constraints.cloud else None
    cloud_reference: CloudReference | None = None
    if cloud is not None:
        cloud_reference = _cloud_reference(cloud, answer.metrics, design_evaluation)
        rationale = (cloud_reference.statement, *rationale)
    if s.warnings:
        rationale = (*s.warnings, *rationale)
    result = dataclasses.replace(
        answer,
        engine_version=ENGINE_VERSION,
        constants_version=CONSTANTS_VERSION,
        catalog_version=cat.version,
        scenario=scenario_echo(s),
        workload=workload_info(w, s),
        design_evaluation=design_evaluation,
        recommendation=dataclasses.replace(answer.recommendation, rationale=rationale),
        assumptions=(*model_assumptions(s, w), *answer.assumptions),
        cloud_fabric=cloud_reference,
        warnings=tuple(s.warnings) if s.warnings else None,
    )
    if calibration is not None and default_result is not None:
        result = dataclasses.replace(
            result, calibration=calibration_comparison(default_result, result, calibration)
        )
    # finite everywhere (json_safe raises ValueError naming where)
    plain = result.to_plain_dict()  # one walk when every value is plain, finite JSON
    safe: dict[str, Any] = plain if plain is not None else json_safe(result.to_dict())
    return result, safe


def _laid_out(s: Scenario, cat: Catalog) -> Design:
    """The scenario's own design laid out as its platform cables it: a platform whose
    integrated ports form plies (Gaudi 3: 3 plies of 8 x 200G, two whole OSFPs per leaf;
    docs/MODEL.md 11, "Plies") puts each ply's links on one leaf, as the recommendation's
    candidates do."""
    assert s.design is not None
    sku = s.gpu.reference_nic_sku if s.gpu.integrated_scaleout else ""
    nic = next((n for n in cat.nics if n.sku == sku), None) if sku else None
    if nic is None:
        return s.design
    per_rail = nic.rail_layout(s.design.nics_per_node)[1]
    return s.design if per_rail == 1 else dataclasses.replace(s.design, links_per_rail=per_rail)


def _transport_clause(cloud: CloudFabric) -> str:
    """What the evaluation takes of a network-plugin transport (EFA's step latency, multipath
    spraying and protocols, ``facts.transports``), said by its display label."""
    plugin = net_transport(cloud.net_transport)
    if plugin is None:
        return ""
    spraying = ", the multipath spraying" if plugin.multipath else ""
    return f"; the latency per network step{spraying} and the protocols of {plugin.label}"


def _cloud_reference(
    cloud: CloudFabric, rec: Metrics, given: DesignEvaluation | None
) -> CloudReference:
    """The rented instance's fabric as the reference the answer compares against (MODEL.md
    20.8): its shape, and its modelled step time / ms per token beside the recommendation's."""
    compared = ""
    figures: dict[str, float] = {}
    for key, unit in (("step_time_s", "s per step"), ("ms_per_token", "ms per token")):
        mine = getattr(rec, key)
        theirs = getattr(given.metrics, key) if given is not None else None
        if isinstance(mine, float | int) and isinstance(theirs, float | int) and mine > 0:
            figures[f"cloud_{key}"] = theirs
            compared = (
                f" Modelled on its shape: {significant(theirs)} {unit} against "
                f"{significant(mine)} for the "
                f"recommended owned fabric ({theirs / mine:.2f}x)."
            )
            break
    return CloudReference(
        id=cloud.id,
        provider=cloud.provider,
        instance=cloud.instance,
        gpu=cloud.gpu_id,
        gpus_per_instance=cloud.gpus_per_instance,
        links=cloud.links,
        link_gbps=cloud.link_gbps,
        instance_gbps=cloud.instance_gbps,
        gbps_per_gpu=cloud.gbps_per_gpu,
        transport=cloud.transport,
        rdma=cloud.rdma,
        evaluated_as=cloud.fabric,
        source=cloud.source,
        cloud_step_time_s=figures.get("cloud_step_time_s"),
        cloud_ms_per_token=figures.get("cloud_ms_per_token"),
        statement=(
            f"On rented GPUs the scale-out fabric is the provider's: {cloud.describe()}. Its "
            "shape (links x speed per instance, RDMA or not"
            f"{_transport_clause(cloud)}) is evaluated as the given design on a non-blocking "
            "fabric; the provider's topology, oversubscription and transport tuning are not "
            "modelled. The recommendation is what an owned cluster of these GPUs would "
            f"build.{compared}"
        ),
    )


class _NotPlainJson(Exception):
    """:func:`_plain_copy` met a value it does not copy (the careful walk says where)."""


def _plain_copy(value: Any) -> Any:
    """:func:`json_safe` without the paths its errors name: the exact types of a result (no
    isinstance chain, no path string per element); anything else raises _NotPlainJson."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        if not math.isfinite(value):
            raise _NotPlainJson
        return value
    if kind is dict:
        return {str(k): _plain_copy(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [_plain_copy(v) for v in value]
    raise _NotPlainJson


def json_safe(value: Any, path: str = "result") -> Any:
    """Copy ``value`` as plain JSON types; raise ValueError on NaN or infinity."""
    try:
        return _plain_copy(value)
    except _NotPlainJson:
        return _json_safe(value, path)  # subclasses, to_dict(), or the error with its path


def _json_safe(value: Any, path: str) -> Any:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"engine produced a non-finite number at {path}")
        return value
    if isinstance(value, dict):
        return {str(k): _json_safe(v, f"{path}.{k}") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v, f"{path}[{i}]") for i, v in enumerate(value)]
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return _json_safe(to_dict(), path)
    raise TypeError(f"engine produced a non-JSON value of type {type(value).__name__} at {path}")
