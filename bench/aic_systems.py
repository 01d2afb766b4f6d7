"""What the AIConfigurator readers of ``bench/`` share: where the installed package keeps its
measured tables, and which catalog GPU each of its systems is.

NVIDIA AIConfigurator is a peer run beside the product, never a dependency of it: the readers
(``aic_gemm_table.py``, ``aic_attention_fit.py``, ``aic_nccl_table.py``) run with a scratch
venv's Python (``python3.11 -m venv /tmp/aic && /tmp/aic/bin/pip install aiconfigurator``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

CATALOG_GPU: dict[str, str] = {
    "a100_sxm": "a100-80gb-sxm",
    "h100_sxm": "h100-sxm",
    "h200_sxm": "h200-sxm",
    "b200_sxm": "b200",
    "gb200": "gb200-nvl72",
    "b300_sxm": "b300",
    "gb300": "gb300-nvl72",
    "l40s": "l40s",
}
"""AIConfigurator's system name -> the catalog's GPU id."""


def data_dir() -> Path:
    """``aiconfigurator_core/systems/data`` of the installed package (ImportError without it)."""
    import aiconfigurator_core  # type: ignore[import-not-found]

    return Path(aiconfigurator_core.__file__).resolve().parent / "systems" / "data"


MOE_TABLE_VERSION = "1.3.0rc20"
"""The TensorRT-LLM release whose fused-MoE latencies AIConfigurator 0.12.0 ships."""


def moe_table(system: str) -> Path:
    """``systems/data/<system>/moe/trtllm/<version>/moe_perf.parquet``."""
    return data_dir() / system / "moe" / "trtllm" / MOE_TABLE_VERSION / "moe_perf.parquet"


def moe_point(row: Any, gpu: str) -> dict[str, Any]:
    """One row of a ``moe_perf`` table (a pandas ``itertuples`` row) as the MoE fit scripts read
    it, on the catalog's ``gpu``; the latency in seconds."""
    return {
        "gpu": gpu,
        "dtype": str(row.moe_dtype),
        "source": str(row.kernel_source),
        "tokens": int(row.num_tokens),
        "hidden": int(row.hidden_size),
        "inter": int(row.inter_size),
        "topk": int(row.topk),
        "experts": int(row.num_experts),
        "tp": int(row.moe_tp_size),
        "ep": int(row.moe_ep_size),
        "measured_s": float(row.latency) * 1e-3,
    }


def moe_elementwise_s(gpu: Any, point: dict[str, Any]) -> float:
    """The element-wise passes a ``moe_perf`` latency includes and the engine prices with a
    layer's other element-wise kernels (``compute._moe_layer_shapes``): the token permutation and
    the gated activation at ``HBM_EFFICIENCY``, for the point's rows on one GPU."""
    from advisor.engine.facts.constants import HBM_EFFICIENCY
    from advisor.engine.model.efficiency import ELEMENTWISE_FFN_PASSES
    from advisor.engine.model.serving.compute import MOE_PERMUTE_PASSES

    hbm = gpu.memory_bw_gbytes_per_s * 1e9 * HBM_EFFICIENCY
    rows = point["tokens"] / point["ep"]
    permute = 2.0 * rows * MOE_PERMUTE_PASSES * (1 + point["topk"]) * point["hidden"] / hbm
    activation = 2.0 * ELEMENTWISE_FFN_PASSES * rows * point["topk"] * point["inter"] / hbm
    return float(permute + activation / point["tp"])


def moe_shape(base: Any, point: dict[str, Any]) -> Any:
    """``base`` (a catalog ``ModelSpec``) with a ``moe_perf`` point's expert shape: hidden width,
    expert width, experts and experts per token."""
    from dataclasses import replace

    return replace(
        base,
        hidden=point["hidden"],
        ffn_hidden=point["inter"],
        moe_experts=point["experts"],
        moe_top_k=point["topk"],
    )
