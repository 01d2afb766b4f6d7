"""The engine's result arranged for people: headline facts first, details after.

Shared by the results page, the comparison page, and the PDF report, so that all three say
the same thing in the same words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from advisor.engine.formatting import duration, finite, usd_cents, usd_compact, usd_whole
from advisor.engine.vocabulary import NETWORK_LABELS, fabric_label, network_label, topology_label
from frontend.charts import is_inference, option_label


def topology_text(rec: dict[str, Any]) -> str:
    topo = rec.get("topology") or {}
    if not rec.get("needs_compute_fabric", True):
        return "no compute fabric (front-end Ethernet only)"
    name = topology_label(topo)
    parts = [name]
    if name != "single switch":
        if topo.get("rail_optimized"):
            parts.append("rail-optimized")
        over = finite(topo.get("oversubscription"), 1.0)
        parts.append(f"{over:g}:1" + (" non-blocking" if over == 1 else " oversubscribed"))
    return ", ".join(p for p in parts if p)


@dataclass
class Fact:
    key: str
    value: str
    sub: str = ""


def headline(result: dict[str, Any]) -> dict[str, Any]:
    """The answer in one line plus the handful of numbers that back it."""
    rec = result.get("recommendation") or {}
    cost = result.get("cost") or {}
    metrics = result.get("metrics") or {}
    workload = result.get("workload") or {}
    needs_fabric = bool(rec.get("needs_compute_fabric", True))
    fabric = fabric_label(str(rec.get("fabric", "")))
    nics = int(finite(rec.get("nics_per_node")))
    gbps = finite(rec.get("nic_gbps"))
    topo = topology_text(rec)
    capex = usd_compact(cost.get("network_capex_usd"))
    if needs_fabric:
        title = f"{fabric} · {nics} × {gbps:g} Gb/s NICs per server · {topo} · network {capex}"
    else:
        title = f"No compute fabric needed · standard Ethernet · network {capex}"
    if needs_fabric:
        facts = [
            Fact(
                "NICs per server",
                f"{nics} × {gbps:g}G" if nics else "—",
                str(rec.get("nic_sku") or ""),
            ),
            Fact("Topology", topo.split(",")[0] if topo else "—", ", ".join(topo.split(", ")[1:])),
        ]
    else:
        facts = [
            Fact(
                "Front-end NICs",
                f"{nics} × {gbps:g}G" if nics else "—",
                str(rec.get("nic_sku") or ""),
            ),
            Fact("Compute fabric", "None", "GPUs talk over NVLink / PCIe"),
        ]
    costs = cost_figures(cost)
    facts.append(Fact(COST_LABELS["capex"], capex, "NICs, switches, optics, cables"))
    if is_inference(result):
        facts.append(
            Fact(
                "Per token",
                f"{finite(metrics.get('ms_per_token')):.3g} ms",
                f"first token {finite(metrics.get('ttft_ms')):.3g} ms",
            )
        )
    else:
        facts.append(
            Fact(
                "Step time",
                duration(metrics.get("step_time_s")),
                f"{finite(metrics.get('scaling_efficiency')) * 100:.0f} % scaling efficiency",
            )
        )
    facts.append(
        Fact(
            "GPUs idle on the network",
            f"{finite(metrics.get('gpu_idle_fraction')) * 100:.1f} %",
            f"{usd_compact(cost.get('idle_cost_usd'))} of GPU time",
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
        "sentence": str(rec.get("headline") or ""),
        "facts": facts,
        "needs_fabric": needs_fabric,
        "servers": int(finite(workload.get("nodes"))),
    }


def bom_groups(result: dict[str, Any]) -> list[dict[str, Any]]:
    """BOM lines grouped by network, each group with its subtotal."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for line in result.get("bom") or []:
        if isinstance(line, dict):
            groups.setdefault(str(line.get("network") or "compute"), []).append(line)
    order = [k for k in NETWORK_LABELS if k in groups] + [
        k for k in groups if k not in NETWORK_LABELS
    ]
    return [
        {
            "network": key,
            "label": network_label(key),
            "lines": groups[key],
            "subtotal": sum(finite(line.get("extended_price_usd")) for line in groups[key]),
            # The engine's power_w on a BOM line is the whole line's (quantity included).
            "power_w": sum(finite(line.get("power_w")) for line in groups[key]),
        }
        for key in order
    ]


def bom_total(result: dict[str, Any]) -> float:
    return sum(
        finite(line.get("extended_price_usd"))
        for line in result.get("bom") or []
        if isinstance(line, dict)
    )


def options_rows(result: dict[str, Any], limit: int | None = None) -> list[dict[str, Any]]:
    """The candidates by rank (the first `limit` of them), in words."""
    inference = is_inference(result)
    rows = []
    ranked = sorted(result.get("options") or [], key=lambda o: finite(o.get("rank"), 1e9))
    for option in ranked[:limit]:
        m = option.get("metrics") or {}
        c = option.get("cost") or {}
        rows.append(
            {
                "rank": option.get("rank"),
                "label": option_label(option),
                "switch": option.get("switch_model") or "",
                "speed": (
                    f"{finite(m.get('ms_per_token')):.3g} ms/token"
                    if inference
                    else duration(m.get("step_time_s"))
                ),
                "idle": f"{finite(m.get('gpu_idle_fraction')) * 100:.1f} %",
                "capex": usd_compact(c.get("network_capex_usd")),
                "total": usd_compact(job_cost(c)),
                "life": _life_value(c),
                "recommended": bool(option.get("recommended")),
                "feasible": option.get("feasible", True),
                "why_not": plain_sentence(option.get("why_not") or ""),
            }
        )
    return rows


def _life_value(cost: dict[str, Any]) -> str:
    life = cost_figures(cost)["by_key"].get("life")
    return str(life["value"]) if life else ""


def uncertainty_rows(result: dict[str, Any]) -> list[dict[str, str]]:
    rows = []
    names = {
        "step_time_s": ("Step time", duration),
        "ms_per_token": ("Time per token", lambda v: f"{finite(v):.3g} ms"),
        "total_cost_usd": (COST_LABELS["job"], usd_compact),
        "decision_cost_usd": (COST_LABELS["life"], usd_compact),
    }
    for key, band in (result.get("uncertainty") or {}).items():
        if not isinstance(band, dict):
            continue
        label, fmt = names.get(key, (key.replace("_", " "), lambda v: f"{finite(v):.3g}"))
        rows.append({"label": label, "low": fmt(band.get("low")), "high": fmt(band.get("high"))})
    return rows


def key_metrics(result: dict[str, Any]) -> list[tuple[str, str]]:
    """Rows for the side-by-side comparison."""
    rec = result.get("recommendation") or {}
    metrics = result.get("metrics") or {}
    cost = result.get("cost") or {}
    scenario = result.get("scenario") or {}
    workload = result.get("workload") or {}
    model = scenario.get("model")
    model_name = (workload.get("model") or {}).get("name") or (
        model if isinstance(model, str) else "custom"
    )
    rows = [
        ("Workload", str(scenario.get("workload", "")).replace("_", "-")),
        ("Model", str(model_name)),
        ("GPUs", f"{scenario.get('gpus', '—')} × {scenario.get('gpu', '')}"),
        ("Servers", str(workload.get("nodes", "—"))),
        (
            "Fabric",
            fabric_label(str(rec.get("fabric", "")))
            if rec.get("needs_compute_fabric", True)
            else "none needed (Ethernet)",
        ),
        ("NICs per server", f"{rec.get('nics_per_node', '—')} × {finite(rec.get('nic_gbps')):g}G"),
        ("Topology", topology_text(rec)),
        (COST_LABELS["capex"], usd_compact(cost.get("network_capex_usd"))),
    ]
    if is_inference(result):
        rows.append(("Time per token", f"{finite(metrics.get('ms_per_token')):.3g} ms"))
    else:
        rows.append(("Step time", duration(metrics.get("step_time_s"))))
        rows.append(
            ("Scaling efficiency", f"{finite(metrics.get('scaling_efficiency')) * 100:.0f} %")
        )
    rows += [
        ("GPUs idle on network", f"{finite(metrics.get('gpu_idle_fraction')) * 100:.1f} %"),
        ("Idle GPU cost", usd_compact(cost.get("idle_cost_usd"))),
    ]
    for row in cost_figures(cost)["rows"][1:]:
        rows.append((row["label"], row["value"]))
    return rows


# ---------------------------------------------------------------------------------------------
# Costs, each labelled: what the network costs to buy, what the cluster costs over its life,
# and what this job is charged. The engine's keys are documented in docs/ENGINE_API.md; the
# life-cost and job-share keys are looked up by name so a renamed key still shows up.

COST_LABELS = {
    "capex": "Network capex",
    "life": "Cost over the cluster's life",
    "job": "Share charged to this job",
}
_LIFE_KEYS = (
    "life_cost_usd",
    "cluster_life_cost_usd",
    "lifetime_cost_usd",
    "life_total_cost_usd",
    "total_life_cost_usd",
)
_JOB_KEYS = ("job_share_usd", "job_share_cost_usd", "job_cost_usd", "total_cost_usd")


def _cost_key(cost: dict[str, Any], names: tuple[str, ...], word: str) -> str | None:
    for name in names:
        if isinstance(cost.get(name), int | float):
            return name
    for name, value in cost.items():
        if word in name and name.endswith("_usd") and isinstance(value, int | float):
            return name
    return None


def _nested_total(cost: dict[str, Any], name: str) -> tuple[float | None, dict[str, Any]]:
    """cost[name] as {"total_usd": ...} (docs/ENGINE_API.md), or None when absent."""
    part = cost.get(name)
    if isinstance(part, dict) and isinstance(part.get("total_usd"), int | float):
        return float(part["total_usd"]), part
    return None, {}


def cost_figures(cost: dict[str, Any] | None) -> dict[str, Any]:
    """The three costs a reader needs, with their labels and what each one covers:
    network capex, the cost over the cluster's life (cost.life.total_usd) and the share
    charged to this job (cost.job_share.total_usd; total_cost_usd in older results)."""
    cost = cost or {}
    work = str(cost.get("work") or "this job")
    rows = [
        {
            "key": "capex",
            "label": COST_LABELS["capex"],
            "usd": finite(cost.get("network_capex_usd")),
            "note": "to buy the network: NICs, switches, optics and cables",
        }
    ]
    life_usd, life = _nested_total(cost, "life")
    if life_usd is None:
        key = _cost_key(cost, _LIFE_KEYS, "life")
        life_usd = finite(cost.get(key)) if key else None
    if life_usd is not None:
        years = finite(life.get("years") or cost.get("amortization_years"))
        use = finite(life.get("utilization"))
        note = "network, power, GPU time lost, operations"
        if years:
            note += f" over {years:g} years"
        if use:
            note += f" at {use * 100:.0f} % use"
        rows.append({"key": "life", "label": COST_LABELS["life"], "usd": life_usd, "note": note})
    job_usd, job = _nested_total(cost, "job_share")
    job_key = "job_share.total_usd" if job_usd is not None else _cost_key(cost, _JOB_KEYS, "job")
    if job_usd is None and job_key is not None:
        job_usd = finite(cost.get(job_key))
    if job_usd is not None:
        share = job.get("network_capex_share_usd", cost.get("network_capex_share_usd"))
        note = f"the {work}: GPU time, power, ramp-up"
        if isinstance(share, int | float):
            note += f" and {usd_compact(share)} of the network's time share"
        rows.append(
            {
                "key": "job",
                "label": COST_LABELS["job"],
                "usd": job_usd,
                "note": note,
                "explain": str(job.get("note") or ""),
            }
        )
    for row in rows:
        row["value"] = usd_compact(row["usd"])
    decision = "life" if cost.get("decision_basis") == "life" and life_usd is not None else "job"
    by_key = {r["key"]: r for r in rows}
    return {
        "rows": rows,
        "by_key": by_key,
        "job_key": job_key,
        "decision": decision,
        "decision_label": str(
            (by_key.get(decision) or {}).get("label", COST_LABELS["job"])
        ).lower(),
    }


def job_cost(cost: dict[str, Any] | None) -> float:
    """The cost charged to this job."""
    fig = cost_figures(cost)["by_key"].get("job")
    return float(fig["usd"]) if fig else 0.0


def decision_cost(cost: dict[str, Any] | None) -> tuple[float, str]:
    """The cost the engine ranked designs by (the cluster's life when it says so), with its
    label."""
    figures = cost_figures(cost)
    row = figures["by_key"].get(figures["decision"]) or figures["by_key"].get("job")
    if row is None:
        return 0.0, COST_LABELS["job"]
    return float(row["usd"]), str(row["label"])


# ---------------------------------------------------------------------------------------------
# The inputs in plain words (the PDF's input summary and the comparison's differences)

WORKLOAD_WORDS = {
    "training": "Pre-training a model",
    "fine_tuning": "Fine-tuning a model",
    "inference": "Serving a model",
}
SHARDING_WORDS = {
    "none": "plain data parallel (each GPU group keeps a full copy)",
    "zero1": "optimizer state shared across GPUs (ZeRO-1)",
    "zero3": "everything shared across GPUs (FSDP / ZeRO-3)",
}
SKILL_WORDS = {
    "ethernet": "knows Ethernet",
    "infiniband": "knows InfiniBand",
    "both": "knows Ethernet and InfiniBand",
    "none": "new to high-speed networks",
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
            return f"{n / size:.3g} {unit} tokens"
    return f"{n:,.0f} tokens"


def _model_words(result: dict[str, Any]) -> str:
    model = (result.get("workload") or {}).get("model") or {}
    scenario_model = (result.get("scenario") or {}).get("model")
    name = model.get("name") or (scenario_model if isinstance(scenario_model, str) else "")
    custom = scenario_model if isinstance(scenario_model, dict) else {}
    params = finite(model.get("params_b") or custom.get("params_b"))
    experts = int(finite(model.get("moe_experts")))
    parts = [str(name or "Custom model")]
    if params:
        parts.append(f"{params:.3g} billion parameters")
    if experts:
        parts.append(
            f"mixture of {experts} experts, {int(finite(model.get('moe_top_k')))} per token"
        )
    return ", ".join(parts)


def _gpu_words(result: dict[str, Any], gpu_names: dict[str, str] | None) -> str:
    scenario = result.get("scenario") or {}
    workload = result.get("workload") or {}
    gpu = str(scenario.get("gpu") or "")
    name = (gpu_names or {}).get(gpu, gpu)
    gpus = int(finite(scenario.get("gpus")))
    per = int(finite(workload.get("gpus_per_node") or scenario.get("gpus_per_node")))
    nodes = int(finite(workload.get("nodes")))
    text = f"{gpus:,} × {name}"
    if nodes:
        text += f" in {nodes:,} server{'s' if nodes != 1 else ''}"
        if per:
            text += f" of {per}"
    return text


def _pricing_words(constraints: dict[str, Any]) -> str:
    if constraints.get("gpu_pricing") == "owned":
        text = "owned GPUs (bought, written off over "
        text += f"{finite(constraints.get('amortization_years'), 4):g} years)"
    else:
        rate = constraints.get("gpu_hour_usd")
        text = "rented GPUs" + (f" at ${finite(rate):.2f} per GPU-hour" if rate else "")
    text += (
        f"; electricity ${finite(constraints.get('electricity_usd_per_kwh')):.2f}/kWh, "
        f"PUE {finite(constraints.get('pue'), 1):g}; "
        f"hardware written off over {finite(constraints.get('amortization_years'), 4):g} years"
    )
    return text


def input_summary(
    result: dict[str, Any], gpu_names: dict[str, str] | None = None
) -> list[tuple[str, str]]:
    """What the customer told us, in plain words, in the order they told it."""
    scenario = result.get("scenario") or {}
    constraints = scenario.get("constraints") or {}
    workload = str(scenario.get("workload") or "")
    rows: list[tuple[str, str]] = [
        ("Workload", WORKLOAD_WORDS.get(workload, workload.replace("_", " ") or "—")),
        ("Model", _model_words(result)),
        ("GPUs and servers", _gpu_words(result, gpu_names)),
        ("Number format", str(scenario.get("precision") or "bf16")),
    ]
    seq = scenario.get("sequence_length")
    if seq:
        rows.append(("Sequence length", f"{int(finite(seq)):,} tokens"))
    training = scenario.get("training") or {}
    inference = scenario.get("inference") or {}
    if workload == "inference":
        mode = (
            "independent copies of the model, one per server group"
            if inference.get("independent_replicas", True)
            else "one copy of the model split across servers"
        )
        rows.append(("Serving", mode))
        rows.append(
            (
                "Serving load",
                f"{int(finite(inference.get('concurrent_requests'))):,} requests at once, "
                f"{int(finite(inference.get('prompt_tokens'))):,}-token prompts, "
                f"{int(finite(inference.get('output_tokens'))):,}-token answers",
            )
        )
        target = inference.get("target_ms_per_token")
        if target:
            rows.append(("Latency target", f"{finite(target):g} ms per generated token"))
    else:
        if training.get("global_batch_sequences"):
            rows.append(
                (
                    "Batch",
                    f"{int(finite(training.get('global_batch_sequences'))):,} sequences per step",
                )
            )
        if training.get("total_tokens"):
            rows.append(("Tokens", _tokens(training.get("total_tokens"))))
        sharding = training.get("sharding") or (
            (result.get("workload") or {}).get("plan") or {}
        ).get("sharding")
        if sharding:
            rows.append(("Memory sharing", SHARDING_WORDS.get(str(sharding), str(sharding))))
    rows.append(("Pricing", _pricing_words(constraints)))
    budget = constraints.get("network_budget_usd")
    if budget:
        rows.append(("Network budget", usd_compact(budget)))
    skills = constraints.get("team_skills")
    if skills:
        rows.append(("Team", SKILL_WORDS.get(str(skills), str(skills))))
    prefer = constraints.get("prefer")
    if prefer:
        rows.append(("Priority", PREFER_WORDS.get(str(prefer), str(prefer))))
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
_DOC_RE = re.compile(r"(?:docs/)?\b[A-Z_]+\.md\b(?:\s+(?:section\s+)?(?:§\s*)?[\w.]+)?|§\s*\d+")
_PATH_RE = re.compile(
    r"\b[\w/-]*\.(?:py|json|txt|csv|yaml|toml|cc|h)\b|\b(?:advisor|src|api|frontend)/[\w/.-]+"
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
            return f"{number * 100:.3g} %" + unit[len("fraction") :]
        if unit == "tokens":
            return _tokens(number)
        text = f"{number:,.0f}" if abs(number) >= 1000 else f"{number:g}"
        return f"{text} {unit}".strip()
    text = plain_source(value)
    return f"{text} {unit}".strip() if unit and unit != "USD" else text


def assumption_rows(result: dict[str, Any]) -> list[dict[str, str]]:
    """Each assumption as name, value and source a customer can read."""
    rows = []
    for a in result.get("assumptions") or []:
        if not isinstance(a, dict):
            continue
        raw = str(a.get("name") or "")
        name = ASSUMPTION_NAMES.get(raw) or (raw[:1].upper() + raw[1:]).replace("_", " ")
        for bad, good in _WORD_FIXES.items():
            name = name.replace(bad, good)
        value = _plain_value(a.get("value"), str(a.get("unit") or ""))
        if raw in SKILL_WORDS or raw == "team_skills":
            value = SKILL_WORDS.get(str(a.get("value")), value)
        if raw == "gpu_pricing":
            value = {"cloud": "rented by the hour", "owned": "owned"}.get(
                str(a.get("value")), value
            )
        if raw == "prefer":
            value = PREFER_WORDS.get(str(a.get("value")), value)
        rows.append({"name": name, "value": value, "source": plain_source(a.get("source"))})
    return rows


# ---------------------------------------------------------------------------------------------
# Warnings shown above the answer

IDLE_WARN_FRACTION = 0.20


def warnings(result: dict[str, Any]) -> list[dict[str, str]]:
    """What is important and off: GPUs idle on the network, a missed latency target, a budget
    not met, a design that departs from the reference design."""
    out: list[dict[str, str]] = []
    metrics = result.get("metrics") or {}
    scenario = result.get("scenario") or {}
    cost = result.get("cost") or {}
    idle = finite(metrics.get("gpu_idle_fraction"))
    if idle >= IDLE_WARN_FRACTION:
        out.append(
            {
                "kind": "idle",
                "text": (
                    f"GPUs wait on the network {idle * 100:.0f} % of the time in this design "
                    f"({usd_compact(cost.get('idle_cost_usd'))} of GPU time). More or faster NICs, "
                    "a larger batch or less sharding would cut it."
                ),
            }
        )
    if is_inference(result) and metrics.get("meets_target") in (0, 0.0, False):
        target = finite((scenario.get("inference") or {}).get("target_ms_per_token"))
        out.append(
            {
                "kind": "latency",
                "text": (
                    f"No design meets your target of {target:g} ms per token: this one "
                    f"generates a token every {finite(metrics.get('ms_per_token')):.3g} ms."
                ),
            }
        )
    rec = result.get("recommendation") or {}
    budget_text = _budget_warning(rec, scenario, cost)
    if budget_text:
        out.append({"kind": "budget", "text": budget_text})
    reference = _reference_warning(result, rec)
    if reference:
        out.append({"kind": "reference", "text": reference})
    for key in ("warnings", "alerts"):
        for item in result.get(key) or []:
            text = item.get("text") or item.get("message") if isinstance(item, dict) else item
            if text and all(text != w["text"] for w in out):
                out.append({"kind": "engine", "text": str(text)})
    return out


def _budget_warning(rec: dict[str, Any], scenario: dict[str, Any], cost: dict[str, Any]) -> str:
    """A network budget the design does not meet (recommendation.budget, or by the capex)."""
    info = rec.get("budget") if isinstance(rec.get("budget"), dict) else None
    budget = (info or {}).get("network_budget_usd") or (
        (scenario.get("constraints") or {}).get("network_budget_usd")
    )
    capex = finite((info or {}).get("recommended_capex_usd") or cost.get("network_capex_usd"))
    over = (
        info.get("within_budget") is False if info else bool(budget and capex > finite(budget) > 0)
    )
    if not (over and budget):
        return ""
    text = (
        f"Over your network budget: this design's network costs {usd_compact(capex)} against a "
        f"budget of {usd_compact(budget)}."
    )
    buys = (info or {}).get("budget_buys")
    if isinstance(buys, dict) and buys.get("design"):
        design = buys["design"]
        label = option_label(design) if isinstance(design, dict) else str(design)
        text += f" The budget buys {label} ({usd_compact(buys.get('capex_usd'))})"
        text += f", {buys['slowdown_text']}." if buys.get("slowdown_text") else "."
    else:
        text += " No design that runs this job fits it."
    return text


def _reference_warning(result: dict[str, Any], rec: dict[str, Any]) -> str:
    """The engine's comparison with the reference design, or our own check of it."""
    ref = rec.get("reference_design")
    if isinstance(ref, dict):
        if ref.get("matches", True):
            return ""
        departures = [str(d) for d in ref.get("departures") or []]
        name = str(ref.get("name") or "the reference design")
        if departures:
            return f"Departs from the reference design ({name}): " + "; ".join(departures) + "."
        return str(ref.get("statement") or "")
    return _reference_departure(result, rec)


def _reference_departure(result: dict[str, Any], rec: dict[str, Any]) -> str:
    """A multi-server training design that departs from the reference design for its size:
    a rail-optimized, non-blocking fabric with one NIC per GPU (NVIDIA DGX SuperPOD RA)."""
    if is_inference(result) or not rec.get("needs_compute_fabric", True):
        return ""
    workload = result.get("workload") or {}
    if finite(workload.get("nodes")) <= 1:
        return ""
    topo = rec.get("topology") or {}
    per_node = finite(workload.get("gpus_per_node"))
    departures = []
    nics = finite(rec.get("nics_per_node"))
    if per_node and nics and nics < per_node:
        departures.append(
            f"{nics:g} NICs per server for {per_node:g} GPUs (reference: one per GPU)"
        )
    over = finite(topo.get("oversubscription"), 1.0)
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
