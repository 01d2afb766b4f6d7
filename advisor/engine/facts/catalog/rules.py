"""The rules every catalog item obeys, checked when a catalog is built from data.

Staff edit the catalog in the hardware admin; a typo there (a minus sign, a price of 1e308, a
switch radix of 0, 0 GPUs per server) must never become a negative quote, a silently dropped
switch or a division by zero inside an evaluation. :func:`check_catalog_items` refuses such a
catalog with :class:`CatalogError` naming the item and the field.

Sane maxima: the largest built-in items are a $250k switch and a $45k GPU; a chassis switch
costs a few $M, so $10M per unit is far above any real price and far below a typo's 1e308.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

MAX_UNIT_PRICE_USD = 10_000_000.0
MAX_CLOUD_USD_PER_HOUR = 1_000.0
MAX_POWER_W = 100_000.0
MAX_COUNT = 100_000
"""Ports, lanes, radix, GPUs: far above any real item, far below an overflow."""
ALLOWED_GPUS_PER_SERVER = (1, 2, 4, 8, 16)
"""GPUs in one server (or compute tray) across the platforms we know: PCIe cards in 1/2/4/8,
HGX/OAM baseboards of 4 or 8, NVL72 compute trays of 4, 16-GPU HGX-2 class systems."""


class CatalogError(ValueError):
    """A catalog item breaks a rule; the message names the item and the field."""


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _fail(where: str, field: str, rule: str, value: Any) -> CatalogError:
    return CatalogError(f"{where}.{field} {rule} (got {value!r:.40})")


def _positive(item: Any, where: str, field: str, *, maximum: float | None = None) -> None:
    value = getattr(item, field)
    if not _number(value) or value <= 0:
        raise _fail(where, field, "must be a number above 0", value)
    if maximum is not None and value > maximum:
        raise _fail(where, field, f"must be at most {maximum:,.0f}", value)


def _not_negative(item: Any, where: str, field: str, *, maximum: float | None = None) -> None:
    value = getattr(item, field)
    if not _number(value) or value < 0:
        raise _fail(where, field, "must be a number of at least 0", value)
    if maximum is not None and value > maximum:
        raise _fail(where, field, f"must be at most {maximum:,.0f}", value)


def _count(value: Any, where: str, field: str, *, minimum: int = 1) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= MAX_COUNT:
        raise _fail(where, field, f"must be a whole number from {minimum} to {MAX_COUNT:,}", value)


def _price(item: Any, where: str, field: str, *, may_be_free: bool = False) -> None:
    if may_be_free:
        _not_negative(item, where, field, maximum=MAX_UNIT_PRICE_USD)
    else:
        _positive(item, where, field, maximum=MAX_UNIT_PRICE_USD)


def check_gpus(gpus: Iterable[Any]) -> None:
    for gpu in gpus:
        where = f"gpus[{gpu.id}]"
        _price(gpu, where, "price_usd")
        _positive(gpu, where, "cloud_usd_per_hour", maximum=MAX_CLOUD_USD_PER_HOUR)
        _positive(gpu, where, "power_w", maximum=MAX_POWER_W)
        for field in ("memory_gb", "memory_bw_gbytes_per_s", "scaleup_gbytes_per_s"):
            _positive(gpu, where, field)
        for field in (
            "bf16_dense_tflops",
            "fp16_dense_tflops",
            "fp8_dense_tflops",
            "fp4_dense_tflops",
        ):
            _not_negative(gpu, where, field)
        if max(gpu.bf16_dense_tflops, gpu.fp16_dense_tflops, gpu.fp8_dense_tflops) <= 0:
            raise _fail(where, "fp16_dense_tflops", "or another precision must be above 0", 0)
        for field in ("scaleup_efficiency", "achievable_compute_fraction"):
            value = getattr(gpu, field)
            if not _number(value) or not 0 < value <= 1:
                raise _fail(where, field, "must be a fraction above 0 and at most 1", value)
        if gpu.gpus_per_server not in ALLOWED_GPUS_PER_SERVER or isinstance(
            gpu.gpus_per_server, bool
        ):
            raise _fail(
                where,
                "gpus_per_server",
                "must be one of " + ", ".join(map(str, ALLOWED_GPUS_PER_SERVER)),
                gpu.gpus_per_server,
            )
        _count(gpu.scaleup_domain_gpus, where, "scaleup_domain_gpus")
        if gpu.scaleup_domain_gpus % gpu.gpus_per_server and (
            gpu.gpus_per_server % gpu.scaleup_domain_gpus
        ):
            raise _fail(
                where,
                "scaleup_domain_gpus",
                f"must be a multiple or a divisor of gpus_per_server ({gpu.gpus_per_server})",
                gpu.scaleup_domain_gpus,
            )
        _count(gpu.reference_nic_count, where, "reference_nic_count", minimum=0)
        _count(gpu.storage_ports_per_server, where, "storage_ports_per_server", minimum=0)
        _count(gpu.inband_ports_per_server, where, "inband_ports_per_server", minimum=0)
        _count(gpu.host_pcie_gen, where, "host_pcie_gen", minimum=0)


def _network_item(item: Any, kind: str, *, may_be_free: bool = False) -> str:
    where = f"{kind}[{item.sku}]"
    _price(item, where, "unit_price_usd", may_be_free=may_be_free)
    _not_negative(item, where, "power_w", maximum=MAX_POWER_W)
    return where


def check_nics(nics: Iterable[Any]) -> None:
    for nic in nics:
        # Ports built into the accelerator (Gaudi 3) are not bought: they may cost nothing.
        where = _network_item(nic, "nics", may_be_free=bool(nic.integrated))
        _count(nic.port_gbps, where, "port_gbps")
        _count(nic.ports, where, "ports")
        _count(nic.links_per_port, where, "links_per_port")
        _count(nic.lane_gbps, where, "lane_gbps", minimum=0)
        _count(nic.rail_groups, where, "rail_groups", minimum=0)


def check_switches(switches: Iterable[Any]) -> None:
    for switch in switches:
        where = _network_item(switch, "switches")
        _positive(switch, where, "switching_tbps")
        _not_negative(switch, where, "port_latency_ns")
        _count(switch.rack_units, where, "rack_units")
        if not switch.radix_by_gbps:
            raise _fail(where, "radix_by_gbps", "must list at least one (speed, ports)", ())
        for pair in switch.radix_by_gbps:
            if not isinstance(pair, tuple | list) or len(pair) != 2:
                raise _fail(where, "radix_by_gbps", "must hold (speed Gb/s, ports) pairs", pair)
            _count(pair[0], where, "radix_by_gbps speed")
            _count(pair[1], where, "radix_by_gbps ports")
        for triple in switch.cages_by_gbps:
            if not isinstance(triple, tuple | list) or len(triple) != 3:
                raise _fail(
                    where, "cages_by_gbps", "must hold (speed, cage, ports) triples", triple
                )
            _count(triple[0], where, "cages_by_gbps speed")
            _count(triple[2], where, "cages_by_gbps ports per cage")


def check_optics(transceivers: Iterable[Any], cables: Iterable[Any]) -> None:
    for module in transceivers:
        where = _network_item(module, "transceivers")
        _count(module.gbps, where, "gbps")
        _positive(module, where, "reach_m")
        _count(module.ports_per_module, where, "ports_per_module")
        _count(module.fibers_per_module, where, "fibers_per_module", minimum=0)
        _count(module.lane_gbps, where, "lane_gbps", minimum=0)
    for cable in cables:
        where = _network_item(cable, "cables")
        # A fiber patch cord carries any speed its transceivers run (gbps 0).
        _count(cable.gbps, where, "gbps", minimum=0 if cable.kind == "fiber" else 1)
        _positive(cable, where, "reach_m")
        _count(cable.links, where, "links")
        _count(cable.legs, where, "legs")


def check_catalog_items(
    *,
    gpus: Iterable[Any],
    nics: Iterable[Any],
    switches: Iterable[Any],
    transceivers: Iterable[Any],
    cables: Iterable[Any],
) -> None:
    """Raise CatalogError naming the first item and field that breaks a rule."""
    check_gpus(gpus)
    check_nics(nics)
    check_switches(switches)
    check_optics(transceivers, cables)
