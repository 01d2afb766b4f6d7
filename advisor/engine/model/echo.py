"""The workload plan as the result echoes it (``result.workload``): the typed
:class:`~advisor.engine.model.plans.WorkloadPlan` written into its result records
(:mod:`advisor.engine.result.echo`) field by field: the model, the memory per GPU, the
parallelism plan, the traffic it implies and, for serving, the deployment and its pools."""

from __future__ import annotations

from advisor.engine.facts.catalog import ModelSpec
from advisor.engine.input.scenario import Scenario
from advisor.engine.model.placement import Fabric, place
from advisor.engine.model.plans import WorkloadPlan, plan_traffic
from advisor.engine.model.serving.compute import ServingPlan
from advisor.engine.result import echo

__all__ = ["workload_info"]


def workload_info(w: WorkloadPlan, s: Scenario) -> echo.WorkloadInfo:
    """``result.workload``: what the model planned for scenario ``s``."""
    serving = w.inference.serving if w.inference is not None else None
    return echo.WorkloadInfo(
        model=_model(s.model),
        memory=w.memory,
        plan=w.plan,
        nodes=w.nodes,
        gpus_per_node=w.gpus_per_node,
        scaleup_domain_gpus=w.domain_gpus,
        spans_servers=w.spans_servers,
        needs_compute_fabric=w.needs_compute_fabric,
        traffic=_traffic(w),
        notes=w.notes,
        serving=_serving(serving) if serving is not None else None,
    )


def _model(m: ModelSpec) -> echo.ModelInfo:
    return echo.ModelInfo(
        id=m.id,
        name=m.name,
        params_b=m.params_b,
        layers=m.layers,
        hidden=m.hidden,
        heads=m.heads,
        kv_heads=m.kv_heads,
        vocab=m.vocab,
        ffn_hidden=m.ffn_hidden,
        moe_experts=m.moe_experts,
        moe_top_k=m.moe_top_k,
        moe_layers=m.moe_layers,
        active_params_b=m.active_params / 1e9,
        kv_dim_per_layer=m.kv_dim_per_layer,
        tied_embeddings=m.tied_embeddings,
        source=m.source,
        mtp_layers=m.mtp_layers,
        attention_head_dim=m.attention_head_dim,
        attention_chunk=m.attention_chunk,
        chunked_attention_layers=m.chunked_attention_layers,
        sliding_window=m.sliding_window,
        sliding_window_layers=m.sliding_window_layers,
    )


def _traffic(w: WorkloadPlan) -> echo.Traffic:
    """Traffic volumes per step (training) or per output token (inference), in bytes, with the
    design-independent placement facts: per communicator, the scale-up domains a group spans
    and the bytes per GPU that cross the domain boundary (the NICs) under contiguous
    placement.  Leaf and pod crossings depend on the design; they are in each design's
    metrics."""
    dom = Fabric(blocks=(max(1, w.domain_gpus),), servers=max(1, w.nodes), servers_per_block=())
    communicators: list[echo.Communicator] = []
    total = 0.0
    for comm, nbytes in plan_traffic(w):
        if comm.size <= 1:
            continue
        x = place(comm, dom)
        crossing = nbytes * x.shares[0]
        total += crossing
        communicators.append(
            echo.Communicator(
                kind=comm.kind,
                pattern=comm.pattern,
                size=comm.size,
                stride_gpus=comm.stride,
                scaleup_domains_per_group=x.domains,
                ranks_per_domain=x.ranks_per_domain,
                wire_bytes_per_gpu=nbytes,
                inter_server_bytes_per_gpu=crossing,
                crosses_network=x.crosses_network,
            )
        )
    if w.training is not None:
        t = w.training
        return echo.Traffic(
            unit="bytes per GPU per training step",
            tokens_per_step=t.tokens_per_step,
            microbatches=t.microbatches,
            tensor_parallel_bytes=t.tp_bytes_per_collective * t.tp_collectives_per_step,
            tensor_parallel_collectives=t.tp_collectives_per_step,
            tensor_parallel_crosses_network=t.tp_layout.crosses_network,
            pipeline_bytes=t.pp_bytes_per_p2p * t.pp_p2p_per_step,
            pipeline_crosses_network=t.pp_crosses_network,
            data_parallel_bytes=sum(b * c for _, b, c in t.dp_op_bytes)
            + sum(b * c for _, b, c in t.expert_dp_op_bytes),
            data_parallel_crosses_network=t.dp_layout.crosses_network,
            expert_all_to_all_bytes=t.ep_bytes_per_all_to_all * t.ep_all_to_all_per_step,
            expert_crosses_network=t.ep_layout.crosses_network,
            placement="contiguous",
            communicators=tuple(communicators),
            inter_server_bytes_per_gpu=total,
        )
    assert w.inference is not None
    i = w.inference
    return echo.Traffic(
        unit="bytes per GPU per output token (decode step)",
        tensor_parallel_bytes=i.tp_bytes_per_decode_collective * i.tp_collectives_per_token,
        tensor_parallel_collectives=i.tp_collectives_per_token,
        tensor_parallel_crosses_network=i.tp_layout.crosses_network,
        pipeline_bytes=i.pp_bytes_per_token,
        pipeline_crosses_network=i.pp_crosses_network,
        expert_all_to_all_bytes=2.0 * i.ep_dispatch_bytes_per_gpu * i.moe_layers,
        expert_crosses_network=i.ep_layout.crosses_network,
        placement="contiguous",
        communicators=tuple(communicators),
        inter_server_bytes_per_gpu=total,
    )


def _serving(sp: ServingPlan) -> echo.ServingPlan:
    pools = (
        echo.ServingPools(serve=sp.decode)
        if sp.colocated
        else echo.ServingPools(prefill=sp.prefill, decode=sp.decode)
    )
    return echo.ServingPlan(
        deployment=sp.deployment,
        servers=sp.servers,
        pools=pools,
        kv_bytes_per_token=sp.kv_bytes_per_token,
        kv_bytes_per_request=sp.kv_bytes_per_request,
        computed_prompt_tokens=sp.computed_prompt_tokens,
        tokens_per_step=sp.tokens_per_step,
        requests_per_s=sp.requests_per_s,
        concurrent_requests=sp.concurrent_requests,
        kv_inside_domain=sp.kv_inside_domain,
        copies=sp.copies,
        copy_servers=sp.copy_servers,
    )
