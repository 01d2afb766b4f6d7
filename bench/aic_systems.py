"""What the AIConfigurator readers of ``bench/`` share: where the installed package keeps its
measured tables, and which catalog GPU each of its systems is.

NVIDIA AIConfigurator is a peer run beside the product, never a dependency of it: the readers
(``aic_gemm_table.py``, ``aic_attention_fit.py``, ``aic_nccl_table.py``) run with a scratch
venv's Python (``python3.11 -m venv /tmp/aic && /tmp/aic/bin/pip install aiconfigurator``).
"""

from __future__ import annotations

from pathlib import Path

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
