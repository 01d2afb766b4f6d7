"""What the recommendation needs from the scenario, the workload plan and the catalog.

Typed inputs only: :class:`~advisor.engine.input.scenario.Scenario`,
:class:`~advisor.engine.model.plans.WorkloadPlan` and
:class:`~advisor.engine.facts.catalog.Catalog`.
The GPU's platform facts (host PCIe generation, reference compute NIC and count, integrated
scale-out ports, storage adapters; docs/MODEL.md "Platform facts") are resolved here once.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from typing import NamedTuple

from advisor.engine.decision.bom import NetworkParts, StorageSpec
from advisor.engine.decision.cost import CostInputs, serving_work, training_work
from advisor.engine.facts.catalog import Catalog
from advisor.engine.facts.catalog.gpus import ASSUMED_PCIE_GEN, PCIE_X16_GBPS, GpuSpec
from advisor.engine.facts.catalog.network import Nic
from advisor.engine.facts.constants import BYTES_PER_GB
from advisor.engine.facts.vocabulary import (
    FABRIC_IDS,
    INFINIBAND,
    ROCE,
    scale_up_domain,
    scale_up_label,
)
from advisor.engine.facts.weights import served_weight_bytes
from advisor.engine.input.number_format import smaller_release, smaller_serving_precision
from advisor.engine.input.scenario import Scenario
from advisor.engine.model.performance import speed_model_error
from advisor.engine.model.plans import WorkloadPlan
from advisor.engine.model.serving.compute import ServingPlan
from advisor.engine.result.echo import deployment_shape


@dataclass(frozen=True)
class Platform:
    """The GPU server's network facts (from the GPU catalog entry)."""

    gpu_id: str
    gpu_name: str
    vendor: str
    pcie_gen: int
    pcie_known: bool
    reference_nic: Nic | None
    reference_count: int
    reference_fabric: str
    nic_options: tuple[str, ...]
    integrated: bool
    reference_design: str
    storage: StorageSpec
    scale_up: str = "NVLink"
    """The server's GPU-to-GPU links as a customer names them (``vocabulary.scale_up_label``)."""
    on_board_nics: tuple[str, ...] = ()
    """The compute NICs that come with its servers (``GpuSpec.on_board_nic_skus``), which
    :func:`candidates.compute_nics` offers at no price (``Nic.as_bought``)."""

    @property
    def slot_gbps(self) -> float:
        return PCIE_X16_GBPS.get(self.pcie_gen, PCIE_X16_GBPS[ASSUMED_PCIE_GEN])

    @property
    def reference_gbps(self) -> int:
        return self.reference_nic.port_gbps if self.reference_nic else 400

    @property
    def reference_cards(self) -> int:
        """Compute cards per server at the reference (the reference count over the reference
        card's links: 8 on HGX, one baseboard of integrated ports on Gaudi 3)."""
        links = self.reference_nic.links if self.reference_nic is not None else 1
        return max(1, self.reference_count // max(1, links))

    @property
    def reference_card_gbps(self) -> int:
        """One reference card's total line rate (800 for a ConnectX-8 at XDR)."""
        if self.reference_nic is None:
            return 400
        return self.reference_nic.port_gbps * max(1, self.reference_nic.links_per_port)

    def nic_standing(self, nic: Nic) -> int:
        """0: the platform's reference NIC; 1: a NIC its vendor publishes; 2: another."""
        if self.reference_nic is not None and nic.sku == self.reference_nic.sku:
            return 0
        if nic.sku in self.nic_options:
            return 1
        return 2


def platform_of(gpu: GpuSpec, parts: NetworkParts, gpus_per_node: int) -> Platform:
    ref: Nic | None = None
    if gpu.reference_nic_sku:
        with contextlib.suppress(KeyError):
            item = parts.find(gpu.reference_nic_sku)
            if isinstance(item, Nic):
                ref = item.as_bought(gpu.on_board_nic_skus)
    count = gpu.reference_nic_count or gpus_per_node
    if gpus_per_node != gpu.gpus_per_server and not gpu.integrated_scaleout:
        # a smaller server than the platform's: keep one NIC per GPU
        count = max(1, round(count * gpus_per_node / max(1, gpu.gpus_per_server)))
    fabric = gpu.reference_fabric if gpu.reference_fabric in FABRIC_IDS else INFINIBAND
    if ref is not None and not ref.serves(fabric):
        fabric = ROCE
    return Platform(
        gpu_id=gpu.id,
        gpu_name=gpu.name,
        vendor=gpu.vendor,
        pcie_gen=gpu.host_pcie_gen or ASSUMED_PCIE_GEN,
        pcie_known=gpu.host_pcie_gen > 0,
        reference_nic=ref,
        reference_count=count,
        reference_fabric=fabric,
        nic_options=tuple(gpu.nic_options),
        integrated=gpu.integrated_scaleout and ref is not None,
        on_board_nics=gpu.on_board_nic_skus,
        reference_design=gpu.reference_design
        or f"one {ref.port_gbps if ref else 400}G NIC per GPU, rail-optimized, non-blocking "
        "(HGX practice; no published design recorded for this GPU)",
        storage=StorageSpec.for_gpu(gpu),
        scale_up=scale_up_label(gpu.scaleup_kind),
    )


class ReleaseServed(NamedTuple):
    """What the publisher's smaller release serves where the scenario's 16 bits fall short."""

    rate: float
    """Requests/s within both p95 targets on the same servers and design."""
    needs_fabric: bool
    """Whether its deployment there needs a GPU compute fabric: Llama 3.1 405B's FP8 replicas
    fit one H100 server, its BF16 ones span two."""


@dataclass(frozen=True)
class ServingAsk:
    """What a serving scenario asks for and how the engine deploys it (for the headline)."""

    requests_per_s: float | None
    """The open-loop arrival rate asked; ``None``: a closed loop of ``users``."""
    users: int
    output_tokens: int
    target_ttft_ms: float
    target_ms_per_token: float
    deployment: str
    """``replicas``, ``split`` or ``disaggregated``."""
    shape: str
    """The deployment in words, e.g. ``4 x TP2 replicas``."""
    tp: int
    gpu_name: str
    tp_given: bool = False
    """The tensor-parallel size is the scenario's own (``parallelism`` given), not one the
    deployment search chose over the wider ones it weighed."""
    smaller_precision: str = ""
    """The largest smaller number format the GPU serves the model in
    (``number_format.smaller_serving_precision``); "" where none is smaller."""
    kv_bytes_per_request: float = 0.0
    """Bytes of one request's KV cache (what a disaggregated deployment moves per request)."""
    servers_per_copy: int = 1
    """Servers one copy of the deployment occupies (a TP16 replica on 8-GPU servers: 2), so
    that more servers are said in whole copies."""
    whole_copies: bool = True
    """The deployment is whole copies of ``servers_per_copy`` servers, each serving on its own,
    so fewer copies serve proportionally less; not so one disaggregated deployment over every
    server, whose pools the engine balances anew at each size (Llama 3.1 405B on 4 B200
    servers serves 11.2 requests/s within the targets as 3 prefill + 1 decode servers, on 2
    servers 4.0 as 1 + 1, not half)."""
    pools: str = ""
    """Where a disaggregated deployment's pools run (:func:`pool_placement`); "" otherwise."""
    release: str = ""
    """The publisher's smaller release the scenario could serve instead of its 16 bits
    (``number_format.smaller_release``: Meta's FP8 Llama 3.1 405B on H200); "" where none."""
    release_served: ReleaseServed | None = None
    """What that release serves on the same servers and design, computed only for an answer
    that falls short (``decision.release``); ``None`` otherwise."""

    @property
    def closed_loop(self) -> bool:
        """A closed loop of ``users`` was asked, not an open arrival rate."""
        return self.requests_per_s is None


@dataclass(frozen=True)
class JobFacts:
    """What the recommendation needs from the scenario and the workload plan."""

    workload: str
    gpus: int
    nodes: int
    gpus_per_node: int
    needs_compute_fabric: bool
    why_no_fabric: str
    total_tokens: float
    target_ms_per_token: float | None
    costs: CostInputs
    utilization: float
    allow_oversubscription: bool
    network_budget_usd: float | None
    team_skills: str
    prefer: str
    gpu_id: str
    params: float
    served_weight_bytes: float
    """Bytes of the served checkpoint (:func:`facts.weights.served_weight_bytes`)."""
    loaded_weight_bytes: float
    """Bytes a serving cluster loads from storage to start (:func:`_loaded_weight_bytes`):
    every replica and instance holds its own copy of the weights."""
    platform: Platform
    storage_write_gbytes_per_s: float | None = None
    """The storage system's write rate the customer states (checkpoint time)."""
    kv_only: bool = False
    """Disaggregated serving whose prefill and decode instances each fit one NVLink domain:
    only the KV cache crosses the network (once per request), not every generated token."""
    pipeline_only: bool = False
    """Serving whose instances span servers only between pipeline stages (tensor-parallel and
    expert groups inside a scale-up domain): per token only a stage's activations cross the
    network, so the fabric is sized by the serving traffic, as for ``kv_only``."""
    tp_crosses: bool = False
    """Serving whose tensor-parallel group spans servers (TP16 on two 8-GPU servers): each
    layer's all-reduces cross the network every token, so the rate within the targets hangs
    on the fabric's latency and the design is held to the reference network's rate."""
    serving: ServingAsk | None = None
    domain_gpus: int = 0
    """GPUs per scale-up domain of the job (a server, or an NVL72 rack); 0: a server."""
    replica_gpus: int = 0
    """GPUs of one model copy of the plan (tp x pp x ep)."""
    work: str = ""
    """What the job's cost covers, as its sentences name it ("training run of 15T tokens",
    "30 days serving")."""
    speed_error: tuple[float, float] = (1.0, 1.0)
    """(low, high) factors of the model's own error on the speed figure
    (:func:`model.performance.speed_model_error`): the part of the speed range that moves
    computing and waiting alike, where the rest is the network's own spread."""

    @property
    def whole_request_units(self) -> str:
        """Which parts of a fabric-free fleet of replicas serve whole requests on their own
        (:func:`serving_units`): "each of the 18 servers", "each of the 4 NVLink domains", or
        "each replica" where one NVLink domain holds them all."""
        domains = serving_units(self.nodes, self.gpus_per_node, self.domain_gpus, self.replica_gpus)
        if not domains:
            return f"each of the {self.nodes:,} servers"
        return f"each of the {domains:,} NVLink domains" if domains > 1 else "each replica"

    @property
    def weight_copy_holder(self) -> str:
        """What holds one copy of a serving fleet's weights (the storage sentence's "each ...
        holding its own copy"): each replica, or each prefill and decode instance."""
        split = self.serving is not None and self.serving.deployment == "disaggregated"
        return "prefill and decode instance" if split else "replica"

    @property
    def inference(self) -> bool:
        return self.workload == "inference"

    @property
    def serving_sized(self) -> bool:
        """A serving fabric sized by its serving traffic, not by the training reference: only
        KV caches, or only pipeline activations, cross servers (docs/MODEL.md 15.2)."""
        return self.inference and (self.kv_only or self.pipeline_only)

    @property
    def held_to_reference(self) -> bool:
        """A serving deployment whose rate within the targets the design must keep (within
        the tie band of the reference network's, docs/MODEL.md 15.2): a fabric sized by its
        serving traffic, or tensor-parallel groups across servers."""
        return self.serving_sized or self.tp_crosses

    @property
    def perf_key(self) -> str:
        return "ms_per_token" if self.inference else "step_time_s"


def job_facts(
    scenario: Scenario, workload: WorkloadPlan, catalog: Catalog, parts: NetworkParts
) -> JobFacts:
    nodes = workload.nodes
    needs = workload.needs_compute_fabric and nodes > 1
    plan = workload.plan
    replica = plan.tp * plan.pp * max(1, plan.ep)  # GPUs of one model copy
    why = ""
    if not needs:
        if nodes <= 1:
            link = scale_up_label(scenario.gpu.scaleup_kind)
            why = f"the job runs inside one server ({scenario.gpus} GPUs over {link})"
        elif (
            scenario.workload == "inference"
            and workload.inference is not None
            and workload.inference.serving is not None
            and not workload.inference.serving.colocated
        ):
            why = _disaggregated_why(scenario, workload, workload.inference.serving)
        elif scenario.workload == "inference":
            why = _replicas_why(scenario, workload, replica)
        elif scenario.gpus <= workload.domain_gpus:
            why = f"all {scenario.gpus} GPUs share one NVLink domain of {workload.domain_gpus} GPUs"
        else:
            why = "no traffic of the job crosses servers"
    constraints = scenario.constraints
    costs = CostInputs(
        gpu_pricing=constraints.gpu_pricing,
        gpu_hour_usd=constraints.gpu_hour_usd,
        electricity_usd_per_kwh=constraints.electricity_usd_per_kwh,
        pue=constraints.pue,
        amortization_years=constraints.amortization_years,
        gpu_price_usd=scenario.gpu.price_usd,
        gpu_power_w=scenario.gpu.power_w,
    )
    target = scenario.inference.target_ms_per_token if scenario.inference is not None else None
    return JobFacts(
        workload=scenario.workload,
        gpus=scenario.gpus,
        nodes=nodes,
        gpus_per_node=scenario.gpus_per_node,
        needs_compute_fabric=needs,
        why_no_fabric=why,
        total_tokens=scenario.training.total_tokens if scenario.training is not None else 0.0,
        work=serving_work()
        if scenario.workload == "inference"
        else training_work(
            scenario.training.total_tokens if scenario.training is not None else 0.0
        ),
        target_ms_per_token=float(target) if target else None,
        costs=costs,
        utilization=constraints.utilization,
        allow_oversubscription=constraints.allow_oversubscription,
        network_budget_usd=constraints.network_budget_usd,
        team_skills=constraints.team_skills,
        prefer=constraints.prefer,
        gpu_id=scenario.gpu.id,
        params=scenario.model.params,
        served_weight_bytes=served_weight_bytes(scenario.model, scenario.precision),
        loaded_weight_bytes=_loaded_weight_bytes(scenario, workload),
        platform=platform_of(scenario.gpu, parts, scenario.gpus_per_node),
        kv_only=_kv_only(workload),
        pipeline_only=_pipeline_only(workload),
        tp_crosses=_tp_crosses(workload),
        storage_write_gbytes_per_s=constraints.storage_write_gbytes_per_s,
        serving=_serving_ask(scenario, workload),
        domain_gpus=workload.domain_gpus,
        replica_gpus=replica,
        speed_error=speed_model_error(scenario),
    )


def _loaded_weight_bytes(scenario: Scenario, workload: WorkloadPlan) -> float:
    """Bytes a serving cluster loads from storage to start: each GPU its instances run on
    loads its share of the weights (every replica, and every prefill and decode instance,
    holds its own copy), over the deployment's pools; one checkpoint without a serving plan."""
    serving = workload.inference.serving if workload.inference is not None else None
    if serving is None:
        return served_weight_bytes(scenario.model, scenario.precision)
    pools = (serving.decode,) if serving.colocated else (serving.prefill, serving.decode)
    return sum(pool.placed_gpus * pool.weights_gb_per_gpu for pool in pools) * BYTES_PER_GB


def serving_units(nodes: int, gpus_per_node: int, domain_gpus: int, replica_gpus: int) -> int:
    """The NVLink domains whose servers a fabric-free serving fleet's replicas span (each
    domain then serves whole requests on its own, its servers not), or 0 where a replica fits
    one server and every server serves whole requests: EP64 on GB200 NVL72 trays spans 16 of a
    rack's 18 trays, TP8 on 8-GPU servers one server.  A partial rack is a domain of its own."""
    if replica_gpus <= gpus_per_node or domain_gpus <= gpus_per_node:
        return 0
    return max(1, math.ceil(nodes / max(1, domain_gpus // gpus_per_node)))


def _replicas_why(scenario: Scenario, workload: WorkloadPlan, replica: int) -> str:
    """Why replicas inside a scale-up domain need no compute fabric."""
    nodes, dom = workload.nodes, workload.domain_gpus
    domains = serving_units(nodes, scenario.gpus_per_node, dom, replica)
    where = scale_up_domain(dom, scenario.gpus_per_node)
    fits = f"each inference replica fits one {where} ({replica} of {dom} GPUs)"
    if not domains:
        return f"{fits}, so the {nodes:,} servers serve requests independently"
    if domains == 1:
        return f"{fits}, and the cluster is one NVLink domain of {nodes:,} servers"
    return (
        f"{fits}, so the {domains:,} NVLink domains ({nodes:,} servers) serve requests "
        "independently"
    )


def _disaggregated_why(scenario: Scenario, workload: WorkloadPlan, sp: ServingPlan) -> str:
    """Why a disaggregated deployment needs no compute fabric."""
    nodes, dom = workload.nodes, workload.domain_gpus
    stay = " and every expert all-to-all stay" if scenario.model.is_moe else " stays"
    if sp.kv_inside_domain and dom <= scenario.gpus_per_node:
        return (
            f"every server holds its own prefill and decode pools, so each request's KV "
            f"cache moves over the server's {scale_up_label(scenario.gpu.scaleup_kind)} and "
            f"the {nodes:,} servers serve requests "
            "independently"
        )
    if sp.kv_inside_domain and scenario.gpus > dom:
        return (
            f"every NVLink domain of {dom} GPUs holds its own prefill and decode pools, so each "
            f"request's KV cache{stay} on NVLink/NVSwitch and the domains serve requests "
            "independently"
        )
    return (
        f"prefill and decode pools share one NVLink domain of {dom} GPUs, so the KV cache and "
        "every expert all-to-all stay on NVLink/NVSwitch"
    )


def _serving_ask(scenario: Scenario, workload: WorkloadPlan) -> ServingAsk | None:
    inf = scenario.inference
    serving_plan = workload.inference.serving if workload.inference is not None else None
    if inf is None or serving_plan is None:
        return None
    plan = workload.plan
    shape = deployment_shape(
        serving_plan.deployment, plan, serving_plan.prefill, serving_plan.decode
    )
    return ServingAsk(
        requests_per_s=inf.requests_per_s,
        users=inf.concurrent_requests,
        output_tokens=inf.output_tokens,
        target_ttft_ms=inf.target_ttft_ms,
        target_ms_per_token=inf.target_ms_per_token,
        deployment=serving_plan.deployment,
        shape=shape,
        tp=plan.tp,
        gpu_name=scenario.gpu.name,
        tp_given=plan.source == "explicit",
        smaller_precision=smaller_serving_precision(
            scenario.model, scenario.gpu, scenario.precision
        )
        or "",
        kv_bytes_per_request=serving_plan.kv_bytes_per_request,
        servers_per_copy=_servers_per_copy(scenario, workload, serving_plan),
        whole_copies=serving_plan.colocated
        or serving_plan.kv_inside_domain
        or serving_plan.copies > 1,
        pools=""
        if serving_plan.colocated
        else pool_placement(serving_plan, scenario.gpus_per_node),
        release=smaller_release(scenario.model, scenario.gpu, scenario.precision) or "",
    )


def pool_placement(sp: ServingPlan, gpus_per_node: int) -> str:
    """Where a disaggregated deployment's prefill and decode pools run, as the rationale says
    it: "separate servers (2 prefill, 1 decode)" when each pool has whole servers of its own,
    else their GPUs ("separate GPUs (20 prefill, 12 decode, over 4 servers)"): copies of
    whole-server pools beside a server that runs both count that server in one pool, which
    read "(3 prefill, 1 decode)" for 3 x TP4 decode instances, 12 GPUs on 8-GPU servers."""
    pre, dec = sp.prefill, sp.decode
    if pre.gpus == pre.servers * gpus_per_node and dec.gpus == dec.servers * gpus_per_node:
        return f"separate servers ({pre.servers:,} prefill, {dec.servers:,} decode)"
    return f"separate GPUs ({pre.gpus:,} prefill, {dec.gpus:,} decode, over {sp.servers:,} servers)"


def _servers_per_copy(scenario: Scenario, workload: WorkloadPlan, sp: ServingPlan) -> int:
    """Servers one independent copy of the serving deployment occupies, so that more or fewer
    servers are said in whole copies: a colocated replica's (TP16 on 8-GPU servers: 2); a
    disaggregated deployment copied over the cluster, its copy's; one whose KV cache stays
    inside each scale-up domain, the domain's (a server holding its own pools: 1); otherwise
    1: one deployment over every server, whose pools grow or shrink a server at a time."""
    gpn = scenario.gpus_per_node
    if sp.colocated and workload.inference is not None:
        return max(1, math.ceil(workload.inference.gpus_per_replica / gpn))
    if sp.copies > 1 and sp.copy_servers:
        return sp.copy_servers
    if sp.kv_inside_domain:
        return max(1, min(workload.nodes, workload.domain_gpus // gpn))
    return 1


def _tp_crosses(workload: WorkloadPlan) -> bool:
    """True when a colocated serving plan's tensor-parallel group spans servers."""
    inference = workload.inference
    return bool(
        inference is not None
        and inference.serving is not None
        and inference.serving.colocated
        and inference.tp_layout.crosses_network
    )


def _pipeline_only(workload: WorkloadPlan) -> bool:
    """True when a serving plan's instances cross servers only between pipeline stages: its
    tensor-parallel and expert groups stay inside a scale-up domain (vLLM's distributed-serving
    guide: tensor parallel inside a node, pipeline parallel across nodes; multi-node tensor
    parallel needs InfiniBand-class networking; docs/MODEL.md 15.2)."""
    inference = workload.inference
    if inference is None or inference.serving is None:
        return False
    return (
        inference.pp_crosses_network
        and not inference.tp_layout.crosses_network
        and not inference.ep_layout.crosses_network
    )


def _kv_only(workload: WorkloadPlan) -> bool:
    """True when only the KV cache crosses servers (disaggregated, instances inside a domain)."""
    serving_plan = workload.inference.serving if workload.inference is not None else None
    if serving_plan is None:
        return False
    # a colocated (split) plan or an expert group wider than a domain sends activations or
    # expert all-to-all across servers every token, not only KV caches
    return not serving_plan.colocated and all(
        pool.gpus_per_instance <= workload.domain_gpus and pool.ep <= workload.domain_gpus
        for pool in (serving_plan.prefill, serving_plan.decode)
    )
