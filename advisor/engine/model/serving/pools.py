"""Serving pools as deployed now: the prefill and decode pools of a deployment (replicas, split
or disaggregated), their balance and the serving plans they make.

Units: seconds, bytes, FLOPs, requests per second unless the name says otherwise.
"""

from __future__ import annotations

import math
from dataclasses import fields, replace
from typing import Any, Final

from advisor.engine.errors import ScenarioError
from advisor.engine.facts.constants import BYTES_PER_GB, WEIGHT_BYTES
from advisor.engine.facts.weights import served_weight_bytes
from advisor.engine.input.scenario import Design, PoolSpec, Scenario
from advisor.engine.model.placement import whole_groups
from advisor.engine.model.plans import _powers_of_two_up_to, domain_gpus
from advisor.engine.model.serving.attention import decimal_usable_bytes, kv_room_bytes
from advisor.engine.model.serving.compute import (
    BISECTION_HALVINGS,
    GB,
    MTP_DRAFT_TOKENS,
    PREFILL_TTFT_SHARE,
    ServingPlan,
    _expert_bytes,
    _max_decode_batch_step,
    decode_step_s,
    dense_prefill_s,
    experts_per_gpu,
    kv_bytes_per_token,
    kv_shards,
    moe_prefill_alone_s,
    prefill_service_s,
)
from advisor.engine.result.echo import ServingPool


def _hashed(record: type[Any], *left_out: str) -> tuple[str, ...]:
    """The fields of the dataclass ``record`` its hash reads, but ``left_out``."""
    return tuple(
        f.name
        for f in fields(record)
        if (f.compare if f.hash is None else f.hash) and f.name not in left_out
    )


_VIEW_SCENARIO = _hashed(Scenario, "gpus")
_VIEW_PLAN = _hashed(ServingPlan, "prefill", "decode", "servers", "copies", "copy_servers")
_VIEW_POOL = _hashed(ServingPool, "servers", "gpus", "instances")


def decode_view(scenario: Scenario, serving_plan: ServingPlan) -> tuple[Any, ...]:
    """``scenario`` and ``serving_plan`` as a decode step reads them (decode_step_s,
    decode_compute_s), as a key: without what sizes the deployment rather than its decode
    instance (the cluster's GPUs beyond one scale-up domain, the prefill pool, the servers,
    copies and instances of the pools), so that deployments of the same instances share what
    they price (the load model's steps, the decode pool's batch at the time-per-token target).
    Field values in a tuple rather than copies of the records (two dataclass copies cost more
    than the look-ups they key)."""
    pool = serving_plan.decode
    return (
        min(scenario.gpus, domain_gpus(scenario)),
        *[getattr(scenario, name) for name in _VIEW_SCENARIO],
        *[getattr(serving_plan, name) for name in _VIEW_PLAN],
        *[getattr(pool, name) for name in _VIEW_POOL],
    )


def _pool(
    scenario: Scenario,
    role: str,
    servers: int,
    tp: int,
    pp: int,
    ep: int,
    context: int,
    gpus: int | None = None,
) -> ServingPool | None:
    """A pool of ``servers`` whole servers (or ``gpus`` GPUs of them), or ``None`` when its
    weights leave no KV room."""
    model = scenario.model
    weight_bytes = WEIGHT_BYTES[scenario.precision]
    gpus = gpus if gpus is not None else servers * scenario.gpus_per_node
    kvb = kv_bytes_per_token(model, scenario.precision, scenario.gpu)
    if ep > 1:
        per_gpu = experts_per_gpu(model, ep)
        slots = per_gpu * ep
        weights = served_weight_bytes(
            model, scenario.precision, model.dense_params
        ) / tp + per_gpu * _expert_bytes(model, weight_bytes)
        gpi = 1 if tp == 1 else tp
        # the attention ranks of the whole expert groups the GPUs hold (EP64 on two 72-GPU
        # NVL72 racks: two groups, 128 ranks; 16 GPUs idle)
        group = max(ep, gpi)
        instances = whole_groups(group, domain_gpus(scenario), gpus) * (group // gpi)
        redundant = slots - model.moe_experts
    else:
        per_gpu, redundant = 0, 0
        weights = served_weight_bytes(model, scenario.precision) / (tp * pp)
        gpi = tp * pp
        instances = whole_groups(gpi, domain_gpus(scenario), gpus)
    kv_req = context * kvb / kv_shards(model, tp, pp)
    # the activation working set of a decode step is small next to the KV cache
    room = kv_room_bytes(scenario.gpu, weights, ep > 1)
    if room <= 0:
        return None
    max_batch = int(room / kv_req)
    if max_batch < 1:
        return None
    per_instance = max_batch
    return ServingPool(
        role=role,
        servers=servers,
        gpus=gpus,
        tp=tp,
        pp=pp,
        ep=ep,
        instances=max(1, instances),
        gpus_per_instance=gpi,
        experts_per_gpu=per_gpu,
        redundant_experts=redundant,
        weights_gb_per_gpu=weights / GB,
        kv_gb_per_request=kv_req / GB,
        max_batch_per_instance=per_instance,
    )


def expert_parallel_widths(scenario: Scenario, dom: int) -> list[int]:
    """Expert-parallel replica widths weighed inside a scale-up domain of ``dom`` GPUs: every
    power of two from 2 up to the domain and the experts, and, on a domain of several servers
    that is not a power of two (an NVL72 rack, or the trays of one a job holds), the whole
    domain, its expert slots rounded up to fill every GPU with redundant copies of experts
    (:func:`compute.experts_per_gpu`): TensorRT-LLM's wide-EP recipe on GB200 NVL72 (backend
    ``WIDEEP``, ``num_slots`` 288 for DeepSeek's 256 experts: 4 a GPU on 72; docs/MODEL.md
    15.2, "Wide EP over the whole rack")."""
    m = scenario.model
    widths = [r for r in _powers_of_two_up_to(dom) if 1 < r <= m.moe_experts]
    if dom > scenario.gpus_per_node and dom & (dom - 1) and dom <= m.moe_experts:
        widths.append(dom)
    return widths


def redundant_experts_note(pool: ServingPool, role: str = "") -> str:
    """The note on an expert-parallel pool whose width does not divide the experts: the routed
    experts each GPU hosts and the redundant copies that fill the slots; empty otherwise."""
    if pool.redundant_experts <= 0:
        return ""
    return (
        f"{role + ' ' if role else ''}EP{pool.ep} hosts {pool.experts_per_gpu} routed experts "
        f"per GPU ({pool.redundant_experts} redundant copies of the busiest experts, as expert "
        "load balancers place them: DeepSeek's EPLB, TensorRT-LLM's wide EP)"
    )


def _holds_a_handful(scenario: Scenario, pool: ServingPool) -> bool:
    """Room for at least 4 requests in :func:`attention.decimal_usable_bytes` less the weights
    (on the binary capacity 70B BF16 decode pools on H100 took TP2 instances of a few requests
    each that saturate, docs/MODEL.md 15.1): the bar a pool's tensor-parallel size is chosen
    by, as before the runtime's KV sizing (``attention.kv_room_bytes``) set its batch."""
    room_gb = decimal_usable_bytes(scenario.gpu) / BYTES_PER_GB - pool.weights_gb_per_gpu
    return room_gb >= 4 * pool.kv_gb_per_request


def _dense_instance(
    scenario: Scenario, role: str, servers: int, context: int
) -> ServingPool | None:
    """Smallest power-of-two tensor-parallel group inside one server that holds the model;
    for a model larger than a server, TP over the server x the fewest pipeline stages (servers)
    that hold it.

    A prefill instance grows further (up to the server) until one prompt's prefill takes at
    most PREFILL_TTFT_SHARE of the time-to-first-token target: long prompts need more GPUs per
    request, not more requests per GPU."""

    model = scenario.model
    inf = scenario.inference
    assert inf is not None
    fitting: list[ServingPool] = []
    tp = 1
    while tp <= scenario.gpus_per_node:
        if model.heads % tp == 0 and (servers * scenario.gpus_per_node) % tp == 0:
            pool = _pool(scenario, role, servers, tp, 1, 1, context)
            # keep at least a handful of requests per instance
            if pool is not None and _holds_a_handful(scenario, pool):
                fitting.append(pool)
                if role != "prefill":
                    return pool
                tokens = inf.prompt_tokens * (1.0 - inf.prefix_cache_hit_rate)
                # one prompt alone (no packing): the latency a request sees
                if model.is_moe:
                    alone = moe_prefill_alone_s(scenario, pool)
                else:
                    alone = dense_prefill_s(scenario, inf.prompt_tokens, tokens, tp, 1, pack=False)
                if alone <= PREFILL_TTFT_SHARE * inf.target_ttft_ms / 1e3:
                    return pool
        tp *= 2
    if fitting:
        return fitting[-1]
    # a model larger than one server: an instance of TP (inside the server) x PP over servers
    # (TP8 x PP2 for Llama 3.1 405B BF16 on 80 GB GPUs), as split replicas are built
    tp = scenario.gpus_per_node
    while tp > 1 and model.heads % tp:
        tp //= 2
    last: ServingPool | None = None
    for pp in range(2, servers + 1):
        if model.layers < pp:
            break
        pool = _pool(scenario, role, servers, tp, pp, 1, context)
        if pool is not None:
            if _holds_a_handful(scenario, pool):
                return pool
            last = last or pool
    return last


def _moe_pool(
    scenario: Scenario, role: str, servers: int, context: int, spec: PoolSpec | None
) -> ServingPool | None:
    """Attention data-parallel + experts over the pool (or ``spec.ep`` GPUs).

    Without ``spec.tp`` the attention and dense layers take the smallest power-of-two tensor-
    parallel group inside one server that leaves room for a handful of requests (SGLang's
    ``--tp`` with ``--enable-dp-attention``: attention TP inside the server when the dense
    weights do not fit one GPU next to its experts)."""
    gpus = servers * scenario.gpus_per_node
    widths = [spec.ep] if spec and spec.ep else _expert_widths(scenario, role, gpus)
    fitting: ServingPool | None = None
    for ep in widths:
        if spec and spec.tp:
            pool = _pool(scenario, role, servers, spec.tp, 1, ep, context)
            if pool is not None and (_holds_a_handful(scenario, pool) or ep == widths[-1]):
                return pool
            fitting = fitting or pool
            continue
        tp = 1
        while tp <= scenario.gpus_per_node:
            if scenario.model.heads % tp == 0 and gpus % tp == 0:
                pool = _pool(scenario, role, servers, tp, 1, ep, context)
                if pool is not None:
                    if _holds_a_handful(scenario, pool):
                        return pool
                    fitting = fitting or pool
            tp *= 2
    return fitting


def _expert_widths(scenario: Scenario, role: str, gpus: int) -> list[int]:
    """Expert-parallel group sizes to try for a pool of ``gpus`` GPUs, preferred first: one
    server (or one NVLink domain, when larger) when it divides the pool, then the whole pool.

    A model whose weights fit one server with room for a handful of requests keeps every
    expert group inside a server: a prefill GPU (attention data-parallel) prefills its own
    prompts at the same FLOPs whatever the group, and a wider decode group only trades expert
    weights per GPU for an all-to-all over the network every token.  Kept at every cluster
    size, as the dense pools inside a server are, so that only KV caches cross servers and the
    fabric does not flip between RDMA for expert traffic and a KV-only network as servers are
    added (docs/MODEL.md 15, Pools).  A model larger than a server spreads its groups over the
    whole pool (DeepSeek-V3 on H800: decode EP72 to EP144, as DeepSeek deploys it)."""
    local = max(scenario.gpus_per_node, domain_gpus(scenario))
    return [local, gpus] if local < gpus and gpus % local == 0 else [gpus]


def _pool_for(
    scenario: Scenario, role: str, servers: int, context: int, spec: PoolSpec | None
) -> ServingPool | None:
    model = scenario.model
    if model.is_moe and (spec is None or spec.ep is None or spec.ep > 1):
        pool = _moe_pool(scenario, role, servers, context, spec)
        if pool is not None or (spec is not None and spec.ep is not None):
            return pool
    if spec is not None and spec.tp is not None:
        return _pool(scenario, role, servers, spec.tp, 1, 1, context)
    return _dense_instance(scenario, role, servers, context)


_DISAGG_POOLS_CACHE: dict[Scenario, ServingPlan | dict[str, list[str]]] = {}
"""The pools :func:`plan_disaggregated` planned (or the field errors it refused with) by
scenario, bounded: the deployment search plans the pools of every smaller server count again
for each cluster size the scaling chart asks for (about a third of the scenarios are new)."""


def plan_disaggregated(scenario: Scenario) -> ServingPlan:
    """Size the prefill and decode pools (given in ``inference.pools`` or balanced here).

    Balance: prefill servers / decode servers = (prompt work per request / prefill rate per
    server) / (output tokens per request / decode rate per server at the time-per-token
    target), both from the compute model alone (the network is priced per design later).
    """
    hit = _DISAGG_POOLS_CACHE.get(scenario)
    if hit is None:
        try:
            hit = _plan_disaggregated(scenario)
        except ScenarioError as err:
            hit = err.field_errors
        if len(_DISAGG_POOLS_CACHE) >= 256:
            _DISAGG_POOLS_CACHE.clear()
        _DISAGG_POOLS_CACHE[scenario] = hit
    if isinstance(hit, dict):
        raise ScenarioError(hit)
    return hit


def _plan_disaggregated(scenario: Scenario) -> ServingPlan:
    inf = scenario.inference
    assert inf is not None
    servers = scenario.nodes
    if servers < 2:
        raise ScenarioError.single(
            "inference.deployment",
            "disaggregated serving across servers needs at least 2 (one prefill, one decode)"
            + (
                # a dense model's pools inside one server are planned before this (15.2)
                "; pools inside one server are modelled for dense models only, not for a "
                "mixture-of-experts model's expert groups"
                if scenario.model.is_moe
                else ""
            ),
        )
    context = inf.prompt_tokens + inf.output_tokens
    pspec, dspec = inf.prefill_pool, inf.decode_pool
    fixed_p = pspec.servers if pspec and pspec.servers else None
    fixed_d = dspec.servers if dspec and dspec.servers else None
    if fixed_p and fixed_d and fixed_p + fixed_d != servers:
        raise ScenarioError.single(
            "inference.pools",
            f"prefill ({fixed_p}) + decode ({fixed_d}) servers must equal the {servers} "
            "servers of the scenario",
        )
    if (fixed_p and fixed_p >= servers) or (fixed_d and fixed_d >= servers):
        raise ScenarioError.single(
            "inference.pools", f"each pool needs at least one of the {servers:,} servers"
        )
    if fixed_p is None and fixed_d is None:
        # the least servers each pool needs to hold the model with KV room for one request
        need_p = _least_pool_servers(scenario, "prefill", inf.prompt_tokens, pspec)
        need_d = _least_pool_servers(scenario, "decode", context, dspec)
        if need_p is None or need_d is None or need_p + need_d > servers:
            raise _too_small(scenario, need_p, need_d)
        fixed_p = _balanced_prefill_servers(
            scenario, context, pspec, dspec, lo=need_p, hi=servers - need_d
        )
    n_p = fixed_p if fixed_p is not None else servers - (fixed_d or 0)
    n_d = servers - n_p
    prefill = _pool_for(scenario, "prefill", n_p, inf.prompt_tokens, pspec)
    decode = _pool_for(scenario, "decode", n_d, context, dspec)
    for name, pool, n, spec in (
        ("prefill", prefill, n_p, pspec),
        ("decode", decode, n_d, dspec),
    ):
        if pool is None:
            ctx = inf.prompt_tokens if name == "prefill" else context
            need = next(
                (
                    k
                    for k in range(n + 1, n + 257)
                    if _pool_for(scenario, name, k, ctx, spec) is not None
                ),
                None,
            )
            other = servers - n
            fits = (
                f"it needs a pool of at least {need} servers"
                + (
                    f" (the other pool keeps {servers - need})"
                    if need < servers
                    else f", so the scenario needs at least {need + other} servers "
                    "(or inference.deployment split)"
                )
                if need is not None
                else f"no {name} pool of up to {n + 256} servers holds it"
            )
            raise ScenarioError.single(
                f"inference.pools.{name}",
                f"{scenario.model.name} does not fit a {name} pool of {n} x "
                f"{scenario.gpus_per_node} x {scenario.gpu.name}: its weights leave no room for "
                f"the KV cache of one {ctx}-token request; {fits}",
            )
    assert prefill is not None and decode is not None
    for name, pool, spec in (("prefill", prefill, pspec), ("decode", decode, dspec)):
        if spec and spec.ep and spec.ep > pool.gpus:
            raise ScenarioError.single(
                f"inference.pools.{name}.ep", f"must be <= the pool's {pool.gpus} GPUs"
            )
        if spec and spec.tp and scenario.model.heads % spec.tp != 0:
            raise ScenarioError.single(
                f"inference.pools.{name}.tp",
                f"must divide the model's heads ({scenario.model.heads})",
            )
    return _serving_plan(scenario, "disaggregated", prefill, decode)


POOL_SEARCH_SERVERS: Final = 256
"""How many servers beyond the cluster a refusal looks for a pool that holds the model."""


def _least_pool_servers(
    scenario: Scenario, role: str, context: int, spec: PoolSpec | None
) -> int | None:
    """The fewest whole servers whose pool of ``role`` holds the model with KV room for one
    request (``None``: not within the cluster and POOL_SEARCH_SERVERS more)."""
    return next(
        (
            k
            for k in range(1, scenario.nodes + POOL_SEARCH_SERVERS)
            if _pool_for(scenario, role, k, context, spec) is not None
        ),
        None,
    )


def least_pool_servers(scenario: Scenario) -> tuple[int, int] | None:
    """The fewest servers of a prefill and of a decode pool that hold the model with KV room
    for one request (pools as planned when ``inference.pools`` is not given); ``None`` when one
    does not fit within POOL_SEARCH_SERVERS servers beyond the cluster."""
    inf = scenario.inference
    assert inf is not None
    need_p = _least_pool_servers(scenario, "prefill", inf.prompt_tokens, None)
    need_d = _least_pool_servers(scenario, "decode", inf.prompt_tokens + inf.output_tokens, None)
    return None if need_p is None or need_d is None else (need_p, need_d)


def _too_small(scenario: Scenario, need_p: int | None, need_d: int | None) -> ScenarioError:
    """The refusal of a cluster too small for both pools: what each pool needs, in servers."""
    inf = scenario.inference
    assert inf is not None
    where = f"{scenario.gpus_per_node} x {scenario.gpu.name}"
    limit = scenario.nodes + POOL_SEARCH_SERVERS - 1
    if need_p is None or need_d is None:
        name = "prefill" if need_p is None else "decode"
        return ScenarioError.single(
            f"inference.pools.{name}",
            f"{scenario.model.name} does not fit a {name} pool of up to {limit} servers of "
            f"{where}: its weights leave no room for the KV cache of one request",
        )
    name = "prefill" if need_p >= need_d else "decode"
    return ScenarioError.single(
        f"inference.pools.{name}",
        f"{scenario.model.name} disaggregated needs at least {need_p:,} prefill + "
        f"{need_d:,} decode servers, {need_p + need_d:,} in all, of {where}; the scenario has "
        f"{scenario.nodes:,}. On "
        f"fewer its {scenario.precision} weights leave no room for the KV cache of one request "
        f"({inf.prompt_tokens}-token prompt in prefill, {inf.prompt_tokens + inf.output_tokens}"
        "-token context in decode)",
    )


def in_server_units(scenario: Scenario) -> list[ServingPlan]:
    """Disaggregated units of one server of a dense model (docs/MODEL.md 15.2): ``p`` of the
    server's GPUs run prefill instances of TP ``tp_p``, the other ``g - p`` decode instances
    of TP ``tp_d``, the KV cache moving over the server's NVLink (NVIDIA Dynamo and SGLang
    run prefill and decode workers on one node this way).  Every split of the server into
    whole instances whose decode instance holds a handful of requests; the plans are for one
    server (``scenario`` with ``gpus_per_node`` GPUs), copied over the cluster by the caller.
    Empty for MoE models, platforms whose scale-up domain is larger than a server (whole-tray
    pools cover an NVL72 rack, even on one tray) and servers of fewer than 2 GPUs."""
    inf = scenario.inference
    gpn = scenario.gpus_per_node
    model = scenario.model
    if (
        inf is None
        or model.is_moe
        or gpn < 2
        or scenario.gpus % gpn
        or scenario.gpu.scaleup_domain_gpus > gpn
    ):
        return []
    unit = replace(scenario, gpus=gpn)
    context = inf.prompt_tokens + inf.output_tokens
    sizes = [tp for tp in (1, 2, 4, 8, 16, 32) if tp < gpn and model.heads % tp == 0]
    plans: list[ServingPlan] = []
    for tp_d in sizes:
        for d in range(tp_d, gpn, tp_d):
            decode = _pool(unit, "decode", 1, tp_d, 1, 1, context, gpus=d)
            if decode is None or not _holds_a_handful(unit, decode):
                continue
            for tp_p in sizes:
                p = gpn - d
                if p % tp_p:
                    continue
                prefill = _pool(unit, "prefill", 1, tp_p, 1, 1, inf.prompt_tokens, gpus=p)
                if prefill is None:
                    continue
                plan = _serving_plan(unit, "disaggregated", prefill, decode)
                plans.append(replace(plan, kv_inside_domain=True))
    return plans


REFERENCE_NIC_GBPS: tuple[float, ...] = (400.0, 200.0, 100.0)
"""NIC speeds of the reference network, fastest first: the fastest one the host's x16 slot
carries (GpuSpec.slot_gbps) is the platform's."""


def reference_design(scenario: Scenario) -> Design:
    """The platform's reference network: InfiniBand, one NIC per GPU at 400G, or at the fastest
    speed the host's PCIe x16 slot carries (100G on a Gen3 V100 host, 200G on Gen4 A100 and
    L40S hosts: a faster NIC cannot run at line rate there), and no more NICs a server than
    the platform's reference design has (4 on V100 and L40S hosts: the candidates never offer
    more).  Pools are balanced on it, deployments are weighed on it, and a closed loop of users
    offers the arrival rate it reaches on it; a network the platform cannot carry would rank
    deployments by traffic it never gets."""
    slot = scenario.gpu.slot_gbps
    gbps = next((g for g in REFERENCE_NIC_GBPS if g <= slot), REFERENCE_NIC_GBPS[-1])
    nics = scenario.gpus_per_node
    if scenario.gpu.reference_nic_count > 0:
        nics = min(nics, scenario.gpu.reference_nic_count)
    return Design(fabric="infiniband", nic_gbps=gbps, nics_per_node=nics)


def kv_design(scenario: Scenario) -> Design:
    """The least network the decision buys for a deployment whose only cross-server traffic is
    KV caches: one RDMA NIC per server at the reference speed (:func:`reference_design`'s NIC;
    docs/MODEL.md 15.2, "A serving fabric sized for serving traffic": fewer NICs than GPUs are
    no departure there).  Whole-server pools of a model that fits one server are weighed on
    it, so the rate the planner counts on is the rate of the network bought, not of one NIC
    per GPU."""
    return replace(reference_design(scenario), nics_per_node=1)


def _balanced_prefill_servers(
    scenario: Scenario,
    context: int,
    pspec: PoolSpec | None,
    dspec: PoolSpec | None,
    *,
    lo: int = 1,
    hi: int | None = None,
) -> int:
    """Prefill servers whose request rate matches the decode pool's at the time-per-token
    target, both priced on the platform's reference network (one 400G RDMA NIC per GPU, as
    the training planner's reference fabric); bisection on the server split (prefill capacity
    grows and decode capacity shrinks with it)."""
    inf = scenario.inference
    assert inf is not None
    servers = scenario.nodes
    reference = reference_design(scenario)

    rates: dict[int, tuple[float, float]] = {}

    def pool_rates(n_p: int) -> tuple[float, float]:
        """(prefill rate, decode rate) of the split; prefill 0 when the prefill pool cannot
        hold the model, decode 0 when the decode pool cannot."""
        if n_p not in rates:
            prefill_pool = _pool_for(scenario, "prefill", n_p, inf.prompt_tokens, pspec)
            decode_pool = _pool_for(scenario, "decode", servers - n_p, context, dspec)
            if prefill_pool is None or decode_pool is None:
                rates[n_p] = (
                    0.0 if prefill_pool is None else math.inf,
                    0.0 if decode_pool is None else math.inf,
                )
            else:
                serving_plan = _serving_plan(scenario, "disaggregated", prefill_pool, decode_pool)
                service = prefill_service_s(
                    scenario, serving_plan, serving_plan.prefill, reference, "point"
                )
                rates[n_p] = (
                    serving_plan.prefill.instances / max(service, 1e-12),
                    _decode_rate(scenario, serving_plan, reference),
                )
        return rates[n_p]

    def balance(n_p: int) -> float:
        """log(prefill rate / decode rate); -inf when prefill cannot hold the model."""
        prefill_rps, decode_rps = pool_rates(n_p)
        if prefill_rps <= 0.0:
            return -math.inf
        if decode_rps <= 0.0:
            return math.inf
        return math.log(max(prefill_rps, 1e-12) / max(decode_rps, 1e-12))

    hi = servers - 1 if hi is None else hi
    least, most = lo, hi
    if balance(lo) >= 0:
        return lo
    if balance(hi) <= 0:
        return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if balance(mid) < 0:
            lo = mid
        else:
            hi = mid

    def capacity(n_p: int) -> tuple[float, float]:
        """The split's capacity (the slower pool's rate), then both pools' rates together."""
        prefill_rps, decode_rps = pool_rates(n_p)
        if math.isinf(prefill_rps) or math.isinf(decode_rps):
            return (0.0, 0.0)
        return (min(prefill_rps, decode_rps), prefill_rps + decode_rps)

    # instances of several servers (TP x PP over servers) change only every few servers: the
    # splits around the crossing that keep the same instances but give the other pool a server
    span = max(1, math.ceil(_instance_servers(scenario, context, pspec, dspec)))
    near = range(max(least, lo - span), min(most, hi + span) + 1)
    return max(near, key=lambda n_p: (capacity(n_p), -abs(n_p - lo)))


_DECODE_RATE_CACHE: dict[tuple[Any, ...], tuple[float, float]] = {}
"""Decode instances' largest batch at the time-per-token target and their step at it, by
instance (:func:`decode_view`), bounded: the balances of every smaller cluster the deployment
search plans pools on, and every split of one, price the same decode instances again (the
batch is the instance's; only the pool's rate counts its instances)."""


def _decode_rate(scenario: Scenario, serving_plan: ServingPlan, design: Design) -> float:
    """compute.decode_capacity_rps on ``design`` (the point bound), the same arithmetic on the
    instance's batch and step at the target."""
    key = (decode_view(scenario, serving_plan), design)
    hit = _DECODE_RATE_CACHE.get(key)
    if hit is None:
        if len(_DECODE_RATE_CACHE) >= 4096:
            _DECODE_RATE_CACHE.clear()
        hit = _DECODE_RATE_CACHE[key] = max_decode_batch_step(scenario, serving_plan, design)
    batch, step = hit
    return (
        batch
        * serving_plan.decode.instances
        * serving_plan.tokens_per_step
        / (step * serving_plan.output_tokens)
    )


NARROWING_STEPS: Final = 6
"""Interpolation steps (Illinois regula falsi) that narrow the bracket before the bisection is
replayed (:func:`max_decode_batch_step`)."""


def max_decode_batch_step(
    scenario: Scenario, serving_plan: ServingPlan, design: Design
) -> tuple[float, float]:
    """compute._max_decode_batch_step on ``design`` (the point bound): the largest batch per
    instance whose step meets the time-per-token target, by the same 30 halvings of [1, KV
    slots], and the step there, with fewer steps priced.

    A decode step grows with the batch, so a batch at or below one that meets the target
    meets it and one at or above one that misses misses it: a few interpolation steps narrow
    the bracket [meets, misses] around the crossing (a step is close to affine in the batch),
    then the bisection is replayed, pricing only the midpoints that fall inside the bracket.
    Its two ends are priced again at the end, and should either contradict the rule (a step
    that is not monotone there) the bisection is run as compute runs it."""
    cap = float(serving_plan.decode.max_batch_per_instance)
    target = serving_plan.target_tpot_s
    tokens_per_step = serving_plan.tokens_per_step
    priced: dict[float, float] = {}

    def step(b: float) -> float:
        hit = priced.get(b)
        if hit is None:
            hit = priced[b] = decode_step_s(scenario, serving_plan, b, design, "point")
        return hit

    cap_step = step(cap)
    if cap_step / tokens_per_step <= target:
        return cap, cap_step
    lo_step = step(1.0)
    if lo_step / tokens_per_step > target:
        return 1.0, lo_step
    # [meets, misses] and the gaps to the target there (<= 0, > 0)
    meets, misses = 1.0, cap
    gap_meets, gap_misses = lo_step / tokens_per_step - target, cap_step / tokens_per_step - target
    kept = 0  # Illinois: the end kept twice running has its gap halved
    width = cap / 2.0**BISECTION_HALVINGS
    for _ in range(NARROWING_STEPS):
        if misses - meets <= width:
            break
        x = meets + (misses - meets) * (-gap_meets) / (gap_misses - gap_meets)
        if not meets < x < misses:
            break
        gap = step(x) / tokens_per_step - target
        if gap <= 0.0:
            meets, gap_meets = x, gap
            kept = kept - 1 if kept < 0 else -1
            if kept <= -2:
                gap_misses /= 2.0
        else:
            misses, gap_misses = x, gap
            kept = kept + 1 if kept > 0 else 1
            if kept >= 2:
                gap_meets /= 2.0
    # the crossing is often where the step jumps (a batch's rows and tokens are whole
    # numbers): try the whole batches in the bracket and the floats either side of each;
    # else close the bracket around the interpolated crossing
    if misses - meets > width:
        probes = [
            (float(n), math.nextafter(float(n), -math.inf), math.nextafter(float(n), math.inf))
            for n in range(math.ceil(meets), math.floor(misses) + 1)
        ][:2]
        if not probes:
            x = meets + (misses - meets) * (-gap_meets) / (gap_misses - gap_meets)
            probes = [(x, max(meets, x - width / 4.0), min(misses, x + width / 4.0))]
        for x, below_x, above_x in probes:
            if not meets < x < misses:
                continue
            if step(x) / tokens_per_step <= target:
                meets = x
                if meets < above_x < misses:
                    if step(above_x) / tokens_per_step <= target:
                        meets = above_x
                    else:
                        misses = above_x
                        break
            else:
                misses = x
                if meets < below_x < misses:
                    if step(below_x) / tokens_per_step <= target:
                        meets = below_x
                    else:
                        misses = below_x
                break
    lo, hi = 1.0, cap
    for _ in range(BISECTION_HALVINGS):
        mid = (lo + hi) / 2
        if mid <= meets:
            lo = mid
        elif mid >= misses:
            hi = mid
        elif step(mid) / tokens_per_step <= target:
            lo = meets = mid
        else:
            hi = misses = mid
    lo_step = step(lo)
    if lo_step / tokens_per_step > target or step(hi) / tokens_per_step <= target:
        return _max_decode_batch_step(scenario, serving_plan, design, "point")
    return lo, lo_step


def _instance_servers(
    scenario: Scenario, context: int, pspec: PoolSpec | None, dspec: PoolSpec | None
) -> float:
    """Servers of the larger instance of the two pools planned on the whole cluster (1 when
    instances fit one server)."""
    inf = scenario.inference
    assert inf is not None
    widest = 1.0
    for role, ctx, spec in (("prefill", inf.prompt_tokens, pspec), ("decode", context, dspec)):
        pool = _pool_for(scenario, role, scenario.nodes, ctx, spec)
        if pool is not None and pool.ep <= 1:
            widest = max(widest, pool.gpus_per_instance / scenario.gpus_per_node)
    return widest


def alike(a: ServingPlan, b: ServingPlan) -> bool:
    """Whether two deployments' instances are the same shape (their pools can sit side by side
    as one pool of each role)."""

    def shape(pool: ServingPool) -> tuple[int, ...]:
        return (
            pool.tp,
            pool.pp,
            pool.ep,
            pool.gpus_per_instance,
            pool.experts_per_gpu,
            pool.max_batch_per_instance,
        )

    return shape(a.prefill) == shape(b.prefill) and shape(a.decode) == shape(b.decode)


def joined(a: ServingPool, b: ServingPool) -> ServingPool:
    """Two pools of alike instances as one."""
    return replace(
        a, servers=a.servers + b.servers, gpus=a.gpus + b.gpus, instances=a.instances + b.instances
    )


def _serving_plan(
    scenario: Scenario,
    deployment: str,
    prefill: ServingPool,
    decode: ServingPool,
    legacy_comm_s: float = 0.0,
) -> ServingPlan:
    inf = scenario.inference
    assert inf is not None
    kvb = kv_bytes_per_token(scenario.model, scenario.precision, scenario.gpu)
    mtp = inf.mtp or 0.0
    return ServingPlan(
        deployment=deployment,
        prefill=prefill,
        decode=decode,
        servers=scenario.nodes,
        kv_bytes_per_token=kvb,
        kv_bytes_per_request=kvb * inf.prompt_tokens,
        prompt_tokens=inf.prompt_tokens,
        computed_prompt_tokens=inf.prompt_tokens * (1.0 - inf.prefix_cache_hit_rate),
        output_tokens=inf.output_tokens,
        tokens_per_step=1.0 + (mtp * MTP_DRAFT_TOKENS if mtp else 0.0),
        rows_per_step=1 + (MTP_DRAFT_TOKENS if mtp else 0),
        requests_per_s=inf.requests_per_s,
        concurrent_requests=inf.concurrent_requests,
        target_ttft_s=inf.target_ttft_ms / 1e3,
        target_tpot_s=inf.target_ms_per_token / 1e3,
        legacy_comm_s=legacy_comm_s,
    )


def colocated_plan(
    scenario: Scenario, deployment: str, tp: int, pp: int, ep: int, legacy_comm_s: float
) -> ServingPlan:
    """The serving view of a ``replicas`` or ``split`` plan chosen by the workload planner."""
    inf = scenario.inference
    assert inf is not None
    context = inf.prompt_tokens + inf.output_tokens
    servers = scenario.nodes
    pool = (
        _pool(scenario, "serve", servers, tp, pp, ep, context)
        if scenario.gpus >= scenario.gpus_per_node
        else None
    )
    if pool is None:
        # a job smaller than a server, or whose weights fill memory: still report one instance
        gpi = 1 if ep > 1 else tp * pp
        pool = ServingPool(
            role="serve",
            servers=servers,
            gpus=scenario.gpus,
            tp=tp,
            pp=pp,
            ep=ep,
            instances=max(1, scenario.gpus // gpi),
            gpus_per_instance=gpi,
            experts_per_gpu=experts_per_gpu(scenario.model, ep) if ep > 1 else 0,
            redundant_experts=experts_per_gpu(scenario.model, ep) * ep - scenario.model.moe_experts
            if ep > 1
            else 0,
            weights_gb_per_gpu=0.0,
            kv_gb_per_request=0.0,
            max_batch_per_instance=max(
                1, math.ceil(inf.concurrent_requests / max(1, scenario.gpus))
            ),
        )
    return _serving_plan(scenario, deployment, pool, pool, legacy_comm_s)
