"""A small-active MoE model's decode step taken apart op by op, the engine's beside NVIDIA
AIConfigurator's measured-kernel op sum, on SYNTHETIC decode configurations (no validation row is
read): docs/MODEL.md 15.1, "A small-active MoE decode step op by op against the kernel tables".

    .venv/bin/python bench/moe_step_breakdown.py                     # the full grid, both sides
    .venv/bin/python bench/moe_step_breakdown.py --engine-only       # the engine's side only
    .venv/bin/python bench/moe_step_breakdown.py --model gpt-oss-20b --gpu b200 --batch 512
    .venv/bin/python bench/moe_step_breakdown.py --distribution balanced   # AIC's balanced tables
    .venv/bin/python bench/moe_step_breakdown.py --model deepseek-r1 --gpu h200 --ep 8 --batch 128

The engine's side runs in this interpreter: :class:`compute.MoeDecode`'s step split into its
terms (their sum is checked against :meth:`MoeDecode.seconds`) plus the expert all-to-all of
``compute.decode_step_s`` inside the server.  The peer's side is ``aiconfigurator cli estimate
--estimate-mode static_gen --detail time`` of a scratch venv (``/tmp/aic``, never a dependency of
the product; ``--aic`` names its Python), its per-op latencies over the run divided by its steps.
AIConfigurator routes decode tokens to experts by a power law (``sdk/models/moe.py``, alpha 1.2,
its fused-MoE tables' ``power_law_1.2`` rows; DeepSeek's 1.01); ``--distribution balanced`` sets
its model config's ``workload_distribution`` to read the tables' balanced rows instead (what the
engine's MoE rule was fitted on), which isolates the routing's share of its MoE op.

Large models under attention data parallelism + expert parallelism ("DEPn", ``--ep n``: one
attention rank of 1 GPU a instance, the experts spread over the n GPUs; ``batch`` is per attention
rank): DeepSeek-R1 (MLA) and Qwen3-235B-A22B, block-scaled FP8 on Hopper (the published FP8
checkpoints' 128 x 128 scales, AIC's ``fp8_block``), NVFP4 on Blackwell, each with the KV cache
the engine keeps (``precision.kv_element_bytes``: MLA 16-bit under fp8, FP8 otherwise).  AIC
prints composite ops (DeepSeek's ``generation_mla_block``, a measured MLA module, and
``generation_moe_overlap``, the shared expert on a second stream beside the routed path) as one
line; the wrapper flattens them into their parts for the op columns (the MLA module's granular
kernels, both streams' ops), and the peer's ``step`` is the TPOT of an unflattened run (the MLA
module's own measurement, max(shared, routed) per layer).  On TensorRT-LLM's attention-DP path
without a wide-EP backend AIC's ``moe_pre/post_dispatch`` price an all-gather of every rank's
tokens before the experts and a reduce-scatter after them (NCCL tables), not an all-to-all.

Ops, per decode step (ms): ``attn`` decode attention (KV read and math), ``qkv+o`` attention
projections, ``router`` router GEMM (the engine has none), ``moe`` routed experts with their
permutation and gated activation (AIC's ``generation_moe``, whose kernel table includes them),
``shared`` the non-routed MLP (shared experts, and on the engine's side dense-FFN layers spread
over the layers; AIC runs it on a second stream beside the routed path),
``a2a`` the expert dispatch and combine (AIC's ``moe_pre/post_dispatch``), ``norm`` norms and
residuals (AIC's ``add_norm`` and embedding), ``head`` output head, ``ar`` tensor-parallel
all-reduce, ``launch`` the engine's per-layer launch of other kernels (AIC has none).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

AIC_PYTHON = "/tmp/aic/bin/python"
OPS = ("attn", "qkv+o", "router", "moe", "shared", "a2a", "norm", "head", "ar", "launch")

# catalog model -> (AIConfigurator model path, engine precision on Blackwell)
MODELS: dict[str, tuple[str, str]] = {
    "gpt-oss-20b": ("openai/gpt-oss-20b", "mxfp4"),
    "gpt-oss-120b": ("openai/gpt-oss-120b", "mxfp4"),
    "qwen3-30b-a3b": ("Qwen/Qwen3-30B-A3B", "fp4"),
    "deepseek-r1": ("deepseek-ai/DeepSeek-R1", "fp4"),
    "qwen3-235b-a22b": ("Qwen/Qwen3-235B-A22B", "fp4"),
}
LARGE = ("deepseek-r1", "qwen3-235b-a22b")
"""Models whose default grid is DEP (``--ep``): DEP8 on Hopper, DEP4 and DEP8 on Blackwell."""
GPUS: dict[str, str] = {"h100": "h100_sxm", "h200": "h200_sxm", "b200": "b200_sxm"}
CATALOG_GPU = {"h100": "h100-sxm", "h200": "h200-sxm", "b200": "b200"}
BATCHES = (64, 256, 512, 1024)


def aic_quant(model: str, gpu: str) -> list[str]:
    """The peer's quantisation flags for the precision the engine serves ``model`` at on ``gpu``
    (``serving.precision``): gpt-oss's MXFP4 experts with BF16 GEMMs, MXFP8 activations and an
    FP8 cache on Blackwell, BF16 activations and cache on Hopper; Qwen3 NVFP4 with an FP8 cache on
    Blackwell, FP8 on Hopper (no FP4 tensor cores)."""
    blackwell = gpu == "b200"
    if model.startswith("gpt-oss"):
        return [
            "--gemm-quant-mode", "bfloat16",
            "--kvcache-quant-mode", "fp8" if blackwell else "bfloat16",
            "--moe-quant-mode", "w4a8_mxfp4_mxfp8" if blackwell else "w4a16_mxfp4",
        ]  # fmt: skip
    # the large models' published FP8 checkpoints are block-scaled (128 x 128)
    quant = "nvfp4" if blackwell else "fp8_block" if model in LARGE else "fp8"
    # the engine's cache (precision.kv_element_bytes): MLA 16-bit under fp8, FP8 under fp4
    kv = "bfloat16" if model == "deepseek-r1" and not blackwell else "fp8"
    return [
        "--gemm-quant-mode", quant, "--kvcache-quant-mode", kv, "--moe-quant-mode", quant,
    ]  # fmt: skip


def engine_precision(model: str, gpu: str) -> str:
    precision = MODELS[model][1]
    return "fp8" if precision == "fp4" and gpu != "b200" else precision


# ----------------------------------------------------------------------------- the engine
def engine_breakdown(
    model_id: str, gpu: str, ep: int, batch: int, isl: int, osl: int
) -> dict[str, Any]:
    """The engine's decode step of one attention-DP rank (``ep`` > 1) or one TP1 GPU holding
    ``batch`` sequences, by op (ms)."""
    from advisor.engine.facts.catalog import default_catalog
    from advisor.engine.input.scenario import parse_scenario
    from advisor.engine.model.attention_span import decode_attention_context
    from advisor.engine.model.efficiency import ELEMENTWISE_HIDDEN_PASSES
    from advisor.engine.model.planner import plan_workload
    from advisor.engine.model.serving import compute

    parallelism: dict[str, int] = {"tp": 1}
    if ep > 1:
        parallelism["ep"] = ep
    raw = {
        "workload": "inference",
        "model": model_id,
        "gpu": CATALOG_GPU[gpu],
        "precision": engine_precision(model_id, gpu),
        "gpus": 8,
        "gpus_per_node": 8,
        "inference": {
            "deployment": "replicas",
            "prompt_tokens": isl,
            "output_tokens": osl,
            "requests_per_s": 1.0,
        },
        "parallelism": parallelism,
    }
    scenario = parse_scenario(raw, default_catalog())
    inference = plan_workload(scenario).inference
    assert inference is not None and inference.serving is not None
    plan = inference.serving
    pool = plan.decode
    model = scenario.model
    context = decode_attention_context(model, plan.prompt_tokens, plan.output_tokens)
    decode = compute.MoeDecode(scenario, pool, plan.rows_per_step, context)
    layer, consts = decode.layer, decode.layer.consts
    rows = float(max(1.0, batch * plan.rows_per_step))
    group = rows * decode.ep / decode.gpus_per_instance if decode.ep > 1 else rows
    parts = compute._moe_layer(
        layer, model, rows, decode.tp, decode.ep, decode.experts_per_gpu, group
    )
    kv_read = batch * context * consts.kv_bytes_per_token / model.layers
    flops = rows * context * consts.attention_flops_per_context_token / decode.tp
    attention = decode.attention.seconds(kv_read / decode.kv_split, flops)
    norm_layer = 2.0 * rows * ELEMENTWISE_HIDDEN_PASSES * model.hidden / layer.hbm
    layers, moe_layers = model.layers, model.moe_layers
    ops = {
        "attn": layers * attention,
        "qkv+o": layers * parts.attention_gemm_s,
        "router": 0.0,
        "moe": moe_layers * parts.routed_s + layers * (parts.elementwise_s - norm_layer),
        "shared": layers * parts.shared_gemm_s,
        "norm": layers * norm_layer,
        "head": layer.head.time_s(rows),
        "ar": 0.0,
        "launch": layers * consts.other_kernels_s,
    }
    compute_s = decode.seconds(float(batch))
    assert abs(sum(ops.values()) - compute_s) <= 1e-9 + 1e-6 * compute_s, (ops, compute_s)
    step = compute.decode_step_s(scenario, plan, float(batch), None, "point", compute_s=compute_s)
    ops["a2a"] = step - compute_s
    return {
        "ms": {k: ops.get(k, 0.0) * 1e3 for k in OPS},
        "step_ms": step * 1e3,
        "kv_batch": pool.max_batch_per_instance,
        "experts_run": parts.experts_run,
        "rows_per_expert": parts.rows_per_expert,
    }


# ----------------------------------------------------------------------------- the peer
_WRAPPER = """
import sys
import aiconfigurator_core.sdk.operations as ops
import aiconfigurator_core.sdk.models as core_models
import aiconfigurator.sdk.models as models
import aiconfigurator.cli.estimate_detail_report as report
balanced, flat = sys.argv[1] == "balanced", sys.argv[2] == "flat"
def flatten(seq):  # composite ops into their parts
    out = []
    for op in seq:
        if isinstance(op, ops.OverlapOp):
            out += flatten(list(op._group_a)) + flatten(list(op._group_b))
        elif isinstance(op, ops.FallbackOp):
            out += flatten(list(op._fallback))
        else:
            out.append(op)
    return out
built = core_models.get_model
def get_model(*args, **kwargs):
    config = args[1] if len(args) > 1 else kwargs["model_config"]
    if balanced:  # every family's MoE reads its tables' balanced rows
        config.workload_distribution = "balanced"
    model = built(*args, **kwargs)
    if flat:
        model.generation_ops = flatten(model.generation_ops)
    return model
core_models.get_model = models.get_model = get_model
report.format_summary_detail_report.__kwdefaults__["top_n_ops"] = 1000
report.format_estimate_detail_report.__kwdefaults__["top_n_ops"] = 1000
from aiconfigurator.main import main
sys.argv = ["aiconfigurator"] + sys.argv[3:]
sys.exit(main())
"""
_TOTAL = re.compile(r"Generation lat\.:\s+([0-9.]+) ms")
_TPOT = re.compile(r"TPOT:\s+([0-9.]+) ms")
_OP = re.compile(r"^\s+generation_(\w+)\s+([0-9.]+) ms")
AIC_OPS = {
    "attention": "attn",
    "qkv_gemm": "qkv+o",
    "proj_gemm": "qkv+o",
    "downscale_gemm": "qkv+o",  # MLA: q/kv down-projection
    "q_b_proj_gemm": "qkv+o",  # MLA: the query's up-projection
    "bmm_pre": "qkv+o",  # MLA: the absorbed key up-projection (per-head BMM)
    "bmm_post": "qkv+o",  # MLA: the absorbed value up-projection
    "router_gemm": "router",
    "moe": "moe",
    "shared_expert": "shared",
    "shared_gate_up_gemm": "shared",
    "shared_act_gate": "shared",
    "shared_ffn2_gemm": "shared",
    "moe_pre_dispatch": "a2a",
    "moe_post_dispatch": "a2a",
    "add_norm_1": "norm",
    "add_norm_2": "norm",
    "embedding": "norm",
    "logits_gemm": "head",
    "ar_1": "ar",
    "ar_2": "ar",
}


def aic_breakdown(
    python: str, model: str, gpu: str, ep: int, batch: int, isl: int, osl: int, dist: str
) -> dict[str, Any] | None:
    """The peer's static decode of ``batch`` sequences per attention rank, by op (ms a step)."""
    args = [
        "cli", "estimate", "--model-path", MODELS[model][0], "--system", GPUS[gpu],
        "--backend", "trtllm", "--estimate-mode", "static_gen", "--batch-size", str(batch),
        "--isl", str(isl), "--osl", str(osl), "--tp-size", "1", "--moe-tp-size", "1",
        "--moe-ep-size", str(ep), "--attention-dp-size", str(ep), "--detail", "time",
        *aic_quant(model, gpu),
    ]  # fmt: skip

    def run(form: str) -> str:
        done = subprocess.run(
            [python, "-c", _WRAPPER, dist, form, *args],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
            cwd="/tmp",
        )
        return done.stdout + done.stderr

    out = run("flat")
    total, tpot = _TOTAL.search(out), _TPOT.search(out)
    if total is None or tpot is None:
        return None
    whole = _TPOT.search(run("whole"))  # the step with the composites as AIC runs them
    steps = float(total.group(1)) / float(tpot.group(1))
    ms = dict.fromkeys(OPS, 0.0)
    unknown: dict[str, float] = {}
    for line in out.splitlines():
        found = _OP.match(line)
        if found is None:
            continue
        name, value = found.group(1), float(found.group(2)) / steps
        if name in AIC_OPS:
            ms[AIC_OPS[name]] += value
        else:
            unknown[name] = value
    for name, value in unknown.items():  # anything else joins the closest op by name
        ms["a2a" if "dispatch" in name else "ar" if "ar" in name.split("_") else "norm"] += value
    step = float((whole or tpot).group(1))
    return {
        "ms": ms,
        "step_ms": step,
        "op_sum_ms": float(tpot.group(1)),
        "other_ops": sorted(unknown),
    }


# ----------------------------------------------------------------------------- the grid
def grid(args: argparse.Namespace) -> list[tuple[str, str, int]]:
    out: list[tuple[str, str, int]] = []
    for model in args.model or list(MODELS):
        for gpu in args.gpu or list(GPUS):
            if args.ep:
                out += [(model, gpu, ep) for ep in args.ep]
            elif model in LARGE:  # too large for one GPU: DEP only
                out += [(model, gpu, ep) for ep in ((4, 8) if gpu == "b200" else (8,))]
            else:
                out.append((model, gpu, 1))
                if model == "gpt-oss-120b" and not args.no_ep:
                    out.append((model, gpu, 4))  # DEP4, TensorRT-LLM's tech blog 9 shape
    return out


def fmt(ms: dict[str, float]) -> str:
    return " ".join(f"{ms[k]:6.2f}" for k in OPS)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", choices=list(MODELS))
    parser.add_argument("--gpu", action="append", choices=list(GPUS))
    parser.add_argument("--batch", action="append", type=int)
    parser.add_argument("--isl", type=int, default=1024)
    parser.add_argument("--osl", type=int, default=1024)
    parser.add_argument("--no-ep", action="store_true", help="TP1 only")
    parser.add_argument("--ep", action="append", type=int, help="DEP sizes (1: TP1)")
    parser.add_argument("--engine-only", action="store_true")
    parser.add_argument("--distribution", default="power_law", choices=("power_law", "balanced"))
    parser.add_argument("--aic", default=AIC_PYTHON, help="the scratch venv's python")
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    args = parser.parse_args(argv)
    print(f"{'config':38s} {'side':6s} " + " ".join(f"{k:>6s}" for k in OPS) + "   step")
    for model, gpu, ep in grid(args):
        for batch in args.batch or BATCHES:
            name = f"{model} {gpu} {'DEP' + str(ep) if ep > 1 else 'TP1'} B{batch}"
            engine = engine_breakdown(model, gpu, ep, batch, args.isl, args.osl)
            peer = None
            if not args.engine_only:
                peer = aic_breakdown(
                    args.aic, model, gpu, ep, batch, args.isl, args.osl, args.distribution
                )
            if args.json:
                print(json.dumps({"config": name, "engine": engine, "aic": peer}), flush=True)
                continue
            print(f"{name:38s} engine {fmt(engine['ms'])} {engine['step_ms']:6.2f}")
            if peer is None:
                if not args.engine_only:
                    print(f"{'':38s} aic    (no estimate)")
                continue
            print(f"{'':38s} aic    {fmt(peer['ms'])} {peer['step_ms']:6.2f}")
            ratio = {
                k: (engine["ms"][k] / peer["ms"][k]) if peer["ms"][k] > 1e-3 else float("nan")
                for k in OPS
            }
            print(
                f"{'':38s} e/aic  {fmt(ratio)} {engine['step_ms'] / peer['step_ms']:6.2f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
