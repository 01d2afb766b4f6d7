"""The recommendation's assumptions, each with its value and source (result ``assumptions``)."""

from __future__ import annotations

from typing import Any

from advisor.engine.decision.bom import STORAGE_OVERSUBSCRIPTION, STORAGE_TARGET_RATIO, StoragePlan
from advisor.engine.decision.cost import (
    PRICE_UNCERTAINTY,
    SERVER_POWER_FACTOR,
    SERVER_PRICE_FACTOR,
    SERVING_DAYS,
    gpu_hour_cost_usd,
)
from advisor.engine.decision.job_facts import JobFacts
from advisor.engine.decision.policy import TIE_BAND, TIE_RULE
from advisor.engine.decision.pricing import RAMP_UP_MONTHS
from advisor.engine.facts.catalog.gpus import ASSUMED_PCIE_GEN
from advisor.engine.model.topology import (
    DAC_MAX_REACH_M,
    ROW_LINK_M,
    SERVERS_PER_RACK,
    SPINE_LINK_M,
)
from advisor.engine.result.records import Assumption


def assumptions(facts: JobFacts, storage: StoragePlan) -> list[Assumption]:
    costs = facts.costs
    platform = facts.platform
    items: list[tuple[str, Any, str, str]] = [
        (
            "gpu_hour_cost",
            round(gpu_hour_cost_usd(costs), 4),
            "USD/GPU-hour",
            "cloud rate from constraints.gpu_hour_usd (or the GPU's catalog cloud price)"
            if costs.gpu_pricing == "cloud"
            else "owned: GPU catalog price x server factor / amortization life + power x PUE",
        ),
        ("gpu_pricing", costs.gpu_pricing, "", "constraints.gpu_pricing"),
        ("amortization_years", costs.amortization_years, "years", "constraints.amortization_years"),
        (
            "utilization",
            facts.utilization,
            "",
            "constraints.utilization: share of the life the cluster runs work (prices the GPU "
            "time a network wastes over the life)",
        ),
        ("pue", costs.pue, "", "constraints.pue"),
        (
            "electricity",
            costs.electricity_usd_per_kwh,
            "USD/kWh",
            "constraints.electricity_usd_per_kwh",
        ),
        ("server_price_factor", SERVER_PRICE_FACTOR, "x GPU price", "estimate, docs/MODEL.md Cost"),
        (
            "server_power_factor",
            SERVER_POWER_FACTOR,
            "x GPU TDP",
            "DGX H100 10.2 kW for 8 x 700 W GPUs (NVIDIA DGX H100 user guide)",
        ),
        (
            "network_prices",
            "indicative street prices",
            "USD",
            f"catalog estimates, +-{PRICE_UNCERTAINTY * 100:.0f}% (editable in the catalog)",
        ),
        (
            "tie_band",
            TIE_BAND,
            "",
            TIE_RULE,
        ),
        (
            "host_pcie_gen",
            platform.pcie_gen,
            "",
            "GPU platform facts (catalog)"
            if platform.pcie_known
            else f"not set for the {platform.gpu_name} in the catalog: Gen{ASSUMED_PCIE_GEN} "
            "assumed; set it in the hardware admin",
        ),
        (
            "reference_compute_nic",
            f"{platform.reference_count} x "
            + (platform.reference_nic.display_name if platform.reference_nic else "unknown")
            + (" (integrated)" if platform.integrated else ""),
            "per server",
            platform.reference_design,
        ),
        ("servers_per_rack", SERVERS_PER_RACK, "servers", "8-GPU HGX/DGX servers per ~40 kW rack"),
        ("dac_reach", DAC_MAX_REACH_M, "m", "passive copper reach at 100-400G (vendor specs)"),
        ("server_to_leaf_length", ROW_LINK_M, "m", "rail-optimized leaves in a row rack"),
        ("switch_to_switch_length", SPINE_LINK_M, "m", "SuperPOD RA: SR optics, 50 m on OM4"),
        (
            "storage_network",
            f"{storage.ports_per_server} x {storage.gbps}G per server "
            f"({storage.nic.display_name}), "
            f"{STORAGE_OVERSUBSCRIPTION:g}:1, storage targets at 1/{STORAGE_TARGET_RATIO:g} of "
            "the servers' storage ports",
            "",
            f"{platform.storage.standing} (GPU catalog); separate storage network "
            "(DGX SuperPOD RA)",
        ),
        (
            "management_network",
            "1 GbE out-of-band per server and switch, 100G aggregation",
            "",
            "DGX SuperPOD RA out-of-band management network",
        ),
        (
            "decision_cost",
            "network life cost: capex + power + GPU time wasted + operations",
            "",
            "docs/MODEL.md Decision cost; the job's share is shown as cost.job_share",
        ),
        (
            "team_skills",
            facts.team_skills,
            "",
            f"ramp-up + risk premium over the first {RAMP_UP_MONTHS:g} months: engineering "
            "estimates (docs/MODEL.md)",
        ),
        ("prefer", facts.prefer, "", "constraints.prefer"),
        ("allow_oversubscription", facts.allow_oversubscription, "", "constraints"),
    ]
    if facts.inference:
        items.append(("serving_period", SERVING_DAYS, "days", "one month of serving"))
    else:
        items.append(("total_tokens", facts.total_tokens, "tokens", "training.total_tokens"))
    return [
        Assumption(name=name, value=value, unit=unit, source=src)
        for name, value, unit, src in items
    ]
