"""Sensitivity sweeps: one scenario over a grid of servers x fabric x NIC speed x NICs x
oversubscription, fanned out over the Celery workers in chunks.

Shape of the work:
- `sweep_create` validates the axes, stores a Sweep and its SweepChunk rows (design points
  [start, stop) each) and, once the transaction commits, sends the chunks as one Celery
  `group` on the "sweeps" queue. Every worker process takes chunks, so throughput grows with
  the number of processes.
- A chunk is claimed, heartbeated and finished exactly like a run (claim token; only the
  claimant finishes). Its finishing transaction stores its result rows and adds its counts to
  the sweep with F() increments; the chunk that brings `done_chunks` to `total_chunks` ends the
  sweep. That is the chord's join, kept in PostgreSQL instead of a Celery chord: a chord needs
  a result backend (we keep none) and its counter cannot tell a redelivered chunk from a new
  one, while the claim can.
- The reconciler (`sweeps_reconcile`, run by beat with the runs') resends chunks whose message
  was lost and requeues chunks whose worker died.

Inside a chunk the pure engine is used directly: the scenario is parsed once, sized and
planned once per distinct server count, and `evaluate_design` is called once per point.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import math
import re
import uuid
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from advisor.engine.catalog import Catalog
from advisor.engine.errors import ScenarioError
from advisor.engine.limits import GPUS_MAX, LIMITS
from advisor.engine.scenario import Scenario as EngineScenario
from advisor.engine.scenario import parse_scenario
from advisor.scenarios.claims import stale_after, work_claim
from advisor.scenarios.converters import InvalidScenario, current_catalog
from advisor.scenarios.heartbeat import Heartbeat
from advisor.scenarios.models import RunStatus, Scenario, Sweep, SweepChunk, SweepStatus
from advisor.scenarios.services import (
    BROKER_ERRORS,
    NOT_ENGINE_ERRORS,
    TRANSIENT_DB_ERRORS,
    ClaimLost,
    _owner_or_none,
    hold_for_fault_tests,
)

logger = logging.getLogger(__name__)

# Axis names in the order the design points are numbered (servers outermost, so a chunk of
# consecutive points spans few server counts and plans each of them once).
AXES: tuple[str, ...] = ("servers", "fabric", "nic_gbps", "nics_per_node", "oversubscription")
FABRICS: tuple[str, ...] = ("ethernet", "roce", "infiniband")
MAX_VALUES_PER_AXIS = 200
# The engine's input limits (advisor.engine.limits) bound every axis, as they bound a scenario.
MAX_SERVERS = GPUS_MAX  # servers x gpus_per_node is checked against GPUS_MAX per scenario
MAX_NICS_PER_NODE = int(LIMITS["design.nics_per_node"].high)
MAX_NIC_GBPS = LIMITS["design.nic_gbps"].high
MAX_OVERSUBSCRIPTION = LIMITS["design.oversubscription"].high

# Metrics kept per design point (those the engine reports for the scenario's workload).
TRAINING_METRICS: tuple[str, ...] = (
    "step_time_s",
    "compute_s",
    "exposed_comm_s",
    "scaling_efficiency",
    "gpu_idle_fraction",
    "tflops_per_gpu",
    "run_time_s",
    "gpu_hours",
)
INFERENCE_METRICS: tuple[str, ...] = (
    "ms_per_token",
    "ttft_ms",
    "tokens_per_s_per_server",
    "comm_ms_per_token",
    "gpu_idle_fraction",
)


class InvalidSweep(Exception):
    """The sweep's axes break a rule; `field_errors` maps "axes.<name>" to messages."""

    def __init__(self, field_errors: dict[str, list[str]]) -> None:
        self.field_errors = field_errors
        super().__init__("; ".join(f"{k}: {' '.join(v)}" for k, v in field_errors.items()))


class TooManySweeps(Exception):
    """The owner already has SWEEP_MAX_ACTIVE_PER_USER sweeps queued or running."""


class ChunkInterrupted(Exception):
    """The database went away after this worker claimed the chunk: retry, holding `token`."""

    def __init__(self, *, chunk_id: uuid.UUID, token: uuid.UUID) -> None:
        self.chunk_id = chunk_id
        self.token = token
        super().__init__(f"sweep chunk {chunk_id} interrupted by a database error")


# --- Axes ------------------------------------------------------------------------------------

_RANGE = re.compile(
    r"^\s*(?P<a>[0-9.]+)\s*(?:-|\.\.)\s*(?P<b>[0-9.]+)\s*(?:(?:step|:|by|x)\s*(?P<s>[0-9.]+))?\s*$"
)


def parse_axis_text(text: str) -> list[str | float]:
    """Read what a person types for one axis: "2, 4, 8", "1-64 step 1", "2..1024 x2".

    "a-b step s" adds s; "a..b x f" multiplies by f (a geometric series: 1, 2, 4, ...).
    Words (fabric ids) are kept as strings. Raises ValueError naming the part it cannot read.
    """
    values: list[str | float] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        match = _RANGE.match(part)
        if match and ("-" in part or ".." in part):
            a, b = float(match["a"]), float(match["b"])
            step = float(match["s"]) if match["s"] else 1.0
            geometric = bool(re.search(r"\bx\s*[0-9.]+\s*$", part))
            if b < a or step <= 0 or (geometric and (step <= 1 or a <= 0)):
                raise ValueError(f"cannot read the range {part!r}")
            value = a
            while value <= b * (1 + 1e-9):
                values.append(round(value, 6))
                if len(values) > MAX_VALUES_PER_AXIS:
                    raise ValueError(f"{part!r} has more than {MAX_VALUES_PER_AXIS} values")
                value = value * step if geometric else value + step
            continue
        try:
            values.append(float(part))
        except ValueError:
            values.append(part.lower())
    return values


def _int_values(errors: dict[str, list[str]], name: str, raw: Sequence[Any], top: int) -> list[int]:
    out: list[int] = []
    for value in raw:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not (isinstance(value, int) or math.isfinite(value))
            or value != int(value)
        ):
            errors.setdefault(f"axes.{name}", []).append(f"{value!r} is not a whole number")
        elif not 1 <= value <= top:
            errors.setdefault(f"axes.{name}", []).append(f"{value!r} is not between 1 and {top}")
        else:
            out.append(int(value))
    return out


def _number_values(
    errors: dict[str, list[str]], name: str, raw: Sequence[Any], low: float, top: float
) -> list[float]:
    out: list[float] = []
    for value in raw:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or not low <= value <= top
        ):
            errors.setdefault(f"axes.{name}", []).append(
                f"{value!r} is not a number between {low:g} and {top:g}"
            )
        else:
            out.append(float(value))
    return out


def _unique(values: Sequence[Any]) -> list[Any]:
    return sorted(set(values), key=lambda v: (str(type(v)), v))


def normalise_axes(raw: Any, *, base: EngineScenario) -> dict[str, list[Any]]:
    """Validate the axes and fill the missing ones from the scenario (or its defaults).

    Returns {"servers": [int], "fabric": [str], "nic_gbps": [float], "nics_per_node": [int],
    "oversubscription": [float]}, each sorted and without duplicates.
    """
    errors: dict[str, list[str]] = {}
    if not isinstance(raw, dict):
        raise InvalidSweep({"axes": ["must be an object of axis name -> list of values"]})
    for key in raw:
        if key not in AXES:
            errors.setdefault(f"axes.{key}", []).append(f"unknown axis; known: {', '.join(AXES)}")
    design = base.design
    defaults: dict[str, list[Any]] = {
        "servers": [base.nodes],
        "fabric": [design.fabric if design else "roce"],
        "nic_gbps": [design.nic_gbps if design else 400.0],
        "nics_per_node": [design.nics_per_node if design else base.gpus_per_node],
        "oversubscription": [design.oversubscription if design else 1.0],
    }
    axes: dict[str, list[Any]] = {}
    for name in AXES:
        values = raw.get(name)
        if values is None or values == []:
            axes[name] = defaults[name]
            continue
        if not isinstance(values, list):
            errors.setdefault(f"axes.{name}", []).append("must be a list of values")
            continue
        if len(values) > MAX_VALUES_PER_AXIS:
            errors.setdefault(f"axes.{name}", []).append(
                f"has {len(values)} values; at most {MAX_VALUES_PER_AXIS}"
            )
            continue
        if name == "servers":
            # Whole servers of the scenario's size, up to the engine's largest job.
            max_servers = GPUS_MAX // max(1, base.gpus_per_node)
            axes[name] = _int_values(errors, name, values, max_servers)
        elif name == "nics_per_node":
            axes[name] = _int_values(errors, name, values, MAX_NICS_PER_NODE)
        elif name == "nic_gbps":
            axes[name] = _number_values(errors, name, values, 1.0, MAX_NIC_GBPS)
        elif name == "oversubscription":
            axes[name] = _number_values(errors, name, values, 1.0, MAX_OVERSUBSCRIPTION)
        else:
            bad = [v for v in values if v not in FABRICS]
            if bad:
                errors.setdefault("axes.fabric", []).append(
                    f"unknown fabric {', '.join(map(repr, bad))}; known: {', '.join(FABRICS)}"
                )
            axes[name] = [v for v in values if v in FABRICS]
    if errors:
        raise InvalidSweep(errors)
    axes = {name: _unique(values) for name, values in axes.items()}
    total = math.prod(len(v) for v in axes.values())
    if total > settings.SWEEP_MAX_POINTS:
        raise InvalidSweep(
            {"axes": [f"{total:,} design points; at most {settings.SWEEP_MAX_POINTS:,} per sweep"]}
        )
    return axes


def point_count(axes: dict[str, list[Any]]) -> int:
    return math.prod(len(axes[name]) for name in AXES)


def points(
    axes: dict[str, list[Any]], start: int, stop: int
) -> Iterator[tuple[int, tuple[Any, ...]]]:
    """Design points [start, stop) of the grid, numbered in AXES order, as (index, values)."""
    grid = itertools.product(*(axes[name] for name in AXES))
    yield from enumerate(itertools.islice(grid, start, stop), start=start)


# --- Creating and fanning out ----------------------------------------------------------------


def _parse_base(inputs: dict[str, Any], catalog: Catalog) -> EngineScenario:
    try:
        return parse_scenario(inputs, catalog)
    except ScenarioError as exc:
        raise InvalidScenario(exc.field_errors) from exc


def _sweep_catalog(version: str) -> Catalog:
    """The catalog the sweep was created with (the current one if it no longer exists)."""
    from advisor.scenarios.catalog_store import catalog_by_version

    return (catalog_by_version(version) if version else None) or current_catalog()


@transaction.atomic
def sweep_create(
    *,
    scenario: Scenario,
    axes: Any,
    owner: AbstractBaseUser | AnonymousUser | None = None,
) -> Sweep:
    """Store a sweep of `scenario` over `axes` and send its chunks once this commits.

    Bad axes raise InvalidSweep; a scenario the engine refuses raises InvalidScenario; an
    owner with SWEEP_MAX_ACTIVE_PER_USER unfinished sweeps gets TooManySweeps (their row is
    locked while counting, so two concurrent requests cannot both slip under the limit).
    """
    owner_user: Any = _owner_or_none(owner)
    if owner_user is not None:
        get_user_model().objects.select_for_update().filter(pk=owner_user.pk).first()
        active = Sweep.objects.filter(
            owner=owner_user, status__in=[SweepStatus.QUEUED, SweepStatus.RUNNING]
        ).count()
        limit = settings.SWEEP_MAX_ACTIVE_PER_USER
        if active >= limit:
            raise TooManySweeps(
                f"{active} of your sweeps are still running; at most {limit} at a time. "
                "Wait for one to finish."
            )
    catalog = current_catalog()
    normalised = normalise_axes(axes, base=_parse_base(scenario.inputs, catalog))
    total = point_count(normalised)
    size = settings.SWEEP_CHUNK_POINTS
    starts = range(0, total, size)
    sweep = Sweep.objects.create(
        scenario=scenario,
        owner=owner_user,
        axes=normalised,
        catalog_version=catalog.version,
        engine_version=_engine_version(),
        total_points=total,
        total_chunks=len(starts),
    )
    now = timezone.now()
    chunks = SweepChunk.objects.bulk_create(
        SweepChunk(
            sweep=sweep, index=i, start=start, stop=min(start + size, total), enqueued_at=now
        )
        for i, start in enumerate(starts)
    )
    chunk_ids = [chunk.pk for chunk in chunks]
    transaction.on_commit(partial(_chunks_publish, chunk_ids))
    return sweep


def _chunks_publish(chunk_ids: Sequence[uuid.UUID]) -> bool:
    """Send chunks as one Celery group; a broker outage is left to the reconciler."""
    from celery import group

    from advisor.scenarios.tasks import sweep_chunk

    try:
        group(sweep_chunk.si(str(chunk_id)) for chunk_id in chunk_ids).apply_async()
    except BROKER_ERRORS:
        logger.warning(
            "%d sweep chunks not sent (broker unreachable); the reconciler will resend them",
            len(chunk_ids),
        )
        return False
    return True


# --- One chunk ---------------------------------------------------------------------------------


def chunk_claim(*, chunk_id: uuid.UUID, resume_token: uuid.UUID | None = None) -> uuid.UUID | None:
    """Atomically take a chunk (as run_claim takes a run); None when it is not claimable."""
    return work_claim(SweepChunk, pk=chunk_id, resume_token=resume_token)


def chunk_heartbeat(*, chunk_id: uuid.UUID, token: uuid.UUID) -> bool:
    return bool(
        SweepChunk.objects.filter(pk=chunk_id, claim_token=token, status=RunStatus.RUNNING).update(
            heartbeat_at=timezone.now()
        )
    )


def _chunk_finish(
    chunks: QuerySet[SweepChunk],
    *,
    chunk_id: uuid.UUID,
    status: RunStatus,
    results: dict[str, Any] | None,
    error: str = "",
    infeasible: int = 0,
) -> bool:
    """Finish one chunk (if `chunks` still selects it) and count it into its sweep, atomically.

    The chunk's counts are added with F() in the same transaction as its own update, so they
    are counted exactly once; the chunk that completes the set ends the sweep.
    """
    now = timezone.now()
    with transaction.atomic():
        updated = chunks.filter(pk=chunk_id).update(
            status=status, results=results, error=error, finished_at=now
        )
        if not updated:
            return False
        chunk = SweepChunk.objects.values("sweep_id", "start", "stop").get(pk=chunk_id)
        failed = status == RunStatus.FAILED
        Sweep.objects.filter(pk=chunk["sweep_id"]).update(
            done_points=F("done_points") + (chunk["stop"] - chunk["start"]),
            infeasible_points=F("infeasible_points") + infeasible,
            done_chunks=F("done_chunks") + 1,
            failed_chunks=F("failed_chunks") + (1 if failed else 0),
        )
        _sweep_end_if_done(chunk["sweep_id"], now=now)
    return True


def _sweep_end_if_done(sweep_id: uuid.UUID, *, now: datetime) -> None:
    complete = Sweep.objects.filter(
        pk=sweep_id,
        done_chunks=F("total_chunks"),
        status__in=[SweepStatus.QUEUED, SweepStatus.RUNNING],
    )
    if complete.filter(failed_chunks=0).update(status=SweepStatus.SUCCEEDED, finished_at=now):
        logger.info("sweep %s succeeded", sweep_id)
        return
    first_error = (
        SweepChunk.objects.filter(sweep_id=sweep_id, status=RunStatus.FAILED)
        .order_by("index")
        .values_list("error", flat=True)
        .first()
    )
    failed = complete.update(
        status=SweepStatus.FAILED,
        finished_at=now,
        error=(
            "Some design points could not be evaluated "
            f"(the results of the others are kept). First error: {first_error}"
        ),
    )
    if failed:
        logger.warning("sweep %s failed: %s", sweep_id, first_error)


def _resize(base: Any, gpus: int) -> Any:
    """The scenario with `gpus` GPUs; an explicit data-parallel degree follows the size."""
    par = base.parallelism
    changes: dict[str, Any] = {"gpus": gpus}
    if par.dp is not None:
        model_parallel = (par.tp or 1) * (par.pp or 1)
        if gpus % model_parallel:
            raise ScenarioError.single(
                "gpus",
                f"{gpus} GPUs cannot hold the explicit tp x pp = {model_parallel} plan",
            )
        changes["parallelism"] = dataclasses.replace(par, dp=gpus // model_parallel)
    return dataclasses.replace(base, **changes)


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(f"{value:.6g}")


def evaluate_points(
    inputs: dict[str, Any],
    axes: dict[str, list[Any]],
    start: int,
    stop: int,
    *,
    catalog: Catalog | None = None,
    tick: Callable[[], None] | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """Evaluate design points [start, stop) with the pure engine; (rows, infeasible count).

    A point the engine refuses (a plan that does not fit, a NIC count the server cannot
    hold) is a result too: a row with `feasible` false and the engine's reason.
    """
    # Imported here: the engine's performance model lands after this module.
    from advisor.engine.bom import storage_plan
    from advisor.engine.performance import evaluate_design
    from advisor.engine.recommend import network_parts
    from advisor.engine.recommend.facts import job_facts
    from advisor.engine.recommend.pricing import job_cost, life_cost
    from advisor.engine.recommend.scaling import design_of
    from advisor.engine.recommend.search import design_point
    from advisor.engine.workload import plan_workload

    catalog = catalog or current_catalog()
    parts = network_parts(catalog)
    base = parse_scenario(inputs, catalog)
    metric_keys = TRAINING_METRICS if base.is_training else INFERENCE_METRICS
    planned: dict[int, tuple[Any, Any] | str] = {}
    rows: list[dict[str, Any]] = []
    infeasible = 0
    for index, (servers, fabric, nic_gbps, nics, over) in points(axes, start, stop):
        if tick is not None:
            tick()
        row: dict[str, Any] = {
            "i": index,
            "servers": servers,
            "gpus": servers * base.gpus_per_node,
            "fabric": fabric,
            "nic_gbps": nic_gbps,
            "nics_per_node": nics,
            "oversubscription": over,
        }
        if servers not in planned:
            try:
                sized = _resize(base, servers * base.gpus_per_node)
                planned[servers] = (sized, plan_workload(sized))
            except ScenarioError as exc:
                planned[servers] = str(exc)
        plan = planned[servers]
        reason: str | None = None
        metrics: dict[str, Any] = {}
        money: dict[str, float | None] = {
            "network_capex_usd": None,
            "decision_cost_usd": None,
            "total_cost_usd": None,
        }
        if isinstance(plan, str):
            reason = plan
        else:
            # the recommendation's candidate rules: PCIe slot, platform NICs, switch cages
            facts = job_facts(plan[0], plan[1], catalog, parts)
            storage = storage_plan(parts, nodes=facts.nodes, spec=facts.platform.storage)
            cand, reason, capex, power = design_point(
                facts,
                parts,
                storage,
                fabric=fabric,
                nic_gbps=nic_gbps,
                nics_per_node=nics,
                oversubscription=over,
            )
            if cand is not None:
                try:
                    metrics = evaluate_design(plan[0], plan[1], design_of(cand)).to_dict()
                except ScenarioError as exc:
                    reason = str(exc)
                else:
                    money["network_capex_usd"] = _finite(capex)
                    money["decision_cost_usd"] = _finite(
                        life_cost(facts, fabric, metrics, capex, power).total_usd
                    )
                    money["total_cost_usd"] = _finite(
                        job_cost(facts, fabric, metrics, capex, power).total_cost_usd
                    )
        values = {key: _finite(metrics.get(key)) for key in metric_keys}
        if reason is None and all(v is None for v in values.values()):
            reason = "the performance model found no valid timing for this design"
        row["feasible"] = reason is None
        row["reason"] = reason
        row.update(values)
        row.update(money)
        infeasible += reason is not None
        rows.append(row)
    return rows, infeasible


def sweep_chunk_execute(
    *, chunk_id: uuid.UUID, resume_token: uuid.UUID | None = None
) -> str | None:
    """Claim a chunk, evaluate its design points and finish it; None when not claimed.

    Safe to deliver twice (the claim lets one delivery in). A database error after the
    claim raises ChunkInterrupted carrying the token so the retry resumes this claim.
    """
    token = chunk_claim(chunk_id=chunk_id, resume_token=resume_token)
    if token is None:
        status = SweepChunk.objects.filter(pk=chunk_id).values_list("status", flat=True).first()
        logger.info("sweep chunk %s not claimed: it is %s", chunk_id, status or "gone")
        return None
    try:
        chunk = SweepChunk.objects.select_related("sweep__scenario").get(pk=chunk_id)
        Sweep.objects.filter(pk=chunk.sweep_id, status=SweepStatus.QUEUED).update(
            status=SweepStatus.RUNNING, started_at=timezone.now()
        )
        mine = SweepChunk.objects.filter(claim_token=token, status=RunStatus.RUNNING)
        with Heartbeat(
            partial(chunk_heartbeat, chunk_id=chunk_id, token=token),
            every_s=settings.RUN_HEARTBEAT_EVERY_S,
        ) as heartbeat:

            def tick() -> None:
                if heartbeat.lost:
                    raise ClaimLost

            if settings.FABRIC_TEST_EVAL_DELAY_S:
                hold_for_fault_tests(heartbeat)
            try:
                rows, infeasible = evaluate_points(
                    chunk.sweep.scenario.inputs,
                    chunk.sweep.axes,
                    chunk.start,
                    chunk.stop,
                    catalog=_sweep_catalog(chunk.sweep.catalog_version),
                    tick=tick,
                )
            except NOT_ENGINE_ERRORS:
                raise
            except Exception as exc:  # an engine bug (or the time limit) fails this chunk
                if isinstance(exc, SoftTimeLimitExceeded):
                    reason = (
                        f"These design points took longer than the "
                        f"{settings.CELERY_TASK_SOFT_TIME_LIMIT} s allowed."
                    )
                else:
                    logger.exception("sweep chunk %s failed in the engine", chunk_id)
                    reason = f"Engine error: {type(exc).__name__}: {exc}"
                finished = _chunk_finish(
                    mine, chunk_id=chunk_id, status=RunStatus.FAILED, results=None, error=reason
                )
                return "failed" if finished else None
        finished = _chunk_finish(
            mine,
            chunk_id=chunk_id,
            status=RunStatus.SUCCEEDED,
            results=pack_rows(rows),
            infeasible=infeasible,
        )
    except TRANSIENT_DB_ERRORS as exc:
        raise ChunkInterrupted(chunk_id=chunk_id, token=token) from exc
    except ClaimLost:
        finished = False
    if not finished:
        logger.warning("sweep chunk %s: claim lost to another worker; result discarded", chunk_id)
        return None
    return "succeeded"


def _engine_version() -> str:
    from advisor import engine

    return str(getattr(engine, "ENGINE_VERSION", ""))


# --- Reconciler ------------------------------------------------------------------------------


def sweeps_reconcile(*, now: datetime | None = None, limit: int = 500) -> dict[str, int]:
    """The runs' reconciler, for sweep chunks: resend lost ones, requeue orphaned ones."""
    now = now or timezone.now()
    stale_cutoff = now - stale_after()
    lost_cutoff = now - timedelta(seconds=settings.RUN_QUEUED_LOST_AFTER_S)
    orphaned = SweepChunk.objects.filter(status=RunStatus.RUNNING, heartbeat_at__lt=stale_cutoff)

    given_up = 0
    exhausted = orphaned.filter(attempts__gte=settings.RUN_MAX_ATTEMPTS)
    for chunk_id in list(exhausted.values_list("pk", flat=True)[:limit]):
        given_up += _chunk_finish(
            exhausted,
            chunk_id=chunk_id,
            status=RunStatus.FAILED,
            results=None,
            error=(
                f"Gave up after {settings.RUN_MAX_ATTEMPTS} attempts: the worker evaluating "
                "these design points stopped responding each time."
            ),
        )

    to_send: list[uuid.UUID] = []
    for chunk_id in list(
        orphaned.filter(attempts__lt=settings.RUN_MAX_ATTEMPTS).values_list("pk", flat=True)[:limit]
    ):
        if orphaned.filter(pk=chunk_id).update(
            status=RunStatus.QUEUED, claim_token=None, enqueued_at=now
        ):
            to_send.append(chunk_id)
    requeued = len(to_send)

    lost = SweepChunk.objects.filter(status=RunStatus.QUEUED, enqueued_at__lt=lost_cutoff)
    for chunk_id in list(lost.values_list("pk", flat=True)[:limit]):
        if lost.filter(pk=chunk_id).update(enqueued_at=now):
            to_send.append(chunk_id)
    resent = len(to_send) - requeued

    if to_send:
        transaction.on_commit(partial(_chunks_publish, to_send))
        logger.warning(
            "reconciler: %d orphaned sweep chunks requeued, %d lost chunk messages resent",
            requeued,
            resent,
        )
    return {"requeued": requeued, "resent": resent, "given_up": given_up}


# --- Reads -------------------------------------------------------------------------------------


def sweep_get(*, sweep_id: uuid.UUID | str, user: Any) -> Sweep | None:
    """A sweep `user` may see: the rule of its scenario (advisor.scenarios.selectors)."""
    from advisor.scenarios.selectors import scenario_get

    try:
        sweep = Sweep.objects.select_related("scenario").get(pk=sweep_id)
    except (Sweep.DoesNotExist, ValueError, TypeError, ValidationError):
        return None
    if scenario_get(scenario_id=sweep.scenario_id, user=user) is None:
        return None
    return sweep


def sweep_list(*, scenario: Scenario) -> QuerySet[Sweep]:
    return scenario.sweeps.order_by("-created_at")


def pack_rows(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """A chunk's rows as {"columns": [...], "rows": [[...], ...]}: the keys once, not per row
    (a 10,000-point sweep stores ~1.5 MB instead of ~3.7 MB, which PostgreSQL parses faster)."""
    columns: list[str] = list(rows[0]) if rows else []
    return {"columns": columns, "rows": [[row.get(c) for c in columns] for row in rows]}


def unpack_rows(packed: Any) -> list[dict[str, Any]]:
    if not isinstance(packed, dict):
        return list(packed or [])  # a list of row objects (stored before packing)
    columns = packed.get("columns") or []
    return [dict(zip(columns, values, strict=True)) for values in packed.get("rows") or []]


def sweep_results(sweep: Sweep) -> list[dict[str, Any]]:
    """Every evaluated design point, in point order (the chunks that succeeded so far)."""
    rows: list[dict[str, Any]] = []
    for results in (
        sweep.chunks.filter(status=RunStatus.SUCCEEDED)
        .order_by("index")
        .values_list("results", flat=True)
    ):
        rows.extend(unpack_rows(results))
    return rows
