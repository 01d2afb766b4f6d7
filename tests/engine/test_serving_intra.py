"""The serving model's all-reduce inside one scale-up domain (serving/intra.py) is the
collective model's own figure, bit for bit: its size-independent terms are computed once per
(GPU, ranks), the rest with the same operations in the same order."""

from __future__ import annotations

import dataclasses
import math
import random

import pytest

from advisor.engine.facts.catalog import GpuSpec, default_catalog
from advisor.engine.model.collectives import collective_time_s, scaleup_time_s
from advisor.engine.model.serving.intra import (
    ScaleupAllReduce,
    custom_all_reduce_s,
    intra_time_s,
    scaleup_domain,
)


def _sizes() -> list[float]:
    """Powers of two and their neighbours (the tree correction's table steps at 64 x 2^i, NVLS
    chunk thresholds at factor x channels x heads x chunk), one ulp either side of each, and
    random sizes from 1 byte to 100 GB."""
    rng = random.Random(24)
    sizes: set[float] = set()
    for e in range(0, 38):
        for base in (2.0**e, 64 * 2.0**e, 3 * 2.0**e):
            sizes.update((base, math.nextafter(base, 0.0), math.nextafter(base, math.inf)))
    for factor in (64, 8, 2):
        for concurrent in (16, 24, 32, 64, 96, 128, 192, 256, 512, 768):
            for chunk in (131072, 65536, 32768):
                b = float(factor * concurrent * chunk)
                sizes.update((b, math.nextafter(b, 0.0), math.nextafter(b, math.inf)))
    sizes.update(10 ** rng.uniform(0.0, 11.0) for _ in range(400))
    return sorted(sizes)


SIZES = _sizes()


def _h100() -> GpuSpec:
    gpu = default_catalog().gpu("h100-sxm")
    assert gpu is not None
    return gpu


@pytest.mark.parametrize("gpu", default_catalog().gpus, ids=lambda g: g.id)
def test_the_all_reduce_is_the_collective_models_to_the_bit(gpu: GpuSpec) -> None:
    for ranks in sorted({2, 3, 4, 8, gpu.scaleup_domain_gpus} - {0, 1}):
        domain = scaleup_domain(gpu, ranks)
        pricer = ScaleupAllReduce(domain)
        for nbytes in SIZES:
            expected = collective_time_s("all_reduce", nbytes, domain)[0]
            assert pricer.time_s(nbytes) == expected, (gpu.id, ranks, nbytes)


def test_intra_time_is_scaleup_time_for_every_op() -> None:
    gpu = _h100()
    for op in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all"):
        for nbytes in (0.0, 1.0, 4096.0, 3.3e6, 2.0**30):
            nccl = scaleup_time_s(gpu, op, nbytes, 8)
            custom = custom_all_reduce_s(gpu, nbytes, 8) if op == "all_reduce" and nbytes else None
            expected = nccl if custom is None else min(nccl, custom)
            assert intra_time_s(gpu, op, nbytes, 8) == expected
    assert intra_time_s(gpu, "all_reduce", 2.0**20, 1) == 0.0
    # kept by value: an edited GPU of the same id is priced on its own links
    faster = dataclasses.replace(gpu, scaleup_gbytes_per_s=4 * gpu.scaleup_gbytes_per_s)
    assert intra_time_s(faster, "all_reduce", 2.0**26, 8) < intra_time_s(
        gpu, "all_reduce", 2.0**26, 8
    )


def test_a_communicator_across_domains_is_refused() -> None:
    gpu = _h100()
    with pytest.raises(ValueError, match="inside one domain"):
        ScaleupAllReduce(dataclasses.replace(scaleup_domain(gpu, 8), nodes=2))
