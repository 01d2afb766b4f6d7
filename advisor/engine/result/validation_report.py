"""The validation report as typed records: :func:`advisor.engine.tools.validation.validation_report`
read by the accuracy page (published measurements against the model, docs/MODEL.md 9)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from advisor.engine.result.base import ABSENT, Record, write_record_inits

# ------------------------------------------------------------------------- validation report

__all__ = [
    "ValidationReport",
    "ValidationRow",
    "ValidationSummary",
]


@dataclass(frozen=True)
class ValidationRow(Record):
    """One published measurement against the model (``validation_report()["rows"]``)."""

    id: str = ""
    kind: str = ""
    source: str = ""
    confidence: str = ""
    metric: str = ""
    predicted: float = 0.0
    measured: float = 0.0
    error_pct: float = 0.0
    tolerance_pct: float = 0.0
    passed: bool = False
    use: str = ""
    """fitted / development / held_out / arithmetic (docs/VALIDATION_SOURCES.md)."""
    fitted: tuple[str, ...] = ()
    """Constants set on this row (``use == "fitted"``)."""
    looked_at: tuple[str, ...] = ()
    """Changes aimed at this held-out row or made after its prediction was seen (with commit)."""
    loo_low: float | None = None
    """The engine's range for this line computed without the row (leave-one-out)."""
    loo_high: float | None = None
    loo_inside: bool | None = None
    pool: str = ""
    """The residual pool the line's model-error band reads: its kind, ``serving-moe`` for the
    serving rows of MoE models (``performance.error_band_kind``)."""
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class ValidationSummary(Record):
    """MAE per use and kind, held-out MAE and leave-one-out coverage (docs/MODEL.md 9)."""

    held_out_mae_pct: float | None = None
    held_out_lines: int = 0
    held_out_rows: int = 0
    held_out_within_tolerance: int = 0
    held_out_loo_inside: int = 0
    held_out_loo_coverage: float | None = None
    held_out_unseen_mae_pct: float | None = None  # held-out rows without ``looked_at``
    held_out_unseen_lines: int = 0
    held_out_unseen_rows: int = 0
    held_out_unseen_loo_inside: int = 0
    held_out_unseen_loo_coverage: float | None = None
    held_out_unseen_mae_by_kind: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    held_out_mae_by_pool: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """pool -> {"mae_pct", "lines", "rows", "within_tolerance"} over the held-out lines."""
    held_out_looked_at_rows: int = 0
    held_out_baseline_mae_pct: float | None = None
    held_out_regression_ok: bool | None = field(default=None, metadata=ABSENT)
    mae_by_use: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """use -> {"mae_pct", "lines", "rows"}."""
    mae_by_kind: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """kind -> {"mae_pct", "lines"}."""
    arithmetic_checks: Mapping[str, Any] = field(default_factory=dict)
    """{"passed", "total"} of the exact topology rows."""
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class ValidationReport(Record):
    """:func:`advisor.engine.tools.validation.validation_report`, typed (the accuracy page)."""

    rows: tuple[ValidationRow, ...] = ()
    summary: ValidationSummary = field(default_factory=ValidationSummary)
    passed: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict, repr=False)


write_record_inits(globals())
