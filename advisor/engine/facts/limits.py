"""One set of input limits for scenario v1: every count and float has a finite range.

Checked first, before any parsing or planning, by
:func:`advisor.engine.input.scenario.parse_scenario`
(so the API, the questionnaire, sweeps and the CLI all refuse the same inputs with the same
messages), and read by the API's schema and the questionnaire to show the same bounds.

Why ranges at all: the planner's work grows with the numbers it is given (GPU counts,
parallel degrees), and floats such as ``1e308`` or ``1e-300`` pass a "positive number" check
but overflow or underflow inside the engine. Each bound is a round number well beyond any
cluster or price seen in practice (docs/MODEL.md, "Input limits", says where each comes from);
a value outside it is a typo or an attack, and is refused in milliseconds naming the field.

Every number anywhere in the inputs, including fields without an entry here, must also be
finite and at most :data:`ANY_NUMBER_MAX` in magnitude.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from advisor.engine.errors import ScenarioError

GPUS_MAX = 131_072
"""Largest job: 2**17 GPUs (the largest published training clusters are ~100k GPUs)."""

ANY_NUMBER_MAX = 1e15
"""No number in a scenario may exceed this in magnitude (the largest limit below)."""

MAX_DEPTH = 8
"""Scenario v1 nests at most three levels (``model``, ``training``...); deeper is refused."""


@dataclass(frozen=True)
class Limit:
    """A closed range ``[low, high]``; ``integer`` fields are counts."""

    low: float
    high: float
    integer: bool
    unit: str = ""

    def describe(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        return f">= {_fmt(self.low)} and <= {_fmt(self.high)}{unit}"

    def refuses(self, value: float) -> bool:
        """Above the range, or a positive value below it (1e-300 Gb/s).

        Zero and negative values are left to the parser, whose message names its own rule
        ("must be a positive integer"); they cannot make the engine work harder.
        """
        return value > self.high or (0 < value < self.low)


def _fmt(value: float) -> str:
    if float(value).is_integer() and abs(value) < 1e7:
        return f"{int(value):,}"
    return f"{value:g}"


# Dotted path in scenario v1 -> its range. docs/MODEL.md ("Input limits") gives the reasons.
LIMITS: dict[str, Limit] = {
    "gpus": Limit(1, GPUS_MAX, integer=True, unit="GPUs"),
    "gpus_per_node": Limit(1, 576, integer=True, unit="GPUs per server"),
    "sequence_length": Limit(1, 2_097_152, integer=True, unit="tokens"),
    # Custom model
    "model.params_b": Limit(0.001, 100_000, integer=False, unit="billion parameters"),
    "model.active_params_b": Limit(0.001, 100_000, integer=False, unit="billion parameters"),
    "model.layers": Limit(1, 4_096, integer=True),
    "model.hidden": Limit(1, 1_048_576, integer=True),
    "model.heads": Limit(1, 65_536, integer=True),
    "model.kv_heads": Limit(1, 65_536, integer=True),
    "model.vocab": Limit(1, 16_777_216, integer=True, unit="tokens"),
    "model.ffn_hidden": Limit(1, 4_194_304, integer=True),
    "model.moe_experts": Limit(0, 65_536, integer=True),
    "model.moe_top_k": Limit(0, 1_024, integer=True),
    # Training
    "training.global_batch_sequences": Limit(1, 16_777_216, integer=True, unit="sequences"),
    "training.global_batch_tokens": Limit(1, 1_073_741_824, integer=True, unit="tokens"),
    "training.total_tokens": Limit(1, 1e15, integer=False, unit="tokens"),
    # Inference
    "inference.concurrent_requests": Limit(1, 1_048_576, integer=True, unit="requests"),
    "inference.prompt_tokens": Limit(1, 2_097_152, integer=True, unit="tokens"),
    "inference.output_tokens": Limit(1, 2_097_152, integer=True, unit="tokens"),
    "inference.target_ms_per_token": Limit(0.01, 60_000, integer=False, unit="ms"),
    # Serving load, targets and pools (advisor.engine.model.serving.load)
    "inference.requests_per_s": Limit(1e-6, 10_000_000, integer=False, unit="requests/s"),
    "inference.target_ttft_ms": Limit(0.01, 3_600_000, integer=False, unit="ms"),
    "inference.prefix_cache_hit_rate": Limit(0, 1, integer=False),
    "inference.mtp": Limit(0, 1, integer=False, unit="(acceptance rate)"),
    "rag.top_k": Limit(1, 1_000, integer=True, unit="chunks"),
    "rag.chunk_tokens": Limit(1, 1_048_576, integer=True, unit="tokens"),
    "rag.embedding_dims": Limit(1, 65_536, integer=True, unit="dimensions"),
    "rag.corpus_chunks": Limit(1, 1e12, integer=True, unit="chunks"),
    "rag.embedding_servers": Limit(1, 100_000, integer=True, unit="servers"),
    "rag.vector_search_servers": Limit(1, 100_000, integer=True, unit="servers"),
    "inference.pools.prefill.servers": Limit(1, GPUS_MAX, integer=True, unit="servers"),
    "inference.pools.decode.servers": Limit(1, GPUS_MAX, integer=True, unit="servers"),
    "inference.pools.prefill.tp": Limit(1, 576, integer=True),
    "inference.pools.decode.tp": Limit(1, 576, integer=True),
    "inference.pools.prefill.ep": Limit(1, GPUS_MAX, integer=True),
    "inference.pools.decode.ep": Limit(1, GPUS_MAX, integer=True),
    # An explicit parallel plan
    "parallelism.tp": Limit(1, GPUS_MAX, integer=True),
    "parallelism.pp": Limit(1, GPUS_MAX, integer=True),
    "parallelism.dp": Limit(1, GPUS_MAX, integer=True),
    "parallelism.ep": Limit(1, GPUS_MAX, integer=True),
    "parallelism.cp": Limit(1, GPUS_MAX, integer=True),
    "parallelism.first_stage_layers": Limit(1, 4_096, integer=True, unit="layers"),
    "parallelism.last_stage_layers": Limit(1, 4_096, integer=True, unit="layers"),
    "parallelism.micro_batch": Limit(1, 65_536, integer=True, unit="sequences"),
    "parallelism.virtual_stages": Limit(1, 1_024, integer=True),
    "parallelism.dp_bucket_params": Limit(1_000_000, 1e13, integer=True, unit="parameters"),
    # A fixed design
    "design.nic_gbps": Limit(1, 3_200, integer=False, unit="Gb/s"),
    "design.nics_per_node": Limit(1, 32, integer=True, unit="NICs per server"),
    "design.oversubscription": Limit(1, 16, integer=False, unit="(r of r:1)"),
    # Money and site
    "constraints.gpu_hour_usd": Limit(0, 1_000, integer=False, unit="USD per GPU-hour"),
    "constraints.electricity_usd_per_kwh": Limit(0, 10, integer=False, unit="USD per kWh"),
    "constraints.pue": Limit(1, 5, integer=False),
    "constraints.amortization_years": Limit(0.1, 30, integer=False, unit="years"),
    "constraints.network_budget_usd": Limit(1, 1e12, integer=False, unit="USD"),
    "constraints.storage_write_gbytes_per_s": Limit(0.1, 1e6, integer=False, unit="GB/s"),
}


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _finite(value: int | float) -> bool:
    # math.isfinite(10**400) raises OverflowError: a Python int is always finite.
    return isinstance(value, int) or math.isfinite(value)


def _lookup(raw: dict[str, Any], path: str) -> tuple[bool, Any]:
    node: Any = raw
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return False, None
        node = node[part]
    return True, node


def _walk_numbers(
    node: Any, path: str, depth: int, errors: dict[str, list[str]], seen: set[str]
) -> None:
    """Every number at any depth: finite and within ANY_NUMBER_MAX (iterative depth cap)."""
    if depth > MAX_DEPTH:
        errors.setdefault(path or "inputs", []).append(f"is nested more than {MAX_DEPTH} deep")
        return
    if isinstance(node, dict):
        for key, value in node.items():
            _walk_numbers(value, f"{path}.{key}" if path else str(key), depth + 1, errors, seen)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            _walk_numbers(value, f"{path}.{index}" if path else str(index), depth + 1, errors, seen)
    elif is_number(node) and path not in seen:
        if not _finite(node):
            errors.setdefault(path, []).append("must be a finite number")
        elif abs(node) > ANY_NUMBER_MAX:
            errors.setdefault(path, []).append(f"must be at most {ANY_NUMBER_MAX:g} in magnitude")


def limit_errors(raw: Any) -> dict[str, list[str]]:
    """Field errors for numbers outside their range; {} when every number is within.

    Values that are not numbers are left to the parser, which names the type it wants.
    """
    errors: dict[str, list[str]] = {}
    if not isinstance(raw, dict):
        return errors
    checked: set[str] = set()
    for path, limit in LIMITS.items():
        found, value = _lookup(raw, path)
        if not found or not is_number(value):
            continue
        checked.add(path)
        if not _finite(value):
            errors.setdefault(path, []).append(f"must be a finite number {limit.describe()}")
        elif limit.refuses(value) or value < -ANY_NUMBER_MAX:
            errors.setdefault(path, []).append(f"must be {limit.describe()}")
    _walk_numbers(raw, "", 0, errors, checked)
    return errors


def without_paths(raw: dict[str, Any], paths: set[str] | dict[str, Any]) -> dict[str, Any]:
    """A copy of `raw` without the values at these dotted paths (the rest left as it is)."""
    out = dict(raw)
    for path in paths:
        parts = path.split(".")
        node: Any = out
        parents: list[Any] = []
        for part in parts[:-1]:
            child = node.get(part) if isinstance(node, dict) else None
            if not isinstance(child, dict):
                node = None
                break
            child = dict(child)
            node[part] = child
            parents.append(node)
            node = child
        if isinstance(node, dict):
            node.pop(parts[-1], None)
    return out


def check_limits(raw: Any, parse: Callable[[dict[str, Any]], object] | None = None) -> None:
    """Raise :class:`~advisor.engine.errors.ScenarioError` naming every out-of-range number.

    With `parse` (the scenario parser), the error also lists the other fields' problems, found
    by parsing the inputs without the out-of-range values, so one answer names every problem.
    """
    problems = limit_errors(raw)
    if not problems:
        return
    if parse is not None and isinstance(raw, dict):
        cleaned = without_paths(raw, problems)
        if not limit_errors(cleaned):
            try:
                parse(cleaned)
            except ScenarioError as exc:
                others = {k: v for k, v in exc.field_errors.items() if k not in problems}
                raise ScenarioError({**problems, **others}) from None
    raise ScenarioError(problems)
