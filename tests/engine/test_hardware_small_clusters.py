"""Small clusters' storage / in-band network on a small switch (docs/MODEL.md 20.7): one to
eight DGX-class servers get a 25.6T Spectrum-4 SN5400 leaf, not a 51.2T switch.

Figures are catalog prices (estimates, docs/MODEL.md 20.1) summed by hand, never fitted.
"""

from __future__ import annotations

import pytest

from advisor.engine import evaluate
from advisor.engine.decision.bom import NetworkParts, StorageSpec, check_bom, storage_plan, totals
from advisor.engine.facts.catalog import default_catalog

CATALOG = default_catalog()
PARTS = NetworkParts.from_catalog(CATALOG)


def test_sn5400_is_catalogued_from_its_datasheet() -> None:
    sw = next(s for s in CATALOG.switches if s.sku == "spectrum4-sn5400")
    assert sw.part_number == "MSN5400"
    assert sw.radix_at(400) == 64 and sw.switching_tbps == 25.6
    assert sw.cage_at(400) == ("qsfp-dd", 1)
    # the SN5600's estimate per Tb/s: $80,000 / 51.2 x 25.6
    assert sw.unit_price_usd == 40_000.0 and sw.price_is_estimate
    assert sw.role == "storage"


def test_one_dgx_h100_gets_one_sn5400_and_dr4_optics() -> None:
    plan = storage_plan(PARTS, nodes=1, spec=StorageSpec.for_gpu(CATALOG.gpu("h100-sxm")))
    assert plan.switch.sku == "spectrum4-sn5400" and plan.topo.total_switches == 1
    qty: dict[str, int] = {}
    for ln in plan.lines:
        qty[ln.sku] = qty.get(ln.sku, 0) + ln.quantity
    # 2 server links + 1 storage-target link + 2 core uplinks, each a QSFP-DD DR4 at the
    # leaf; the 3 links to adapters end in a QSFP112 DR4, the 2 uplinks in a second QSFP-DD
    assert qty["qsfpdd-400g-dr4"] == 3 + 2 * 2
    assert qty["qsfp112-400g-dr4"] == 3
    assert qty["fiber-mpo-smf"] == 5
    # 2 x ConnectX-7 $3,200 + SN5400 $40,000 + 7 x $1,100 + 3 x $1,100 + 5 x $90
    assert totals(plan.lines)[0] == pytest.approx(57_850.0)
    assert check_bom(list(plan.lines), PARTS) == []


@pytest.mark.parametrize("nodes", [1, 2, 4, 8])
def test_small_clusters_storage_is_cheaper_than_a_51t_leaf(nodes: int) -> None:
    spec = StorageSpec.for_gpu(CATALOG.gpu("b200"))
    plan = storage_plan(PARTS, nodes=nodes, spec=spec)
    assert plan.switch.sku == "spectrum4-sn5400"
    assert plan.switch.switching_tbps < 51.2


def test_larger_clusters_keep_the_cheaper_per_port_51t_leaf() -> None:
    plan = storage_plan(PARTS, nodes=16, spec=StorageSpec.for_gpu(CATALOG.gpu("h100-sxm")))
    assert plan.switch.switching_tbps == 51.2


def test_200g_storage_adapters_keep_their_200g_leaf() -> None:
    plan = storage_plan(PARTS, nodes=2, spec=StorageSpec.for_gpu(CATALOG.gpu("a100-80gb-sxm")))
    assert plan.switch.sku == "sn3700-200g-32"


def test_two_servers_get_an_sn5400_storage_leaf_and_no_sn5400_in_the_compute_fabric() -> None:
    result = evaluate(
        {
            "workload": "training",
            "model": "llama3-8b",
            "gpu": "h100-sxm",
            "gpus": 16,
            "training": {"total_tokens": 1e11},
        }
    )
    bom = result["bom"]
    storage = [ln for ln in bom if ln["network"] == "storage" and ln["category"] == "switch"]
    compute = [ln for ln in bom if ln["network"] == "compute" and ln["category"] == "switch"]
    assert [ln["part_number"] for ln in storage] == ["MSN5400"]
    assert compute and all(ln["part_number"] != "MSN5400" for ln in compute)
