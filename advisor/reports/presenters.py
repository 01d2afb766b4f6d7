"""The engine's result arranged for people: headline facts first, details after.

Shared by the results page, the comparison page, and the PDF report, so that all three say
the same thing in the same words.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from advisor.engine.facts.catalog import default_catalog
from advisor.engine.facts.formatting import (
    duration,
    first_token,
    milliseconds,
    percent,
    significant,
    usd_cents,
    usd_compact,
    usd_whole,
)
from advisor.engine.facts.numbers import finite
from advisor.engine.facts.vocabulary import (
    NETWORK_LABELS,
    TEAM_SKILLS,
    bom_role_label,
    fabric_label,
    network_label,
    scale_up_domain,
    scale_up_label,
    topology_label,
)
from advisor.engine.input.scenario import default_global_batch_tokens
from advisor.engine.model.performance import (
    MOE_SERVING_KIND,
    NUMBER_FORMAT_ASSUMPTION,
    RELEASE_FORMAT,
    SHIPPED_FORMAT,
    error_band_kind,
)
from advisor.engine.model.serving.known_limits import large_batch_caution
from advisor.engine.result.echo import (
    Constraints,
    CustomModel,
    InferenceInput,
    ScenarioEcho,
    TrainingInput,
)
from advisor.engine.result.records import (
    BomLine,
    Cost,
    EngineResult,
    Option,
    RagAnswer,
    Recommendation,
)


def topology_text(rec: Recommendation) -> str:
    if not rec.needs_compute_fabric:
        return "no compute fabric (front-end Ethernet only)"
    topo = rec.topology
    name = topology_label(topo.to_dict())
    parts = [name]
    if name != "single switch":
        if topo.rail_optimized:
            parts.append("rail-optimized")
        over = finite(topo.oversubscription, 1.0)
        parts.append(f"{over:g}:1" + (" non-blocking" if over == 1 else " oversubscribed"))
    return ", ".join(p for p in parts if p)


def is_inference(result: EngineResult) -> bool:
    return result.is_inference


def option_label(option: Option) -> str:
    """An option in a few words: "RoCE v2 8×400G 2:1"."""
    label = fabric_label(option.fabric)
    gbps = finite(option.nic_gbps)
    if option.nics_per_node and gbps:
        label += f" {option.nics_per_node}×{gbps:g}G"
    over = finite(option.oversubscription, 1.0)
    if over and over != 1:
        label += f" {over:g}:1"
    return label


@dataclass
class Fact:
    key: str
    value: str
    sub: str = ""


@functools.cache
def _catalog_parts() -> dict[str, tuple[str, str]]:
    """Catalog id -> (description, part number) of the built-in catalog's network parts."""
    catalog = default_catalog()
    items = [*catalog.nics, *catalog.switches, *catalog.transceivers, *catalog.cables]
    return {item.sku: (item.description, item.part_number) for item in items}


def part_label(sku: str) -> str:
    """A switch or NIC named in a table: its catalog description (and part number), never
    its catalog id; "" for no part."""
    if not sku:
        return ""
    description, number = _catalog_parts().get(sku, ("", ""))
    if not description:
        return "another catalog part"
    return f"{description} ({number})" if number else description


def part_description(sku: str) -> str:
    """A switch or NIC named in a picture's label: its catalog description only (a table's
    :func:`part_label` adds the part number)."""
    return part_label(sku).split(" (")[0]


def line_part_number(line: BomLine) -> str:
    """A BOM line's orderable part number (a result stored before lines carried one: the
    catalog's, by its id); "–" when the part is a class of products with none."""
    return line.part_number or _catalog_parts().get(line.sku, ("", ""))[1] or "–"


def line_description(line: BomLine) -> str:
    """A BOM line's part as customers read it: the catalog's description, never the line's
    role (results stored before the role was its own field wrote it into the text, e.g.
    "... (64x400G / 128x200G) (leaf)": those read the catalog's description again)."""
    known = _catalog_parts().get(line.sku, ("", ""))[0]
    if (
        known
        and line.description.startswith(known)
        and LEGACY_ROLE.fullmatch(line.description[len(known) :])
    ):
        return known
    return line.description


LEGACY_ROLE = re.compile(r"(?: \([a-z /-]+\))?")
"""What a stored line's description may add to the catalog's and be read without: nothing, or
the role it once carried (" (leaf)"); a platform's own NIC keeps its ", on the platform's own
boards" (:meth:`Nic.on_board`)."""


@dataclass(frozen=True)
class BomRow:
    """One BOM line as a table shows it: part number, description, what it is for."""

    part_number: str
    description: str
    role: str
    """What the line is for, in words ("Leaf switch"); "" when the result does not say."""
    category: str
    quantity: int
    unit_price_usd: float
    extended_price_usd: float
    power_w: float
    source: str

    @classmethod
    def of(cls, line: BomLine) -> BomRow:
        return cls(
            part_number=line_part_number(line),
            description=line_description(line),
            role=bom_role_label(line.role) if line.role else "",
            category=line.category,
            quantity=line.quantity,
            unit_price_usd=finite(line.unit_price_usd),
            extended_price_usd=finite(line.extended_price_usd),
            power_w=finite(line.power_w),
            source=line.source,
        )


def part_name(result: EngineResult, sku: str) -> str:
    """A catalog part in customer words: its description and orderable part number from the
    result's BOM ("NVIDIA ConnectX-7 ... (MCX75310AAS-NEAT)"); never the catalog's id."""
    if not sku:
        return ""
    for line in result.bom:
        if line.sku == sku:
            if line.part_number:
                return f"{line.description} ({line.part_number})"
            return line.description
    return part_label(sku)


def _retrieval_fact(rag: RagAnswer) -> Fact:
    """A RAG pipeline's retrieval tiers in the headline's facts: servers, ports, the part."""
    servers = " + ".join(f"{t.servers:,}" for t in rag.tiers if t.role != "generation")
    net = rag.network
    return Fact(
        "Retrieval tiers (RAG)",
        f"{servers} servers · {net.ports_per_server} × {net.port_gbps}G",
        f"{net.nic_name} ({net.nic_part_number}), embedding + vector search",
    )


def headline(result: EngineResult) -> dict[str, Any]:
    """The answer in one line plus the handful of numbers that back it."""
    rec = result.recommendation
    cost = result.cost
    metrics = result.metrics
    needs_fabric = rec.needs_compute_fabric
    fabric = fabric_label(rec.fabric)
    nics = int(finite(rec.nics_per_node))
    gbps = finite(rec.nic_gbps)
    topo = topology_text(rec)
    capex = usd_compact(cost.network_capex_usd)
    if needs_fabric:
        title = f"{fabric} · {nics} × {gbps:g} Gb/s NICs per server · {topo} · network {capex}"
    else:
        title = f"No compute fabric needed · standard Ethernet · network {capex}"
    if result.rag is not None:
        title = f"RAG pipeline · {title}"
    if needs_fabric:
        facts = [
            Fact(
                "NICs per server",
                f"{nics} × {gbps:g}G" if nics else "—",
                part_name(result, rec.nic_sku),
            ),
            Fact("Topology", topo.split(",")[0] if topo else "—", ", ".join(topo.split(", ")[1:])),
        ]
    else:
        facts = [
            Fact(
                "Front-end NICs",
                f"{nics} × {gbps:g}G" if nics else "—",
                part_name(result, rec.nic_sku),
            ),
            Fact("Compute fabric", "None", _talk(result)),
        ]
    if result.rag is not None:
        facts.append(_retrieval_fact(result.rag))
    costs = cost_figures(cost)
    facts.append(Fact(COST_LABELS["capex"], capex, "NICs, switches, optics, cables"))
    if is_inference(result):
        first = f"first token {first_token(metrics.ttft_ms)}"
        if result.rag is not None and result.rag.first_token_ms is not None:
            first += f", {first_token(result.rag.first_token_ms)} with retrieval"
        facts.append(Fact("Per token", milliseconds(metrics.ms_per_token), first))
        if metrics.max_requests_per_s_at_target is not None:
            facts.append(
                Fact(
                    "Within the latency targets",
                    f"{significant(metrics.max_requests_per_s_at_target)} requests/s",
                    f"{finite(metrics.tokens_per_s_per_gpu_at_target):,.0f} tokens/s per GPU",
                )
            )
    else:
        facts.append(
            Fact(
                "Step time",
                duration(metrics.step_time_s),
                f"{percent(metrics.scaling_efficiency, digits=0)} scaling efficiency",
            )
        )
    load = _load_fact(result) if is_inference(result) else None
    if load is not None:
        facts.append(load)
    if needs_fabric or load is None:
        # an answer without a compute fabric never waits on one: its load says more
        facts.append(
            Fact(
                "GPUs idle on the network",
                percent(metrics.gpu_idle_fraction, digits=1),
                f"{usd_compact(cost.idle_cost_usd)} of GPU time",
            )
        )
    for key in ("life", "job"):
        row = costs["by_key"].get(key)
        if row:
            facts.append(Fact(row["label"], row["value"], row["note"]))
    found = warnings(result)
    warning = next((w["text"] for w in found if w["kind"] == "latency"), "")
    return {
        "title": title,
        "warning": warning,
        "warnings": found,
        "costs": costs,
        "sentence": rec.headline,
        "facts": facts,
        "fact_columns": fact_columns(len(facts)),
        "eyebrow": eyebrow(result),
        "servers": int(finite(result.workload.nodes)),
    }


def fact_columns(count: int) -> int:
    """Columns of the first screen's facts on a wide screen: one row of up to six, more in two
    balanced rows (eight as 4 + 4, where filling a row left one card alone under seven)."""
    return count if count <= 6 else math.ceil(count / 2)


def asked_rate(result: EngineResult) -> float | None:
    """The arrival rate a serving scenario asks for (requests/s); None for a closed loop of
    users (requests in flight) or a training answer: the first screen's load fact, the word
    above the headline and the serving chart's line read it here."""
    inference = result.scenario.inference
    return inference.requests_per_s if inference is not None else None


def eyebrow(result: EngineResult) -> str:
    """The word above the headline.  "Good news" said of a fleet that serves a third of its ask
    (no compute fabric needed, but the GPUs are too few) read as a clean bill of health."""
    if is_inference(result):
        metrics = result.metrics
        asked = asked_rate(result)
        if asked is not None and (
            metrics.load_saturated or finite(metrics.max_requests_per_s_at_target) < asked
        ):
            return "Short of the asked load"
        if metrics.meets_latency_targets is False:  # as the headline's shortfall reads it
            return "Misses a latency target"
    return "Our recommendation" if result.recommendation.needs_compute_fabric else "Good news"


def _mid_sentence(label: str) -> str:
    """A label as it reads inside a sentence: "Storage network" -> "storage network", while
    an acronym stays as written ("GPU compute fabric")."""
    first = label.split(" ", 1)[0]
    return label if first.isupper() else label[:1].lower() + label[1:]


def bom_groups(result: EngineResult) -> list[dict[str, Any]]:
    """BOM lines grouped by network, each group with its subtotal; every line as a
    :class:`BomRow` (orderable part number, "–" for none; description; role)."""
    groups: dict[str, list[BomRow]] = {}
    for line in result.bom:
        groups.setdefault(line.network or "compute", []).append(BomRow.of(line))
    order = [k for k in NETWORK_LABELS if k in groups] + [
        k for k in groups if k not in NETWORK_LABELS
    ]
    return [
        {
            "network": key,
            "label": network_label(key),
            "subtotal_label": f"Subtotal, {_mid_sentence(network_label(key))}",
            "lines": groups[key],
            "subtotal": sum(finite(line.extended_price_usd) for line in groups[key]),
            # The engine's power_w on a BOM line is the whole line's (quantity included).
            "power_w": sum(finite(line.power_w) for line in groups[key]),
        }
        for key in order
    ]


def bom_total(result: EngineResult) -> float:
    return sum(finite(line.extended_price_usd) for line in result.bom)


def options_rows(result: EngineResult, limit: int | None = None) -> list[dict[str, Any]]:
    """The candidates by rank (the first `limit` of them), in words."""
    inference = is_inference(result)
    rows = []
    ranked = sorted(result.options, key=lambda o: finite(o.rank, 1e9))
    for option in ranked[:limit]:
        m = option.metrics
        c = option.cost
        rows.append(
            {
                "rank": option.rank,
                "label": option_label(option),
                "parts": "; ".join(
                    part
                    for part in (part_label(option.nic_sku), part_label(option.switch_model))
                    if part
                ),
                "speed": (
                    f"{significant(finite(m.ms_per_token), 3)} ms/token"
                    if inference
                    else duration(m.step_time_s)
                ),
                "idle": percent(m.gpu_idle_fraction, digits=1),
                "capex": usd_compact(c.network_capex_usd),
                "total": usd_compact(job_cost(c)),
                "life": _life_value(c),
                "recommended": option.recommended,
                "feasible": option.feasible,
                "why_not": plain_sentence(option.why_not or ""),
            }
        )
    return rows


def _life_value(cost: Cost) -> str:
    life = cost_figures(cost)["by_key"].get("life")
    return str(life["value"]) if life else ""


# ------------------------------------------------------------------ accuracy, in words

KIND_LABELS = {
    "collective": "Collective bandwidth",
    "all_to_all": "All-to-all (MoE) latency and bandwidth",
    "training": "Training throughput",
    "topology": "Topology switch counts",
    "serving": "Serving throughput and time per token",
}


def kind_label(kind: str) -> str:
    """The label of a validation row's kind ("all_to_all" -> "All-to-all (MoE) latency and
    bandwidth"); an unknown kind in words."""
    return KIND_LABELS.get(kind, kind.replace("_", " "))


POOL_LABELS = {
    "serving": "Serving throughput and time per token, dense models",
    MOE_SERVING_KIND: "Serving throughput and time per token, mixture-of-experts models",
}
"""Residual pools whose label is not their kind's: serving answers of MoE models keep their own
(``performance.error_band_kind``)."""


def pool_label(pool: str) -> str:
    """The label of a validation line's residual pool (its kind's, but serving split by dense and
    mixture-of-experts models)."""
    return POOL_LABELS.get(pool) or kind_label(pool)


def family_accuracy_figures(result: EngineResult) -> dict[str, Any] | None:
    """The held-out accuracy of the family of predictions an answer's range is read from
    (``performance.error_band_kind``: training, or serving with MoE models apart), over the
    published measurements no constant was set on (docs/MODEL.md 9.1): ``{"family", "family_label",
    "held_out_mae_pct", "held_out_measurements", "within_tolerance", "caution", "statement"}``;
    None without any. ``caution``: :func:`capacity_caution`. The page, the PDF and the API give
    these words and figures."""
    # read on first use: the report of every published row, built once per process
    from advisor.engine.tools.validation import held_out_pools

    kind = "serving" if result.is_inference else "training"
    pool = error_band_kind(kind, finite(result.workload.model.moe_experts) > 0)
    entry = held_out_pools().get(pool)
    if not entry or entry.get("mae_pct") is None:
        return None
    label = pool_label(pool)
    mae = float(entry["mae_pct"])
    statement = (
        f"Against {entry['lines']} published measurements it was never fitted to "
        f"({label[0].lower()}{label[1:]}), the advisor's figures are off by "
        f"{significant(mae, 2)} % on average; {entry['within_tolerance']} of them fall within "
        "tolerance."
    )
    return {
        "family": pool,
        "family_label": label,
        "held_out_mae_pct": round(mae, 2),
        "held_out_measurements": int(entry["lines"]),
        "within_tolerance": int(entry["within_tolerance"]),
        "caution": capacity_caution(result),
        "statement": statement,
    }


def capacity_caution(result: EngineResult) -> str | None:
    """A serving answer's caution where its capacity within the targets falls in a regime the
    published runs measure well below the model (``serving.known_limits``): shown with the
    warnings on the page and in the PDF, and as ``accuracy.caution`` in the API; None
    elsewhere."""
    if not result.is_inference:
        return None
    model = result.workload.model
    return large_batch_caution(
        str(model.name or model.id or "This model"),
        finite(model.moe_experts) > 0,
        finite(model.active_params_b) * 1e9,
        result.metrics.decode_batch_per_gpu_at_target,
    )


def family_accuracy(result: EngineResult) -> str:
    """:func:`family_accuracy_figures`' statement ("" without one)."""
    figures = family_accuracy_figures(result)
    return str(figures["statement"]) if figures else ""


def uncertainty_rows(result: EngineResult) -> list[dict[str, str]]:
    rows = []
    names: dict[str, tuple[str, Callable[[Any], str]]] = {
        "step_time_s": ("Step time", duration),
        "ms_per_token": ("Time per token", milliseconds),
        "total_cost_usd": (COST_LABELS["job"], usd_compact),
        "decision_cost_usd": (COST_LABELS["life"], usd_compact),
    }
    for key, band in result.uncertainty.bands():
        label, fmt = names.get(key, (key.replace("_", " "), significant))
        rows.append({"label": label, "low": fmt(band.low), "high": fmt(band.high)})
    return rows


def scale_up_words(result: EngineResult) -> tuple[str, str]:
    """(the links, where they reach) of a result's GPUs as a customer says them:
    ("NVLink", "each server"), ("NVLink", "the 72-GPU NVLink domain") on one GB200 / GB300
    rack, ("Infinity Fabric", "the server") on one AMD server: the first screen and the
    topology picture of an answer without a compute fabric name the platform's own links (they
    said "NVLink / PCIe" and "inside the server" whatever the platform)."""
    gpu_id = str(result.scenario.gpu or "")
    gpu = default_catalog().gpu(gpu_id) if gpu_id else None
    links = scale_up_label(gpu.scaleup_kind) if gpu is not None else "scale-up links"
    workload = result.workload
    per_server = int(workload.gpus_per_node or 0)
    domain = int(workload.scaleup_domain_gpus or 0)
    gpus = int(workload.nodes or 0) * per_server
    if domain > per_server > 0:
        return links, f"{'each' if gpus > domain else 'the'} {scale_up_domain(domain, per_server)}"
    return links, "each server" if int(workload.nodes or 0) > 1 else "the server"


def _load_fact(result: EngineResult) -> Fact | None:
    """The first screen's load of a serving answer: an open loop's "Asked load", the asked rate
    against what the fleet serves within both p95 targets (the headline's shortfall and the
    rationale's headroom in one figure), or a closed loop's :func:`_users_fact`."""
    asked = asked_rate(result)
    if asked is None:
        return _users_fact(result)
    metrics = result.metrics
    at_target = finite(metrics.max_requests_per_s_at_target)
    if metrics.load_saturated:
        served = significant(finite(metrics.requests_per_s))
        sub = f"serves {served} of the {significant(asked)} requests/s asked"
        return Fact("Asked load", "over capacity", sub)
    return Fact(
        "Asked load", f"{significant(asked)} requests/s", _against_targets(asked, at_target)
    )


def _against_targets(rate: float, at_target: float) -> str:
    """A load's rate against what the fleet serves within both p95 targets, in words."""
    if at_target <= 0:
        return "no load meets the targets"
    if rate <= at_target:
        return f"{percent(rate / at_target, digits=0)} of what it serves within the targets"
    return f"{significant(at_target)} within the targets: over them"


def _users_fact(result: EngineResult) -> Fact | None:
    """A closed loop's "Users at once": the requests per second its users send against what
    the fleet serves within both p95 targets (the open loop's "Asked load" for users, whose
    wait is in the first token beside it); None without users."""
    inference = result.scenario.inference
    users = inference.concurrent_requests if inference is not None else None
    if not users:
        return None
    metrics = result.metrics
    sent = finite(metrics.requests_per_s)
    against = (
        "at capacity"
        if metrics.load_saturated
        else _against_targets(sent, finite(metrics.max_requests_per_s_at_target))
    )
    return Fact("Users at once", f"{users:,}", f"{significant(sent)} requests/s, {against}")


def _talk(result: EngineResult) -> str:
    links, where = scale_up_words(result)
    return f"GPUs talk over {links} inside {where}"


def _gpu_name(gpu_id: str) -> str:
    gpu = default_catalog().gpu(gpu_id) if gpu_id else None
    return gpu.name if gpu is not None else "GPU"


def key_metrics(result: EngineResult) -> list[tuple[str, str]]:
    """Rows for the side-by-side comparison."""
    rec = result.recommendation
    metrics = result.metrics
    cost = result.cost
    scenario = result.scenario
    workload = result.workload
    model = scenario.model
    model_name = workload.model.name or (model if isinstance(model, str) else "custom")
    rows = [
        ("Workload", workload_words(scenario.workload)),
        ("Model", model_name),
        ("GPUs", f"{scenario.gpus or '—'} × {_gpu_name(str(scenario.gpu or ''))}"),
        ("Servers", str(workload.nodes or "—")),
        (
            "Fabric",
            fabric_label(rec.fabric) if rec.needs_compute_fabric else "none needed (Ethernet)",
        ),
        ("NICs per server", f"{rec.nics_per_node or '—'} × {finite(rec.nic_gbps):g}G"),
        ("Topology", topology_text(rec)),
        (COST_LABELS["capex"], usd_compact(cost.network_capex_usd)),
    ]
    if is_inference(result):
        rows.append(("Time per token", milliseconds(metrics.ms_per_token)))
        if metrics.max_requests_per_s_at_target is not None:
            rows.append(
                (
                    "Requests/s within targets",
                    significant(metrics.max_requests_per_s_at_target),
                )
            )
            rows.append(
                (
                    "Tokens/s per GPU within targets",
                    f"{finite(metrics.tokens_per_s_per_gpu_at_target):,.0f}",
                )
            )
        load = _load_fact(result)
        if load is not None:
            rows.append((load.key, f"{load.value}: {load.sub}"))
    else:
        rows.append(("Step time", duration(metrics.step_time_s)))
        rows.append(("Scaling efficiency", percent(metrics.scaling_efficiency, digits=0)))
    rows += [
        ("GPUs idle on network", percent(metrics.gpu_idle_fraction, digits=1)),
        ("Idle GPU cost", usd_compact(cost.idle_cost_usd)),
    ]
    for row in cost_figures(cost)["rows"][1:]:
        rows.append((row["label"], row["value"]))
    return rows


# ---------------------------------------------------------------------------------------------
# Costs, each labelled: what the network costs to buy, what the cluster costs over its life,
# and what this job is charged: cost.life and cost.job_share of the typed result
# (advisor/engine/result/records.py); results stored before job_share charge the job total_cost_usd.

COST_LABELS = {
    "capex": "Network capex",
    "life": "Network cost over the cluster's life",
    "job": "Share charged to this job",
}


def cost_figures(cost: Cost | None) -> dict[str, Any]:
    """The three costs a reader needs, with their labels and what each one covers:
    network capex, the network's cost over the cluster's life (cost.life.total_usd) and the share
    charged to this job (cost.job_share.total_usd; total_cost_usd in older results)."""
    cost = cost if cost is not None else Cost()
    work = cost.work or "this job"
    rows: list[dict[str, Any]] = [
        {
            "key": "capex",
            "label": COST_LABELS["capex"],
            "usd": finite(cost.network_capex_usd),
            "note": "to buy the network: NICs, switches, optics and cables",
        }
    ]
    life = cost.life
    if life is not None:
        years = finite(life.years)
        use = finite(life.utilization)
        note = "network, power, GPU time lost, operations"
        if years:
            note += f" over {years:g} years"
        if use:
            note += f" at {use * 100:.0f} % use"
        life_usd = finite(life.total_usd)
        rows.append({"key": "life", "label": COST_LABELS["life"], "usd": life_usd, "note": note})
    job = cost.job_share
    job_key = "job_share.total_usd" if job is not None else "total_cost_usd"
    share = job.network_capex_share_usd if job is not None else cost.network_capex_share_usd
    note = f"the {work}: GPU time, power, ramp-up"
    if share is not None:
        note += f" and {usd_compact(share)} of the network's time share"
    rows.append(
        {
            "key": "job",
            "label": COST_LABELS["job"],
            "usd": finite(cost.job_total_usd),
            "note": note,
            "explain": job.note if job is not None else "",
        }
    )
    for row in rows:
        row["value"] = usd_compact(row["usd"])
    decision = "life" if cost.decision_basis == "life" and life is not None else "job"
    by_key = {r["key"]: r for r in rows}
    return {
        "rows": rows,
        "by_key": by_key,
        "job_key": job_key,
        "decision": decision,
        "decision_label": str(by_key[decision]["label"]).lower(),
    }


def job_cost(cost: Cost | None) -> float:
    """The cost charged to this job."""
    return float(cost_figures(cost)["by_key"]["job"]["usd"])


def decision_cost(cost: Cost | None) -> tuple[float, str]:
    """The cost the engine ranked designs by (the cluster's life when it says so), with its
    label."""
    figures = cost_figures(cost)
    row = figures["by_key"][figures["decision"]]
    return float(row["usd"]), str(row["label"])


# ---------------------------------------------------------------------------------------------
# The inputs in plain words (the PDF's input summary and the comparison's differences)

WORKLOAD_WORDS = {
    "training": "Pre-training a model",
    "fine_tuning": "Fine-tuning a model",
    "inference": "Serving a model",
}


def workload_words(workload: str) -> str:
    """A scenario's workload as the inputs table and the comparison both say it."""
    return WORKLOAD_WORDS.get(workload, workload.replace("_", " ") or "—")


SHARDING_WORDS = {
    "none": "plain data parallel (each GPU group keeps a full copy)",
    "zero1": "optimizer state shared across GPUs (ZeRO-1)",
    "zero3": "everything shared across GPUs (FSDP / ZeRO-3)",
}
PREFER_WORDS = {
    "cost": "lowest cost",
    "balanced": "balance cost and speed",
    "performance": "fastest",
}


def _tokens(value: Any) -> str:
    n = finite(value)
    for size, unit in ((1e12, "trillion"), (1e9, "billion"), (1e6, "million")):
        if n >= size:
            return f"{significant(n / size, 3)} {unit} tokens"
    return f"{n:,.0f} tokens"


def _model_words(result: EngineResult) -> str:
    model = result.workload.model
    scenario_model = result.scenario.model
    name = model.name or (scenario_model if isinstance(scenario_model, str) else "")
    custom = scenario_model if isinstance(scenario_model, CustomModel) else CustomModel()
    params = finite(model.params_b or custom.params_b)
    experts = int(finite(model.moe_experts))
    parts = [name or "Custom model"]
    if params:
        parts.append(f"{significant(params, 3)} billion parameters")
    if experts:
        parts.append(f"mixture of {experts} experts, {int(finite(model.moe_top_k))} per token")
    return ", ".join(parts)


def _gpu_words(result: EngineResult, gpu_names: dict[str, str] | None) -> str:
    scenario = result.scenario
    workload = result.workload
    gpu = scenario.gpu
    name = (gpu_names or {}).get(gpu) or _gpu_name(gpu)
    gpus = int(finite(scenario.gpus))
    per = int(finite(workload.gpus_per_node or scenario.gpus_per_node))
    nodes = int(finite(workload.nodes))
    text = f"{gpus:,} × {name}"
    if nodes:
        text += f" in {nodes:,} server{'s' if nodes != 1 else ''}"
        if per:
            text += f" of {per}"
    return text


def _pricing_words(constraints: Constraints) -> str:
    years = finite(constraints.amortization_years, 4)
    if constraints.gpu_pricing == "owned":
        text = f"owned GPUs (bought, written off over {years:g} years)"
    else:
        rate = constraints.gpu_hour_usd
        text = "rented GPUs" + (f" at {usd_cents(rate)} per GPU-hour" if rate else "")
    text += (
        f"; electricity {usd_cents(constraints.electricity_usd_per_kwh)}/kWh, "
        f"PUE {finite(constraints.pue, 1):g}; "
        f"hardware written off over {years:g} years"
    )
    return text


SERVING_WORDS = {
    "replicas": "independent copies of the model, one per server group",
    "split": "one copy of the model split across servers",
    "disaggregated": "prompts (prefill) and answers (decode) on separate GPUs",
}
"""How the customer asked the model to be served (``inference.deployment``, or the older
``independent_replicas`` flag); neither given: the advisor chooses for the load."""


def _serving_rows(inference: InferenceInput) -> list[tuple[str, str]]:
    """The serving rows of the input summary: the deployment, the load and the targets as the
    customer gave them (an arrival rate, or users each waiting for the answer; both p95)."""
    asked = inference.deployment
    if asked is None and inference.independent_replicas is not None:
        asked = "replicas" if inference.independent_replicas else "split"
    mode = SERVING_WORDS.get(asked or "", "left to the advisor, chosen for the load")
    rate = inference.requests_per_s
    load = (
        f"{significant(finite(rate))} new requests per second at the busiest time"
        if rate
        else f"{int(finite(inference.concurrent_requests)):,} requests at once"
    )
    rows = [
        ("Serving", mode),
        (
            "Serving load",
            f"{load}, {int(finite(inference.prompt_tokens)):,}-token prompts, "
            f"{int(finite(inference.output_tokens)):,}-token answers",
        ),
    ]
    targets = []
    if inference.target_ms_per_token:
        targets.append(f"{finite(inference.target_ms_per_token):g} ms per generated token")
    if inference.target_ttft_ms:
        targets.append(f"{finite(inference.target_ttft_ms):,.0f} ms to the first token")
    if targets:
        rows.append(("Latency targets", " and ".join(targets) + " (95th percentile)"))
    return rows


def number_format_words(result: EngineResult) -> str:
    """The number format in "What you asked" and above the answer: "fp8 (as the model ships)"
    where a served model runs its publisher's format, "fp8 (the publisher's fp8 release)" where
    it runs the publisher's smaller release, by default or by name (the engine's "Number
    format" assumption)."""
    precision = result.scenario.precision or "bf16"
    unit = next(
        (
            a.unit
            for a in result.assumptions
            if a.name == NUMBER_FORMAT_ASSUMPTION and a.value == precision
        ),
        "",
    )
    if unit == SHIPPED_FORMAT:
        return f"{precision} (as the model ships)"
    if unit == RELEASE_FORMAT:
        return f"{precision} (the publisher's {precision} release)"
    return precision


def input_summary(
    result: EngineResult, gpu_names: dict[str, str] | None = None
) -> list[tuple[str, str]]:
    """What the customer told us, in plain words, in the order they told it."""
    scenario = result.scenario
    constraints = scenario.constraints
    workload = scenario.workload
    rows: list[tuple[str, str]] = [
        ("Workload", workload_words(workload)),
        ("Model", _model_words(result)),
        ("GPUs and servers", _gpu_words(result, gpu_names)),
        ("Number format", number_format_words(result)),
    ]
    seq = scenario.sequence_length
    if seq and workload != "inference":
        rows.append(("Sequence length", f"{int(finite(seq)):,} tokens"))
    if workload == "inference":
        inference = scenario.inference or InferenceInput(independent_replicas=True)
        rows.extend(_serving_rows(inference))
        rag = scenario.rag
        if rag is not None:
            rows.append(
                (
                    "Retrieval (RAG)",
                    f"top {rag.top_k:,} chunks of {rag.chunk_tokens:,} tokens from "
                    f"{rag.corpus_chunks:,} chunks, {rag.embedding_dims:,}-dimension "
                    "embeddings",
                )
            )
    else:
        training = scenario.training or TrainingInput()
        if training.global_batch_sequences:
            rows.append(
                (
                    "Batch",
                    f"{int(finite(training.global_batch_sequences)):,} sequences per step",
                )
            )
        if training.total_tokens:
            rows.append(("Tokens", _tokens(training.total_tokens)))
        sharding = training.sharding or result.workload.plan.sharding
        if sharding:
            rows.append(("Memory sharing", SHARDING_WORDS.get(sharding, sharding)))
    rows.append(("Pricing", _pricing_words(constraints)))
    budget = constraints.network_budget_usd
    if budget:
        rows.append(("Network budget", usd_compact(budget)))
    skills = constraints.team_skills
    if skills:
        rows.append(("Team", TEAM_SKILLS[skills].knows if skills in TEAM_SKILLS else skills))
    prefer = constraints.prefer
    if prefer:
        rows.append(("Priority", PREFER_WORDS.get(prefer, prefer)))
    return rows


# ---------------------------------------------------------------------------------------------
# Assumptions in plain words: no internal keys, field paths or file names

ASSUMPTION_NAMES = {
    "gpu_hour_cost": "GPU price per hour",
    "gpu_pricing": "GPU pricing",
    "amortization_years": "Hardware life",
    "pue": "Data-centre overhead (PUE)",
    "electricity": "Electricity price",
    "server_price_factor": "Server price",
    "server_power_factor": "Server power",
    "network_prices": "Network prices",
    "servers_per_rack": "Servers per rack",
    "dac_reach": "Copper cable reach",
    "server_to_leaf_length": "Server-to-leaf cable length",
    "switch_to_switch_length": "Switch-to-switch cable length",
    "storage_network": "Storage network",
    "management_network": "Management network",
    "network_cost_allocation": "How the network is charged to a job",
    "team_skills": "Team skills",
    "prefer": "Priority",
    "total_tokens": "Tokens processed",
    "serving_period": "Serving period",
    "constants version": "Model constants version",
    "peak": "GPU peak compute",
    "rail group": "Rail group",
    "usable memory": "Usable GPU memory",
    "NCCL cost model": "Collective cost model",
}
YOUR_ANSWER = "your answer"
DOCS_WORDS = "Fabric Advisor method notes"
# Our own method notes (docs/MODEL.md, ENGINE_API.md ...), never a file inside another
# project's path ("stas00/ml-engineering compute/accelerator/README.md" is a citation and stays
# as its source writes it).
_DOC_RE = re.compile(
    r"(?<![\w/.-])(?:docs/)?(?:MODEL|ENGINE_API|ARCHITECTURE|DOMAIN|FIELD_PRACTICE)\.md\b"
    r"(?:\s+(?:section\s+)?(?:§\s*)?[\w.]+)?|§\s*\d+"
)
# Our own code and data files; another project's paths (NVIDIA/nccl src/graph/tuning.cc,
# aliyun/SimAI calbusbw.cc) are part of a citation and stay.
_PATH_RE = re.compile(
    r"(?<![\w/.-])(?:advisor|api|frontend|tests|docs)/[\w/.-]+"
    r"|(?<![\w/.-])[\w-]+\.(?:py|json)\b(?!\s*\()"
)
_FIELD_RE = re.compile(r"\b(?:constraints|training|inference|design|parallelism)\.[a-z_]+\b")
_KEY_RE = re.compile(r"\b[a-z]+(?:_[a-z0-9]+)+\b")
_WORD_FIXES = {"Infiniband": "InfiniBand", "Roce": "RoCE", "infiniband": "InfiniBand"}


def plain_source(source: Any) -> str:
    """A source in words: field paths become 'your answer'; file names, paths and internal
    keys go (a reference to our method notes is named as such)."""
    text = str(source or "")
    text = _FIELD_RE.sub(YOUR_ANSWER, text)
    text = _DOC_RE.sub(DOCS_WORDS, text)
    text = _PATH_RE.sub("", text)
    text = _KEY_RE.sub(lambda m: m.group(0).replace("_", " "), text)
    text = re.sub(r"\(\s*[,;:]?\s*\)", "", text)
    text = re.sub(r"\s+([,;.)])", r"\1", text)
    text = re.sub(r"([(;,])\s*[,;]", r"\1", text)
    text = re.sub(r"\s{2,}", " ", text).strip(" ,;:-")
    text = text.replace(f"{DOCS_WORDS} {DOCS_WORDS}", DOCS_WORDS)
    return text or "Fabric Advisor engine"


def _plain_value(value: Any, unit: str) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        number = float(value)
        if unit.startswith("USD"):
            text = usd_cents(number) if abs(number) < 100 else usd_whole(number)
            rest = unit[3:].strip().lstrip("/").strip()
            return f"{text} per {rest}" if rest else text
        if unit.startswith("fraction"):
            return f"{significant(number * 100, 3)} %" + unit[len("fraction") :]
        if unit == "tokens":
            return _tokens(number)
        text = f"{number:,.0f}" if abs(number) >= 1000 else f"{number:g}"
        return f"{text} {unit}".strip()
    text = plain_source(value)
    return f"{text} {unit}".strip() if unit and unit != "USD" else text


def assumption_rows(result: EngineResult) -> list[dict[str, str]]:
    """Each assumption as name, value and source a customer can read."""
    rows = []
    for a in result.assumptions:
        raw = a.name
        name = ASSUMPTION_NAMES.get(raw) or (raw[:1].upper() + raw[1:]).replace("_", " ")
        for bad, good in _WORD_FIXES.items():
            name = name.replace(bad, good)
        value = _plain_value(a.value, a.unit)
        if raw == "team_skills" and str(a.value) in TEAM_SKILLS:
            value = TEAM_SKILLS[str(a.value)].knows
        if raw == "gpu_pricing":
            value = {"cloud": "rented by the hour", "owned": "owned"}.get(str(a.value), value)
        if raw == "prefer":
            value = PREFER_WORDS.get(str(a.value), value)
        rows.append({"name": name, "value": value, "source": plain_source(a.source)})
    return rows


# ---------------------------------------------------------------------------------------------
# Warnings shown above the answer

IDLE_WARN_FRACTION = 0.20


MFU_WARN_FRACTION = 0.65
"""Model FLOPs utilization above which a training answer is flagged (docs/MODEL.md 6:
published large-model MFU is ~0.38-0.45; dense mid-size runs reach ~0.55-0.6)."""


def _pretrains_moe(result: EngineResult) -> bool:
    """Pretraining of a mixture-of-experts model: its usual batch is the MoE one
    (``default_global_batch_tokens``)."""
    model = result.workload.model
    return result.scenario.workload == "training" and model.moe_experts > 1 and model.moe_top_k > 0


def batch_note(result: EngineResult) -> str:
    """When the global batch, not the network, leaves GPUs idle: GPUs with no work, or a
    batch far below what published runs of this size use (1,024 tokens per GPU; 32,768 for a
    mixture-of-experts model)."""
    scenario = result.scenario
    training = scenario.training
    gpus = int(finite(scenario.gpus))
    if training is None or gpus <= 0:
        return ""
    sequences = int(finite(training.global_batch_sequences))
    tokens = finite(training.global_batch_tokens) or sequences * finite(scenario.sequence_length)
    used = int(finite(result.workload.plan.gpus_used))
    moe = _pretrains_moe(result)
    usual = default_global_batch_tokens(gpus, moe)
    if 0 < used < gpus:
        return (
            f"{gpus - used:,} of the {gpus:,} GPUs have no work: a global batch of "
            f"{sequences:,} sequences keeps only {used:,} busy. Published runs of this size "
            f"use about {usual / 1e6:,.1f}M tokens per step; a larger batch would use them all."
        )
    if tokens and tokens < usual / 4:
        return (
            f"The global batch ({tokens / 1e6:,.1f}M tokens per step, "
            f"{tokens / gpus:,.0f} per GPU) is small for {gpus:,} GPUs: each GPU computes little "
            f"per step, so {'the expert all-to-all and ' if moe else ''}the gradient exchange "
            f"dominates the step. Published runs of this size use about {usual / 1e6:,.1f}M "
            "tokens per step ("
            + ("DeepSeek-V3: 63M on 2,048 GPUs" if moe else "Llama 3 405B: 16M on 16,384 GPUs")
            + ")."
        )
    return ""


def warnings(result: EngineResult) -> list[dict[str, str]]:
    """What is important and off: GPUs idle on the network, a missed latency target, a serving
    capacity the published runs of its regime measure well below (:func:`capacity_caution`), a
    budget not met, a design that departs from the reference design."""
    out: list[dict[str, str]] = []
    metrics = result.metrics
    scenario = result.scenario
    cost = result.cost
    idle = finite(metrics.gpu_idle_fraction)
    batch = batch_note(result)
    if batch:
        out.append({"kind": "batch", "text": batch})
    if idle >= IDLE_WARN_FRACTION:
        out.append(
            {
                "kind": "idle",
                "text": (
                    f"GPUs wait on the network {idle * 100:.0f} % of the time in this design "
                    f"({usd_compact(cost.idle_cost_usd)} of GPU time). "
                    + (
                        "Most of it comes from the small global batch (above): a larger "
                        "batch cuts it more than a faster network would."
                        if batch
                        else "More or faster NICs, a larger batch or less sharding would cut it."
                    )
                ),
            }
        )
    if is_inference(result) and metrics.meets_target is not None and not metrics.meets_target:
        inference = scenario.inference
        target = finite(inference.target_ms_per_token if inference is not None else None)
        out.append(
            {
                "kind": "latency",
                "text": (
                    f"No design meets your target of {target:g} ms per token: this one "
                    f"generates a token every {milliseconds(metrics.ms_per_token)}."
                ),
            }
        )
    caution = capacity_caution(result)
    if caution:
        out.append({"kind": "capacity", "text": caution})
    mfu = finite(metrics.mfu)
    if not is_inference(result) and mfu > MFU_WARN_FRACTION:
        out.append(
            {
                "kind": "mfu",
                "text": (
                    f"The model reads {mfu * 100:.0f} % model FLOPs utilization (causal "
                    f"attention counted), above the ~{MFU_WARN_FRACTION * 100:.0f} % that "
                    "published large runs approach (~38-45 % for large models): treat the "
                    "step time as optimistic."
                ),
            }
        )
    rec = result.recommendation
    budget_text = _budget_warning(rec, scenario, cost)
    if budget_text:
        out.append({"kind": "budget", "text": budget_text})
    reference = _reference_warning(result, rec)
    if reference:
        out.append({"kind": "reference", "text": reference})
    return out


def _budget_warning(rec: Recommendation, scenario: ScenarioEcho, cost: Cost) -> str:
    """A network budget the design does not meet (recommendation.budget, or by the capex)."""
    info = rec.budget
    budget = (info.network_budget_usd if info else None) or (
        scenario.constraints.network_budget_usd
    )
    capex = finite((info.recommended_capex_usd if info else None) or cost.network_capex_usd)
    over = not info.within_budget if info else bool(budget and capex > finite(budget) > 0)
    if not (over and budget):
        return ""
    text = (
        f"Over your network budget: this design's network costs {usd_compact(capex)} against a "
        f"budget of {usd_compact(budget)}."
    )
    buys = info.budget_buys if info else None
    if buys is not None and buys.design:
        design = buys.design
        label = design if isinstance(design, str) else option_label(Option.from_dict(design))
        text += f" The budget buys {label} ({usd_compact(buys.capex_usd)})"
        text += f", {buys.slowdown_text}." if buys.slowdown_text else "."
    else:
        text += " No design that runs this job fits it."
    return text


def _reference_warning(result: EngineResult, rec: Recommendation) -> str:
    """The engine's comparison with the reference design, or our own check of it."""
    ref = rec.reference_design
    if ref is not None:
        if ref.matches or ref.sized_for_serving:
            return ""  # a serving fabric sized by its traffic is said in the rationale
        departures = list(ref.departures)
        name = ref.name or "the reference design"
        if departures:
            return f"Departs from the reference design ({name}): " + "; ".join(departures) + "."
        return ref.statement
    return _reference_departure(result, rec)


def _reference_departure(result: EngineResult, rec: Recommendation) -> str:
    """A multi-server training design that departs from the reference design for its size:
    a rail-optimized, non-blocking fabric with one NIC per GPU (NVIDIA DGX SuperPOD RA)."""
    if is_inference(result) or not rec.needs_compute_fabric:
        return ""
    workload = result.workload
    if finite(workload.nodes) <= 1:
        return ""
    per_node = finite(workload.gpus_per_node)
    departures = []
    nics = finite(rec.nics_per_node)
    if per_node and nics and nics < per_node:
        departures.append(
            f"{nics:g} NICs per server for {per_node:g} GPUs (reference: one per GPU)"
        )
    over = finite(rec.topology.oversubscription, 1.0)
    if over > 1:
        departures.append(f"{over:g}:1 oversubscribed leaves (reference: non-blocking)")
    if not departures:
        return ""
    return (
        "This design departs from the reference design for GPU training clusters: "
        + "; ".join(departures)
        + ". It was chosen because it costs less for this job; check the alternatives "
        "before quoting it for other work."
    )


_PREFER_RE = re.compile(r"\bprefer=(\w+)")


def plan_notes(result: EngineResult) -> list[str]:
    """The planner's notes on how the job runs (the deployment it chose over the others it
    weighed, with their rates; GPUs or servers left idle; a batch rounded), as sentences: the
    page's and the PDF's "How the engine planned it"."""
    return [_capitalised(plain_sentence(note)) for note in result.workload.notes]


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def plain_sentence(text: Any) -> str:
    """An engine sentence without internal names: prefer=balanced, field paths such as
    constraints.allow_oversubscription, file names."""
    out = _PREFER_RE.sub(
        lambda m: f"your priority ({PREFER_WORDS.get(m.group(1), m.group(1))})", str(text or "")
    )
    out = _FIELD_RE.sub(
        lambda m: "the “" + m.group(0).split(".", 1)[1].replace("_", " ") + "” setting", out
    )
    out = _DOC_RE.sub(DOCS_WORDS, out)
    return _PATH_RE.sub("", out)
