"""Money: network capex and power, GPU cost of the work, idle cost, total cost.

The decision metric is the total cost to finish the work (a training run of
``total_tokens``, or 30 days of serving).  GPUs and network are both long-lived assets, so
the work is charged its time share of the network capex over the same amortization life
as the GPUs (``network_capex_share_usd``); the full ``network_capex_usd`` is what the
customer must find up front and is what ``network_budget_usd`` limits.

Sources and defaults are listed in docs/MODEL.md, section "Cost".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

from advisor.engine.facts.constants import (
    DEFAULT_AMORTIZATION_YEARS,
    DEFAULT_ELECTRICITY_USD_PER_KWH,
    DEFAULT_GPU_HOUR_USD,
    DEFAULT_GPU_PRICING,
    DEFAULT_PUE,
)
from advisor.engine.facts.formatting import significant

HOURS_PER_YEAR: Final = 8766.0
"""365.25 days x 24 h."""
SERVING_DAYS: Final = 30.0
"""A month of serving is the unit of work for inference."""
SERVER_PRICE_FACTOR: Final = 1.35
"""Owned GPU price x this = the GPU's share of a whole server (CPUs, memory, chassis,
local NVMe): an 8-GPU HGX H100 server lists near 8 x $25-30k GPUs x ~1.3-1.4 (estimate)."""
SERVER_POWER_FACTOR: Final = 1.8
"""Server power per GPU / GPU TDP: DGX H100 draws 10.2 kW max with 8 x 700 W GPUs
(NVIDIA DGX H100 user guide), i.e. ~1.8x."""
PRICE_UNCERTAINTY: Final = 0.2
"""Indicative prices are +-20 % (street prices vary with volume and vendor)."""


@dataclass(frozen=True)
class CostInputs:
    """Prices and operating assumptions (the scenario's ``constraints`` plus the GPU; the same
    defaults as :class:`advisor.engine.result.echo.Constraints`)."""

    gpu_pricing: str = DEFAULT_GPU_PRICING
    gpu_hour_usd: float = DEFAULT_GPU_HOUR_USD
    electricity_usd_per_kwh: float = DEFAULT_ELECTRICITY_USD_PER_KWH
    pue: float = DEFAULT_PUE
    amortization_years: float = DEFAULT_AMORTIZATION_YEARS
    gpu_price_usd: float = 30000.0
    gpu_power_w: float = 700.0


def gpu_hour_cost_usd(c: CostInputs) -> float:
    """Cost of one GPU-hour: the cloud rate, or (owned) amortized server share plus power.

    Owned: gpu_price x SERVER_PRICE_FACTOR / (years x 8766 h)
    + gpu_power x SERVER_POWER_FACTOR x PUE x $/kWh.
    """
    if c.gpu_pricing == "cloud":
        return max(0.0, c.gpu_hour_usd)
    capex_per_hour = (
        c.gpu_price_usd * SERVER_PRICE_FACTOR / (max(c.amortization_years, 1e-9) * HOURS_PER_YEAR)
    )
    power_per_hour = (
        c.gpu_power_w / 1000.0 * SERVER_POWER_FACTOR * c.pue * c.electricity_usd_per_kwh
    )
    return max(0.0, capex_per_hour + power_per_hour)


def network_share_usd(c: CostInputs, capex_usd: float, work_hours: float) -> float:
    """The work's time share of the network capex over the amortization life (<= capex)."""
    life_h = max(c.amortization_years, 1e-9) * HOURS_PER_YEAR
    return capex_usd * min(1.0, work_hours / life_h)


def network_power_cost_usd(c: CostInputs, power_w: float, work_hours: float) -> float:
    return power_w / 1000.0 * c.pue * c.electricity_usd_per_kwh * work_hours


class WorkCost:
    """:func:`work_cost`'s figures, unrounded, named as the result's :class:`JobShare` record's
    (the result's ``cost`` and ``cost.job_share`` are them rounded to cents,
    ``pricing.cost_record``): a plain class, since every design priced gets one and a record
    costs three objects and an interpreted ``__init__``."""

    __slots__ = (
        "gpu_cost_usd", "gpu_hours", "idle_cost_usd", "network_capex_share_usd",
        "network_capex_usd", "network_power_cost_usd", "network_power_w", "operations_cost_usd",
        "total_usd", "work", "work_hours",
    )  # fmt: skip

    def __init__(
        self, network_capex_usd: float, network_capex_share_usd: float, network_power_w: float,
        network_power_cost_usd: float, gpu_cost_usd: float, idle_cost_usd: float,
        operations_cost_usd: float, work: str, gpu_hours: float, work_hours: float,
        total_usd: float,
    ) -> None:  # fmt: skip
        self.network_capex_usd = network_capex_usd
        self.network_capex_share_usd = network_capex_share_usd
        self.network_power_w = network_power_w
        self.network_power_cost_usd = network_power_cost_usd
        self.gpu_cost_usd = gpu_cost_usd
        self.idle_cost_usd = idle_cost_usd
        self.operations_cost_usd = operations_cost_usd
        self.work = work
        self.gpu_hours = gpu_hours
        self.work_hours = work_hours
        self.total_usd = total_usd

    def _value(self) -> tuple[object, ...]:
        return (
            self.network_capex_usd,
            self.network_capex_share_usd,
            self.network_power_w,
            self.network_power_cost_usd,
            self.gpu_cost_usd,
            self.idle_cost_usd,
            self.operations_cost_usd,
            self.work,
            self.gpu_hours,
            self.work_hours,
            self.total_usd,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, WorkCost):
            return NotImplemented
        return self._value() == other._value()

    def __hash__(self) -> int:
        return hash(self._value())


def work_cost(
    c: CostInputs,
    *,
    gpus: int,
    work_hours: float,
    idle_fraction: float,
    network_capex_usd: float,
    network_power_w: float,
    work: str,
    operations_usd: float = 0.0,
) -> WorkCost:
    """Total cost of keeping ``gpus`` GPUs and the network busy for ``work_hours``.

    ``idle_fraction`` is the share of GPU time spent waiting on the network; its money is
    ``idle_cost_usd`` (already inside ``gpu_cost_usd``, shown separately).
    ``operations_usd`` (team ramp-up and risk) is added to the total.  Unrounded: the
    result's ``cost`` and ``cost.job_share`` are it rounded to cents
    (:func:`advisor.engine.decision.pricing.cost_record`).
    """
    work_hours = _finite(work_hours)
    idle = min(1.0, max(0.0, _finite(idle_fraction)))
    gpu_hours = gpus * work_hours
    gpu_cost = gpu_hours * gpu_hour_cost_usd(c)
    share = network_share_usd(c, network_capex_usd, work_hours)
    power_cost = network_power_cost_usd(c, network_power_w, work_hours)
    return WorkCost(
        network_capex_usd,
        share,
        network_power_w,
        power_cost,
        gpu_cost,
        gpu_cost * idle,
        max(0.0, _finite(operations_usd)),
        work,
        gpu_hours,
        work_hours,
        share + power_cost + gpu_cost + max(0.0, _finite(operations_usd)),
    )


def training_work(total_tokens: float) -> str:
    return f"training run of {_tokens(total_tokens)} tokens"


def serving_work(days: float = SERVING_DAYS) -> str:
    return f"{days:g} days serving"


def _tokens(n: float) -> str:
    for unit, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6)):
        if n >= scale:
            return f"{significant(n / scale)}{unit}"
    return f"{n:.0f}"


def _finite(x: float) -> float:
    return x if math.isfinite(x) and x > 0 else 0.0
