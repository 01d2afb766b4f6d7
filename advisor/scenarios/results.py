"""The boundary where engine results are stored and served: the one place that turns the
typed result (:class:`advisor.engine.result.records.EngineResult`) into the JSON a run stores
and the API serves, and a stored run's JSON back into the typed result the pages read.

- Stored: ``ScenarioRun.result`` holds :func:`result_json` of the typed result (the JSON of
  docs/ENGINE_API.md, "Result (output)").
- Read: :func:`stored_result` (pages, PDF, CSV, the API's BOM) parses it once per run object;
  results stored by older engine versions load with defaults for keys added since.
- Served: :func:`served_result` is what the API returns as ``result``: the stored JSON read
  through the types and written back, so its shape is today's whatever version stored it.
"""

from __future__ import annotations

from typing import Any, cast

from django.db import connection
from django.db.models.signals import post_delete, post_save

from advisor.engine import ENGINE_VERSION
from advisor.engine.result.base import ResultFormatError
from advisor.engine.result.records import Cost, EngineResult, Recommendation
from advisor.scenarios.models import RunStatus, ScenarioRun
from advisor.scenarios.run_lru import RunLRU
from advisor.scenarios.single_flight import KeyedLocks

_CACHE_ATTR = "_typed_result"

UNREADABLE_MESSAGE = "This result cannot be read; compute it again."
# What reading a damaged stored result raises (a wrong-typed or missing part).
READ_ERRORS = (ResultFormatError, TypeError, ValueError, KeyError, AttributeError)


class UnreadableResult(Exception):
    """A run's stored result cannot be read (damaged, or written by a broken engine): its
    pages and the API say so and offer to compute it again, instead of failing with a 500."""

    def __init__(self, run: ScenarioRun) -> None:
        self.run_id = run.pk
        self.scenario_id = run.scenario_id
        super().__init__(UNREADABLE_MESSAGE)


def result_json(result: EngineResult) -> dict[str, Any]:
    """The JSON a run stores and the API serves (``EngineResult.to_dict``)."""
    return result.to_dict()


def result_from_json(data: dict[str, Any]) -> EngineResult:
    """A stored result's JSON as the typed result (missing newer keys take defaults)."""
    return EngineResult.from_dict(data)


def as_read_back(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` as a read of a run's stored ``result`` column returns it, without storing it:
    the database's own JSON of it (PostgreSQL's jsonb orders an object's keys by length, then
    bytes, and writes numbers its own way) decoded by the column's field, as a page reads it.
    https://www.postgresql.org/docs/current/datatype-json.html"""
    field = ScenarioRun._meta.get_field("result")
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s", [field.get_db_prep_value(data, connection)])
        row = cursor.fetchone()
    # from_db_value reads no expression but a key transform's (none here)
    value = field.from_db_value(row[0] if row else None, cast(Any, None), connection)
    if not isinstance(value, dict):
        raise ValueError("the database did not return the result as a JSON object")
    return value


# The large JSON columns a read that may be answered from the per-process cache can leave
# unloaded: ScenarioRun.objects.defer(*RESULT_COLUMNS); stored_result loads them on a miss.
RESULT_COLUMNS = ("result",)

# Runs whose typed result (and served JSON) this process keeps: a ~200 KB stored result
# (GPT-3 on 1,024 H100, DeepSeek-V3 disaggregated serving) takes ~0.35 MB typed and ~0.27 MB
# served (tracemalloc), so at most ~30 MB per web process.
MEMO_MAX = 48


# A thread-safe bounded LRU of (typed result, served JSON or None) by run key.
_memo: RunLRU[list[Any]] = RunLRU(MEMO_MAX)
# The scenario list's recommendation and cost per run: small, so many more.
_summaries: RunLRU[list[Any]] = RunLRU(4096)
# A run being parsed into _memo, by its key.
_parsing = KeyedLocks()


def memo_clear() -> None:
    """Forget every kept result (tests; a deploy starts new processes anyway)."""
    _memo.clear()
    _summaries.clear()


def _memo_key(run: ScenarioRun) -> tuple[Any, ...] | None:
    """A finished run's key: its result never changes once it succeeded. How it reads
    depends on this engine's version (defaults for newer keys), so that is in the key too."""
    if run.pk is None or run.status != RunStatus.SUCCEEDED:
        return None
    return (run.pk, run.catalog_version, ENGINE_VERSION)


def _forget_run(sender: Any, instance: ScenarioRun, **_kwargs: Any) -> None:
    # A run saved again (recomputed in place by an admin, or a test) reads afresh.
    _memo.drop_run(instance.pk)
    _summaries.drop_run(instance.pk)


post_save.connect(_forget_run, sender=ScenarioRun, dispatch_uid="results-memo-save")
post_delete.connect(_forget_run, sender=ScenarioRun, dispatch_uid="results-memo-delete")


def _result_loaded(run: ScenarioRun) -> bool:
    return "result" not in run.get_deferred_fields()


def stored_result(run: ScenarioRun | None) -> EngineResult | None:
    """The run's stored result, typed; None while the run has none. Parsed once per run
    object (the results page, its charts and its PDF read the same object), and once per
    process for a succeeded run (see the module's docstring)."""
    if run is None:
        return None
    if _result_loaded(run):
        cached = run.__dict__.get(_CACHE_ATTR)
        if cached is not None and cached[0] is run.result:
            return cached[1]  # type: ignore[no-any-return]
    key = _memo_key(run)
    kept = _memo.get(key) if key is not None else None
    if kept is not None and not _result_loaded(run):
        return kept[0]  # type: ignore[no-any-return]
    if not isinstance(run.result, dict) or not run.result:  # loads a deferred column
        return None
    if kept is not None:
        typed = kept[0]
    elif key is None:
        typed = _parse(run, run.result)
    else:
        with _parsing.hold(key):  # threads opening the same run at once parse it once
            kept = _memo.get(key)
            if kept is not None:
                typed = kept[0]
            else:
                typed = _parse(run, run.result)
                _memo.put(key, [typed, None])
    run.__dict__[_CACHE_ATTR] = (run.result, typed)
    return typed  # type: ignore[no-any-return]


def _parse(run: ScenarioRun, data: dict[str, Any]) -> EngineResult:
    try:
        return result_from_json(data)
    except READ_ERRORS as exc:
        raise UnreadableResult(run) from exc


def summary_kept(run: ScenarioRun) -> bool:
    """Whether this process already has the run's recommendation and cost (its list row then
    needs nothing from the result column)."""
    key = _memo_key(run)
    return key is not None and (_summaries.get(key) is not None or _memo.get(key) is not None)


def stored_summary(run: ScenarioRun | None) -> tuple[Recommendation, Cost] | None:
    """The recommendation and cost of a run's stored result, without reading the rest (the
    scenario list shows these for up to 200 runs; the whole result takes ~7 ms to read).
    Kept per process for a succeeded run. A run from
    :func:`advisor.scenarios.selectors.runs_latest_of` carries just these two parts
    (``summary_recommendation``, ``summary_cost``, ``summary_has_result``) unless this process
    has them already, its result column left unloaded.
    Raises UnreadableResult when they cannot be read."""
    if run is None:
        return None
    key = _memo_key(run)
    if key is not None:
        kept = _summaries.get(key)
        if kept is not None:
            return kept[0]  # type: ignore[no-any-return]
        whole = _memo.get(key)
        if whole is not None:
            return whole[0].recommendation, whole[0].cost
    if not _result_loaded(run) and "summary_recommendation" in run.__dict__:
        if not run.__dict__.get("summary_has_result"):
            return None  # no result yet
        parts = (run.__dict__["summary_recommendation"], run.__dict__.get("summary_cost"))
    else:
        if not isinstance(run.result, dict) or not run.result:
            return None
        typed = run.__dict__.get(_CACHE_ATTR)
        if typed is not None and typed[0] is run.result:
            return typed[1].recommendation, typed[1].cost
        parts = (run.result.get("recommendation"), run.result.get("cost"))
    try:
        summary = Recommendation.from_dict(parts[0]), Cost.from_dict(parts[1])
    except READ_ERRORS as exc:
        raise UnreadableResult(run) from exc
    if key is not None:
        _summaries.put(key, [summary])
    return summary


def served_result(run: ScenarioRun | None) -> dict[str, Any] | None:
    """The result the API serves for a run (None while it has none). Written once per
    process for a succeeded run: the dict is shared, callers only read it."""
    typed = stored_result(run)
    if typed is None or run is None:
        return None
    key = _memo_key(run)
    kept = _memo.get(key) if key is not None else None
    if kept is not None and kept[0] is typed:
        if kept[1] is None:
            kept[1] = result_json(typed)
        return kept[1]  # type: ignore[no-any-return]
    return result_json(typed)
