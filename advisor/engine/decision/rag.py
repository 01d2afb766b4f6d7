"""Retrieval pipelines (RAG): the network between the tiers, and the answer that says so.

The generation tier is the scenario's serving fleet, answered by the serving model and the
recommendation like any other (a GPU compute fabric only where generation itself needs one).
This module adds what a retrieval pipeline brings (docs/MODEL.md section 21): the embedding and
vector-search servers on ordinary low-latency Ethernet, sized for the tiers' traffic, uplinked
to the generation servers' front-end (storage / in-band) network; its parts ride with that
network in every design's price, and the answer names the pipeline in its headline.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from advisor.engine.decision.bom import (
    STORAGE_CORE_UPLINKS,
    STORAGE_OVERSUBSCRIPTION,
    STORAGE_PORTS_PER_SERVER,
    BomError,
    BomLine,
    NetworkParts,
    StoragePlan,
    choose_link_kit,
    kit_lines,
    line,
    nic_cage,
    switch_cage,
    tor_switch,
    totals,
)
from advisor.engine.errors import ScenarioError
from advisor.engine.facts.catalog.network import Nic, Switch
from advisor.engine.facts.constants import (
    EMBEDDING_LATENCY_S,
    EMBEDDING_QUERIES_PER_S_PER_SERVER,
    HNSW_BYTES_PER_LINK,
    HNSW_LINKS,
    TEXT_BYTES_PER_TOKEN,
    VECTOR_INDEX_MEMORY_HEADROOM,
    VECTOR_SEARCH_LATENCY_S,
    VECTOR_SEARCH_QUERIES_PER_S_PER_SERVER,
    VECTOR_SERVER_MEMORY_BYTES,
)
from advisor.engine.facts.formatting import usd
from advisor.engine.facts.vocabulary import (
    ETHERNET,
    GENERATION_TIER,
    RAG_TIER_LABELS,
    RETRIEVAL,
    fabric_label,
    scale_up_domain,
    scale_up_label,
)
from advisor.engine.input.scenario import Scenario
from advisor.engine.model.plans import WorkloadPlan, domain_gpus
from advisor.engine.model.rag import RagPlan, embedded_tokens, network_s, plan_rag
from advisor.engine.model.serving.load import offered_load
from advisor.engine.model.topology import IN_RACK_LINK_M, SPINE_LINK_M
from advisor.engine.result.records import (
    Assumption,
    Metrics,
    RagAnswer,
    RagNetwork,
    Recommendation,
)


@dataclass(frozen=True)
class TierNetwork:
    """The retrieval tiers' Ethernet: adapters, leaves, cables (network ``retrieval``)."""

    plan: RagPlan
    nic: Nic
    ports_per_server: int
    switch: Switch
    leaves: int
    uplink_gbps: int
    uplinks_per_leaf: int
    lines: tuple[BomLine, ...]

    @property
    def gbps(self) -> int:
        return self.nic.port_gbps

    @property
    def capex_usd(self) -> float:
        return totals(self.lines)[0]


def tier_nic(parts: NetworkParts, busiest_gbits_per_s: float) -> Nic:
    """The slowest Ethernet adapter (then the cheapest per port) one of whose ports carries
    the busiest tier server's traffic with the front-end's 2:1 headroom; the second port of a
    dual-homed server is for redundancy, not bandwidth."""
    nics = [n for n in parts.nics if n.serves(ETHERNET) and not n.integrated and n.use == "any"]
    if not nics:
        raise BomError("no Ethernet adapter in the catalog for the retrieval tiers")
    fits = [n for n in nics if busiest_gbits_per_s * STORAGE_OVERSUBSCRIPTION <= n.port_gbps]
    pool = fits or [max(nics, key=lambda n: n.port_gbps)]
    return min(pool, key=lambda n: (n.port_gbps, n.unit_price_usd / n.ports))


def _leaf_shape(plan: RagPlan, radix: int, nic_gbps: int, uplink_gbps: int) -> tuple[int, int]:
    """(servers per leaf, uplinks per leaf): the most of the tiers' servers a leaf of
    ``radix`` ports at ``nic_gbps`` takes while its uplinks to the front-end network carry
    those servers' share of the tiers' traffic with 2:1 headroom (at least the front-end's own
    count; an uplink takes ``uplink_gbps / nic_gbps`` of the ports); (0, 0) when not one
    server's share fits.  One leaf pair carries the whole traffic, as each leaf did before."""
    servers = plan.retrieval_servers
    traffic = sum(f.gbits_per_s for f in plan.flows) * STORAGE_OVERSUBSCRIPTION
    ports_per_uplink = max(1, uplink_gbps // nic_gbps)
    for down in range(min(servers, radix), 0, -1):
        uplinks = max(STORAGE_CORE_UPLINKS, math.ceil(traffic * down / servers / uplink_gbps))
        if down + uplinks * ports_per_uplink <= radix:
            return down, uplinks
    return 0, 0


def _too_much_traffic(s: Scenario, plan: RagPlan, switch: Switch) -> ScenarioError:
    """The refusal when not one server's share of the tiers' traffic fits a leaf's uplinks,
    naming the load field (the rate, or the closed loop's users) and the prompt."""
    assert s.inference is not None
    field = "inference.requests_per_s" if s.inference.open_loop else "inference.concurrent_requests"
    traffic = sum(f.gbits_per_s for f in plan.flows)
    return ScenarioError.single(
        field,
        f"at {plan.queries_per_s:,.0f} questions/s the retrieval tiers move "
        f"{bit_rate(traffic)}, more than the uplinks of a {switch.display_name} leaf carry "
        f"for each of their {plan.retrieval_servers:,} servers: a lower load or shorter "
        "prompts (inference.prompt_tokens) would fit",
    )


def _tier_lines(net: TierNetwork, parts: NetworkParts) -> list[BomLine]:
    nic, switch, gbps = net.nic, net.switch, net.gbps
    servers = net.plan.retrieval_servers
    cards = max(1, math.ceil(net.ports_per_server / nic.ports))
    lines = [
        line(nic, servers * cards, RETRIEVAL, "rag-nic"),
        line(switch, net.leaves, RETRIEVAL, "rag-switch"),
    ]
    sw_cage = switch_cage(switch, gbps)
    kit = choose_link_kit(parts, ETHERNET, gbps, IN_RACK_LINK_M, sw_cage, nic_cage(nic), "nic")
    lines.extend(kit_lines(kit, servers * net.ports_per_server, RETRIEVAL, "server-link"))
    up_cage = switch_cage(switch, net.uplink_gbps)
    up = choose_link_kit(parts, ETHERNET, net.uplink_gbps, SPINE_LINK_M, up_cage, up_cage, "switch")
    lines.extend(kit_lines(up, net.leaves * net.uplinks_per_leaf, RETRIEVAL, "core-uplink"))
    return lines


def tier_network(parts: NetworkParts, s: Scenario, w: WorkloadPlan) -> TierNetwork:
    """The retrieval tiers' network for a RAG scenario: every server dual-homed to two leaves
    racked with it (copper), each leaf uplinked to the generation servers' front-end network
    at its fastest port speed (docs/MODEL.md sections 12 and 21).  A closed loop of users asks
    the rate it settles at on ``w``'s serving deployment."""
    serving = w.inference.serving if w.inference is not None else None
    closed = s.inference is not None and s.inference.requests_per_s is None
    users = offered_load(s, serving).rate if serving is not None and closed else None
    plan = plan_rag(s, users)
    nic = tier_nic(parts, plan.busiest_gbits_per_s)
    switch = tor_switch(parts, nic.port_gbps)
    uplink_gbps = max(speed for speed, _ in switch.radix_by_gbps)
    radix = switch.radix_at(nic.port_gbps) or 0
    down, uplinks = _leaf_shape(plan, radix, nic.port_gbps, uplink_gbps)
    if down < 1:
        raise _too_much_traffic(s, plan, switch)
    ports = STORAGE_PORTS_PER_SERVER
    leaves = ports * math.ceil(plan.retrieval_servers / down)
    draft = TierNetwork(plan, nic, ports, switch, leaves, uplink_gbps, uplinks, ())
    return dataclasses.replace(draft, lines=tuple(_tier_lines(draft, parts)))


def with_tier_network(storage: StoragePlan, net: TierNetwork) -> StoragePlan:
    """The front-end network with the retrieval tiers' parts: priced in every design (they
    are north-south traffic, the same whatever GPU fabric the generation tier gets)."""
    return dataclasses.replace(storage, lines=(*storage.lines, *net.lines))


def tier_lines_of(storage: StoragePlan) -> tuple[BomLine, ...]:
    """The retrieval tiers' lines carried by a front-end plan (kept when it is re-planned)."""
    return tuple(ln for ln in storage.lines if ln.network == RETRIEVAL)


# ------------------------------------------------------------------------------ the answer


def _first_token(net: TierNetwork, metrics: Metrics) -> dict[str, float | None]:
    """Retrieval (embedding, vector search, the tiers' network) then the generation tier's
    p95 time to first token; no total when the generation tier is saturated (its queue,
    not the pipeline, sets the wait, and the headline says so)."""
    network_ms = network_s(net.plan, net.gbps) * 1e3
    retrieval_ms = net.plan.retrieval_compute_s * 1e3 + network_ms
    generation = metrics.ttft_ms_p95 if metrics.ttft_ms_p95 is not None else metrics.ttft_ms
    generation_ms = float(generation) if isinstance(generation, int | float) else None
    saturated = bool(metrics.load_saturated)
    total = retrieval_ms + generation_ms if generation_ms is not None and not saturated else None
    return {
        "network_ms": network_ms,
        "retrieval_ms": retrieval_ms,
        "generation_ttft_ms": generation_ms,
        "first_token_ms": total,
    }


def _tier_sentence(net: TierNetwork) -> str:
    plan = net.plan
    embed, vector = plan.tiers[0], plan.tiers[1]
    traffic = sum(f.gbits_per_s for f in plan.flows)
    busiest = plan.busiest_gbits_per_s
    return (
        f"Retrieval tiers on ordinary low-latency Ethernet: {embed.servers} embedding and "
        f"{vector.servers} vector-search servers, {net.ports_per_server} x {net.gbps}G each "
        f"({net.nic.display_name}, part {net.nic.part_number}) on {net.leaves} x "
        f"{net.switch.display_name} (part {net.switch.part_number}), uplinked to the "
        f"generation servers' front-end network; {usd(net.capex_usd)}. At "
        f"{plan.queries_per_s:,.1f} questions/s the tiers move {bit_rate(traffic)} in all and "
        f"the busiest server {bit_rate(busiest)}, far below one {net.gbps}G port: no RDMA, no "
        "lossless configuration, no GPU fabric between tiers."
    )


def bit_rate(gbits_per_s: float) -> str:
    """A traffic figure in the unit people read it in: Mb/s below 1 Gb/s."""
    if gbits_per_s < 1:
        return f"{gbits_per_s * 1e3:,.2f} Mb/s"
    return f"{gbits_per_s:,.1f} Gb/s"


def _flow_sentence(net: TierNetwork) -> str:
    plan = net.plan
    parts = ", ".join(f"{f.name} {f.bytes_per_query / 1e3:,.1f} kB" for f in plan.flows)
    return (
        f"Per question ({plan.rate_basis}: {plan.queries_per_s:,.1f}/s): {parts}. The prompt "
        f"holds {plan.context_tokens:,} retrieved tokens and {plan.question_tokens:,} of "
        f"question and instructions (the embedding model reads the first "
        f"{embedded_tokens(plan):,})."
    )


def _latency_sentence(times: dict[str, float | None], target_ms: float) -> str:
    network = times["network_ms"] or 0.0
    retrieval = times["retrieval_ms"] or 0.0
    total = times["first_token_ms"]
    head = (
        f"Retrieval adds {retrieval:,.1f} ms before generation starts (embedding and vector "
        f"search; the network's share is {network:,.2f} ms)"
    )
    if total is None:
        return (
            f"{head}; the generation tier is saturated at this rate, so the first token waits "
            "in its queue (the headline says what would carry the load)."
        )
    verdict = "within" if total <= target_ms else "over"
    return (
        f"{head}: first token after {total:,.0f} ms with the generation tier's p95 "
        f"{times['generation_ttft_ms'] or 0.0:,.0f} ms, {verdict} the {target_ms:,.0f} ms target."
    )


RETRIEVAL_SHORT_WORDS = "Retrieval tiers fall short"
"""How the headline opens its sentence on given tiers too small for the load."""


def shortfall_sentence(net: TierNetwork) -> str | None:
    """Given tier sizes too small for the load, or a server busier than the fastest adapter
    carries with the front-end's headroom: said with the numbers, None when neither."""
    plan = net.plan
    parts = [
        f"{t.servers:,} {RAG_TIER_LABELS[t.role]} server{'s' if t.servers != 1 else ''} where "
        f"{t.needed_servers:,} carry {plan.queries_per_s:,.1f} questions/s"
        for t in plan.tiers
        if t.role != GENERATION_TIER and t.servers < t.needed_servers
    ]
    busiest = plan.busiest_gbits_per_s
    if busiest * STORAGE_OVERSUBSCRIPTION > net.gbps:
        parts.append(
            f"the busiest server moves {bit_rate(busiest)}, more than one {net.gbps}G port "
            "carries with 2:1 headroom (spread the tier over more servers)"
        )
    if not parts:
        return None
    return f"{RETRIEVAL_SHORT_WORDS}: " + "; ".join(parts) + "."


def _generation_sentence(rec: Recommendation, domain: str) -> str:
    """The generation tier's network; ``domain``: where a replica's GPU traffic stays ("its
    server, on Infinity Fabric")."""
    if rec.needs_compute_fabric:
        return (
            f"The generation tier needs a GPU compute fabric of its own "
            f"({fabric_label(rec.fabric)}, {rec.nics_per_node} x "
            f"{rec.nic_gbps}G per server): the model is split or disaggregated across "
            "servers, so its traffic crosses them every token; the retrieval tiers never use it."
        )
    return (
        "The generation tier needs no GPU compute fabric: each replica's traffic stays inside "
        f"{domain}, so the pipeline runs on Ethernet end to end."
    )


def rag_answer(
    rec: Recommendation, metrics: Metrics, net: TierNetwork, target_ttft_ms: float, domain: str
) -> RagAnswer:
    """The result's ``rag`` record: tiers, flows, the tier network and the first-token time
    (``domain``: :func:`_generation_sentence`'s)."""
    plan = net.plan
    times = _first_token(net, metrics)
    total = times["first_token_ms"]
    short = shortfall_sentence(net)
    statements = (
        _tier_sentence(net),
        *([short] if short else []),
        _flow_sentence(net),
        _latency_sentence(times, target_ttft_ms),
        _generation_sentence(rec, domain),
    )
    return RagAnswer(
        queries_per_s=plan.queries_per_s,
        rate_basis=plan.rate_basis,
        question_tokens=plan.question_tokens,
        context_tokens=plan.context_tokens,
        index_bytes=plan.index_bytes,
        tiers=plan.tiers,
        flows=plan.flows,
        network=RagNetwork(
            nic_sku=net.nic.sku,
            nic_part_number=net.nic.part_number,
            nic_name=net.nic.display_name,
            port_gbps=net.gbps,
            ports_per_server=net.ports_per_server,
            servers=plan.retrieval_servers,
            switch_sku=net.switch.sku,
            switch_part_number=net.switch.part_number,
            switch_name=net.switch.display_name,
            switches=net.leaves,
            capex_usd=round(net.capex_usd, 2),
            busiest_gbits_per_s=plan.busiest_gbits_per_s,
        ),
        network_ms=times["network_ms"] or 0.0,
        retrieval_ms=times["retrieval_ms"] or 0.0,
        generation_ttft_ms=times["generation_ttft_ms"],
        first_token_ms=total,
        target_ttft_ms=target_ttft_ms,
        meets_target=total is not None and total <= target_ttft_ms,
        compute_fabric=rec.needs_compute_fabric,
        statements=statements,
    )


def add_rag_answer(
    rec: Recommendation, metrics: Metrics, net: TierNetwork, s: Scenario
) -> tuple[Recommendation, RagAnswer]:
    """Name the pipeline in the answer: the ``rag`` record, and the recommendation with the
    pipeline in its headline and rationale."""
    target = s.inference.target_ttft_ms if s.inference is not None else 0.0
    where = scale_up_domain(domain_gpus(s), s.gpus_per_node)
    domain = f"its {where}, on {scale_up_label(s.gpu.scaleup_kind)}"
    answer = rag_answer(rec, metrics, net, target, domain)
    generation = RAG_TIER_LABELS[GENERATION_TIER]
    late = (
        ""
        if answer.meets_target or answer.first_token_ms is None
        else (
            f" With retrieval the first token comes after "
            f"{answer.first_token_ms or 0.0:,.0f} ms, over the {target:,.0f} ms target."
        )
    )
    head = rec.headline
    if head.startswith("No "):  # "No GPU compute fabric needed" inside the sentence
        head = "no " + head[3:]
    headline = (
        f"RAG pipeline at {net.plan.queries_per_s:,.1f} questions/s: {net.ports_per_server} x "
        f"{net.gbps}G Ethernet for the {net.plan.retrieval_servers} embedding and vector-search "
        f"servers ({usd(net.capex_usd)}); {generation}: {head}{late}"
    )
    short = shortfall_sentence(net)
    if short:
        headline += f" {short}"
    rationale = (*answer.statements, *rec.rationale)
    return dataclasses.replace(rec, headline=headline, rationale=rationale), answer


def rag_assumptions() -> list[Assumption]:
    """What the retrieval figures rest on (docs/MODEL.md section 21)."""
    return [
        Assumption(
            name="Retrieval tiers (RAG)",
            value=f"embedding {EMBEDDING_QUERIES_PER_S_PER_SERVER:,.0f} questions/s per "
            f"server, p99 {EMBEDDING_LATENCY_S * 1e3:g} ms; vector search "
            f"{VECTOR_SEARCH_QUERIES_PER_S_PER_SERVER:,.0f} queries/s per replica, p99 "
            f"{VECTOR_SEARCH_LATENCY_S * 1e3:g} ms; HNSW index N x (D x 4 + {HNSW_LINKS} x "
            f"{HNSW_BYTES_PER_LINK:g}) x {VECTOR_INDEX_MEMORY_HEADROOM:g} bytes on "
            f"{VECTOR_SERVER_MEMORY_BYTES / 2**30:,.0f} GiB servers; {TEXT_BYTES_PER_TOKEN:g} "
            "bytes of text per token",
            unit="",
            source="GigaGPU TEI/Infinity throughput table; a published VectorDBBench Milvus "
            "run; ScyllaDB vector-search sizing; OpenAI tokens guide (docs/MODEL.md 21)",
        )
    ]
