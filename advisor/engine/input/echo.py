"""The parsed scenario as the result echoes it (``result.scenario``, ``design_evaluation.design``):
the typed :class:`~advisor.engine.input.scenario.Scenario` written into its result records
(:mod:`advisor.engine.result.echo`) field by field, every default filled in."""

from __future__ import annotations

from dataclasses import fields

from advisor.engine.facts.catalog import ModelSpec
from advisor.engine.input.scenario import (
    InferenceSpec,
    PoolSpec,
    Scenario,
    TrainingSpec,
)
from advisor.engine.result import echo

__all__ = ["scenario_echo"]


def scenario_echo(s: Scenario) -> echo.ScenarioEcho:
    """The normalised scenario v1 with every default filled in (``result.scenario``)."""
    return echo.ScenarioEcho(
        workload=s.workload,
        model=s.model.id if s.model_is_preset else _custom_model(s.model),
        gpu=s.gpu.id,
        gpus=s.gpus,
        gpus_per_node=s.gpus_per_node,
        precision=s.precision,
        sequence_length=s.sequence_length,
        parallelism={
            f.name: getattr(s.parallelism, f.name)
            for f in fields(s.parallelism)
            if getattr(s.parallelism, f.name) is not None
        },
        constraints=s.constraints,
        training=_training(s.training) if s.training is not None else None,
        inference=_inference(s.inference) if s.inference is not None else None,
        design=s.design,
        rag=s.rag,
    )


def _custom_model(m: ModelSpec) -> echo.CustomModel:
    return echo.CustomModel(
        params_b=m.params_b,
        layers=m.layers,
        hidden=m.hidden,
        heads=m.heads,
        kv_heads=m.kv_heads,
        vocab=m.vocab,
        ffn_hidden=m.ffn_hidden,
        moe_experts=m.moe_experts,
        moe_top_k=m.moe_top_k,
        active_params_b=m.active_params_b,
    )


def _training(t: TrainingSpec) -> echo.TrainingInput:
    return echo.TrainingInput(
        global_batch_sequences=t.global_batch_sequences,
        global_batch_tokens=t.global_batch_tokens,
        total_tokens=t.total_tokens,
        sharding=t.sharding,
    )


def _inference(i: InferenceSpec) -> echo.InferenceInput:
    given = (("prefill", i.prefill_pool), ("decode", i.decode_pool))
    pools = {role: sizes for role, pool in given if pool is not None and (sizes := _pool(pool))}
    return echo.InferenceInput(
        independent_replicas=i.independent_replicas,
        concurrent_requests=i.concurrent_requests,
        prompt_tokens=i.prompt_tokens,
        output_tokens=i.output_tokens,
        target_ms_per_token=i.target_ms_per_token,
        deployment=i.deployment,
        requests_per_s=i.requests_per_s,
        target_ttft_ms=i.target_ttft_ms,
        prefix_cache_hit_rate=i.prefix_cache_hit_rate,
        mtp=i.mtp,
        pools=pools or None,
    )


def _pool(pool: PoolSpec) -> dict[str, int]:
    """The pool's sizes the scenario fixed (``None`` = left to the engine: not echoed)."""
    sizes = {"servers": pool.servers, "tp": pool.tp, "ep": pool.ep}
    return {key: value for key, value in sizes.items() if value is not None}
