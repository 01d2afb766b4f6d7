"""A dense decode step taken apart op by op, the engine's beside AIConfigurator's op sum
(docs/MODEL.md 15.1, "Dense decode step, op by op against TensorRT-LLM's kernels").

AIConfigurator's ``cli estimate --estimate-mode static_gen`` sums TensorRT-LLM's measured kernel
latencies for a decode step (its tables, CUDA graphs around each op) and prints them by op. Its
sum matched the published runs' implied steps on both GPU generations where the engine's did not
(docs/MODEL.md 10), so the op where the two part is where the engine's decode step is wrong. The
configurations here are synthetic (models x GPUs x batches x tensor-parallel sizes), not
validation rows: nothing here reads a measured serving run.

The peer is a tool beside the product, never a dependency of it: its CLI runs from a scratch venv
(``python3.11 -m venv /tmp/aic && /tmp/aic/bin/pip install aiconfigurator==0.12.0``); this script
runs with the repo's venv and calls that CLI (its answers kept in ``--cache``)::

    .venv/bin/python bench/decode_op_breakdown.py
    .venv/bin/python bench/decode_op_breakdown.py --gpus b200 --precisions fp4 --tps 1

Prints one line per configuration and op: the engine's and the peer's milliseconds per step and
their ratio; then, per (GPU, precision), the mean ratio of each op and of the step.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from advisor.engine.facts.catalog import default_catalog  # noqa: E402
from advisor.engine.facts.constants import (  # noqa: E402
    DECODE_KERNEL_OVERHEAD_S_PER_LAYER,
    HBM_EFFICIENCY,
    HEAD_PRECISION,
)
from advisor.engine.model.attention_span import decode_attention_context  # noqa: E402
from advisor.engine.model.efficiency import gemm_time_s, profile  # noqa: E402
from advisor.engine.model.serving.attention import decode_attention_layer_s  # noqa: E402
from advisor.engine.model.serving.compute import (  # noqa: E402
    GEMMS_PER_LAYER,
    decode_attention_flops_per_context_token,
    dense_layer_shapes,
    kv_bytes_per_token,
)
from advisor.engine.model.serving.intra import intra_time_s  # noqa: E402
from advisor.engine.model.serving.precision import kv_element_bytes  # noqa: E402

AIC = "/tmp/aic/bin/aiconfigurator"
MODELS = {
    "llama3-8b": "meta-llama/Meta-Llama-3.1-8B",
    "llama3-70b": "meta-llama/Meta-Llama-3.1-70B",
    "llama3.1-405b": "meta-llama/Meta-Llama-3.1-405B",
}
SYSTEMS = {
    "h100-sxm": "h100_sxm",
    "h200-sxm": "h200_sxm",
    "b200": "b200_sxm",
    "gb200-nvl72": "gb200",
}
QUANT = {"fp8": "fp8", "fp4": "nvfp4", "bf16": "float16"}
OPS = ("qkv", "proj", "gate_up", "down", "attention", "elementwise", "other", "logits", "allreduce")
AIC_OPS = {
    "generation_qkv_gemm": "qkv",
    "generation_proj_gemm": "proj",
    "generation_gate_ffn1_gemm": "gate_up",
    "generation_ffn2_gemm": "down",
    "generation_attention": "attention",
    "generation_add_norm_1": "elementwise",
    "generation_add_norm_2": "elementwise",
    "generation_act_gate": "elementwise",
    "generation_embedding": "other",
    "generation_embedding_ar": "allreduce",
    "generation_logits_gemm": "logits",
    "generation_ar_1": "allreduce",
    "generation_ar_2": "allreduce",
}


def peer_ops(
    model: str,
    system: str,
    precision: str,
    batch: int,
    isl: int,
    osl: int,
    tp: int,
    cache: dict[str, dict[str, float]],
) -> dict[str, float]:
    """AIConfigurator's op sum of one decode step, ms by the engine's op names."""
    key = f"{model}|{system}|{precision}|{batch}|{isl}|{osl}|{tp}"
    if key not in cache:
        cmd = [
            AIC,
            "cli",
            "estimate",
            "--model-path",
            MODELS[model],
            "--system",
            system,
            "--backend",
            "trtllm",
            "--estimate-mode",
            "static_gen",
            "--batch-size",
            str(batch),
            "--isl",
            str(isl),
            "--osl",
            str(osl),
            "--tp-size",
            str(tp),
            "--gemm-quant-mode",
            QUANT[precision],
            "--kvcache-quant-mode",
            "fp8" if precision != "bf16" else "float16",
            "--detail",
            "time",
        ]
        out = subprocess.run(cmd, capture_output=True, text=True, check=False).stdout
        ops: dict[str, float] = {}
        for line in out.splitlines():
            m = re.match(r"\s+(generation_\w+)\s+([\d.]+) ms", line)
            if m:
                name = AIC_OPS.get(m.group(1), m.group(1))
                ops[name] = ops.get(name, 0.0) + float(m.group(2)) / osl
        tpot = re.search(r"TPOT:\s+([\d.]+) ms", out)
        ops["step"] = float(tpot.group(1)) if tpot else float("nan")
        cache[key] = ops
    return cache[key]


def engine_ops(
    model_id: str, gpu_id: str, precision: str, batch: int, isl: int, osl: int, tp: int
) -> dict[str, float]:
    """The engine's decode step of a dense TP instance, ms by op (compute._dense_decode_s)."""
    catalog = default_catalog()
    gpu, model = catalog.gpu(gpu_id), catalog.model(model_id)
    shapes = dense_layer_shapes(model, tp)
    h = float(model.hidden)
    rows = float(batch)
    layers = model.layers

    def g(shape: tuple[float, float], p: str = precision) -> float:
        return gemm_time_s(gpu, p, rows, *shape, inference=True) * layers * 1e3

    context = decode_attention_context(model, isl, osl)
    kv_read = rows * context * kv_bytes_per_token(model, precision, gpu) / layers
    flops = rows * context * decode_attention_flops_per_context_token(model)
    attention = (
        decode_attention_layer_s(
            gpu,
            kv_element_bytes(precision, False, gpu),
            False,
            kv_read / min(tp, model.kv_heads),
            flops / tp,
        )
        * layers
        * 1e3
    )
    hbm = gpu.memory_bw_gbytes_per_s * 1e9 * HBM_EFFICIENCY
    elementwise = 2.0 * rows * shapes.elementwise_per_row
    other = max(
        0.0, DECODE_KERNEL_OVERHEAD_S_PER_LAYER - GEMMS_PER_LAYER * profile(gpu).gemm_latency_s
    )
    ops = {
        "qkv": g(shapes.qkv),
        "proj": g(shapes.output),
        "gate_up": g(shapes.up),
        "down": g(shapes.down),
        "attention": attention,
        "elementwise": elementwise / hbm * layers * 1e3,
        "other": other * layers * 1e3,
        "logits": gemm_time_s(
            gpu, HEAD_PRECISION[precision], rows, model.vocab / tp, h, inference=True
        )
        * 1e3,
        "allreduce": 0.0,
    }
    if tp > 1:
        ops["allreduce"] = 2 * layers * intra_time_s(gpu, "all_reduce", rows * h * 2.0, tp) * 1e3
    ops["step"] = sum(ops.values())
    return ops


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", nargs="*", default=["llama3-8b", "llama3-70b", "llama3.1-405b"])
    ap.add_argument("--gpus", nargs="*", default=["h100-sxm", "h200-sxm", "b200"])
    ap.add_argument("--precisions", nargs="*", default=["fp8", "fp4"])
    ap.add_argument("--tps", nargs="*", type=int, default=[1, 2, 4, 8])
    ap.add_argument("--batches", nargs="*", type=int, default=[8, 32, 64, 128, 256, 512])
    ap.add_argument("--isl", type=int, default=1024)
    ap.add_argument("--osl", type=int, default=1024)
    ap.add_argument("--cache", default="/tmp/aic_decode_ops.json")
    args = ap.parse_args(argv)
    cache_path = Path(args.cache)
    cache = json.loads(cache_path.read_text()) if cache_path.exists() else {}
    sums: dict[tuple[str, str], dict[str, list[float]]] = {}
    catalog = default_catalog()
    for model in args.models:
        for gpu in args.gpus:
            for precision in args.precisions:
                if precision == "fp4" and catalog.gpu(gpu).generation != "blackwell":
                    continue
                for tp in args.tps:
                    weights = (
                        catalog.model(model).params_b * (0.56 if precision == "fp4" else 1.0) / tp
                    )
                    if weights > 0.7 * catalog.gpu(gpu).memory_gb:
                        continue
                    for batch in args.batches:
                        peer = peer_ops(
                            model, SYSTEMS[gpu], precision, batch, args.isl, args.osl, tp, cache
                        )
                        if math.isnan(peer.get("step", float("nan"))):
                            continue
                        mine = engine_ops(model, gpu, precision, batch, args.isl, args.osl, tp)
                        cells = []
                        for op in (*OPS, "step"):
                            a, b = mine.get(op, 0.0), peer.get(op, 0.0)
                            if b > 0:
                                sums.setdefault((gpu, precision), {}).setdefault(op, []).append(
                                    a / b
                                )
                            cells.append(f"{op} {a:.2f}/{b:.2f}")
                        print(f"{model} {gpu} {precision} tp{tp} b{batch}: " + "  ".join(cells))
                        cache_path.write_text(json.dumps(cache))
    for (gpu, precision), ops in sums.items():
        print(gpu, precision, "  ".join(f"{op} {sum(v) / len(v):.3f}" for op, v in ops.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
