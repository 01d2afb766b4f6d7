"""Fit the engine's collective model to a customer's own nccl-tests / rccl-tests runs.

The engine predicts a collective's time with
:func:`advisor.engine.model.collectives.collective_time_s` on a
:class:`~advisor.engine.model.collectives.CommDomain`.  Two terms of that domain describe the
fabric and are fitted here, everything else (NCCL's algorithms, protocols and latencies) stays:

* multi-server runs: ``net_bytes_per_s`` (effective NIC bandwidth per server) and
  ``net_extra_latency_s`` (latency added per inter-server algorithm step);
* single-server runs: ``scaleup_bytes_per_s`` (NVLink / xGMI / PCIe ring bandwidth) and a
  constant time offset per collective (reported, not applied: the engine has no such term).

The fit minimises the sum of squared log residuals ``ln t_model - ln t_measured`` over every
row (so 8 B and 8 GB weigh the same), by a coarse grid and a local pattern search.  A term is
*identified* when at least one row depends on it for half of its time or more; otherwise it is
held at the engine's default and a warning says why (e.g. "all sizes are latency-bound").

:class:`FabricFit.calibration` turns the fit into a :class:`Calibration` - ratios to the
default model of the measured hardware - which :func:`advisor.engine.evaluate` applies to every
candidate design (docs/MODEL.md, "Calibration from the customer's nccl-tests").
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from advisor.engine.calibration.nccl_tests import ParsedText, Run
from advisor.engine.facts.catalog import Catalog, default_catalog
from advisor.engine.facts.catalog.gpus import GpuSpec
from advisor.engine.facts.constants import FABRICS, busbw_factor
from advisor.engine.facts.formatting import significant
from advisor.engine.input.scenario import Calibration
from advisor.engine.model.collectives import CommDomain, collective_time_s, make_domain
from advisor.engine.model.scaleup import ScaleUp
from advisor.engine.result.base import (
    ResultFormatError,
    stored,
    stored_object,
    stored_optional,
)
from advisor.engine.result.records import (
    CalibrationComparison,
    CalibrationSummary,
    EngineResult,
)

__all__ = [
    "FabricFit",
    "FitHardware",
    "FitPoint",
    "TermFit",
    "fit_measurement",
    "gpu_id_for_name",
]

IDENTIFY_SHARE = 0.5
"""A term is identified when some row spends at least this share of its time on it."""
BANDWIDTH_BOUND_SHARE = 0.7
"""Rows spending at least this share of their time on bandwidth refine the bandwidth term;
rows spending at most 1 - this share refine the latency term."""
LOG_B_MIN, LOG_B_MAX = 6.0, 13.5
"""Search range of a fitted bandwidth, log10 bytes/s (1 MB/s .. 31 TB/s)."""
LATENCY_GRID_S: tuple[float, ...] = (
    0.0,
    1e-7,
    3e-7,
    1e-6,
    3e-6,
    1e-5,
    3e-5,
    1e-4,
    3e-4,
    1e-3,
    3e-3,
)
SCALE_MIN, SCALE_MAX = 0.02, 2.0
"""Calibration ratios are clamped to this range (a ratio outside it is a measurement of a
different machine, and the warning says so)."""
MAX_FIT_SAMPLES = 96
"""At most this many rows per domain kind enter the fit (evenly thinned beyond it), so a huge
upload cannot make the fit slow (it runs inside the upload's request: ~10 ms a row here);
nccl-tests prints ~30 sizes per test, so three tests enter whole."""
MIN_TIME_US, MAX_TIME_US = 0.01, 1e9
"""Rows outside this time range are not measurements of a collective (10 ns .. 17 min)."""
DEFAULT_NIC_GBPS = 400.0
"""Assumed NIC speed when the measurement does not say (the current generation, 400G)."""

_GPU_PATTERNS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("GB200",), "gb200-nvl72"),
    (("B200",), "b200"),
    (("H100", "PCIE"), "h100-pcie"),
    (("H100",), "h100-sxm"),
    (("H200",), "h200-sxm"),
    (("H800",), "h800-sxm"),
    (("H20",), "h20"),
    (("A100",), "a100-80gb-sxm"),
    (("V100",), "v100-sxm2-32gb"),
    (("L40S",), "l40s"),
    (("MI325X",), "mi325x"),
    (("MI300X",), "mi300x"),
    (("GAUDI",), "gaudi3"),
)


def gpu_id_for_name(name: str | None) -> str | None:
    """Catalog GPU id for a device name as nccl-tests prints it, or None."""
    if not name:
        return None
    upper = name.upper()
    for needles, gpu_id in _GPU_PATTERNS:
        if all(n in upper for n in needles):
            return gpu_id
    return None


def _texts(d: Mapping[str, Any], key: str, path: str) -> tuple[str, ...]:
    """A stored list of texts (missing or null: none), each checked to be text."""
    items = d.get(key) or []
    if not isinstance(items, list):
        raise ResultFormatError(f"{path}.{key}: expected a list, got {type(items).__name__}")
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise ResultFormatError(
                f"{path}.{key}[{i}]: expected str, got {type(item).__name__} {item!r:.40}"
            )
    return tuple(items)


@dataclass(frozen=True)
class FitHardware:
    """What the measured cluster is built from (for the default model it is compared with)."""

    fabric: str
    nic_gbps: float
    nics_per_node: int
    assumed: tuple[str, ...] = ()
    """Names of the fields that were assumed rather than given or read from the log."""
    transport: str = ""
    """The network-plugin transport the log ran on (``facts.transports``: AWS EFA, read from
    NCCL's ``NET/OFI`` lines or the ``FI_EFA_*`` / ``FI_PROVIDER=efa`` settings), which the
    default model prices as the design evaluation does; empty: NCCL's own transport."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "fabric": self.fabric,
            "nic_gbps": self.nic_gbps,
            "nics_per_node": self.nics_per_node,
            "assumed": list(self.assumed),
        }
        if self.transport:
            out["transport"] = self.transport
        return out

    @classmethod
    def from_dict(cls, d: Any, path: str = "fit.hardware") -> FitHardware:
        d = stored_object(d, path)
        return cls(
            fabric=stored(d, "fabric", str, path),
            nic_gbps=stored(d, "nic_gbps", float, path),
            nics_per_node=stored(d, "nics_per_node", int, path),
            assumed=_texts(d, "assumed", path),
            transport=stored_optional(d, "transport", str, path) or "",
        )


@dataclass(frozen=True)
class FitPoint:
    """One measured row against the default and the fitted model (bus bandwidth in GB/s)."""

    run: int
    op: str
    nodes: int
    ranks: int
    nbytes: int
    measured_busbw_gbytes_per_s: float
    default_busbw_gbytes_per_s: float
    fitted_busbw_gbytes_per_s: float
    residual_pct: float
    """(fitted time / measured time - 1) x 100."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "op": self.op,
            "nodes": self.nodes,
            "ranks": self.ranks,
            "bytes": self.nbytes,
            "measured_busbw_GBps": self.measured_busbw_gbytes_per_s,
            "default_busbw_GBps": self.default_busbw_gbytes_per_s,
            "fitted_busbw_GBps": self.fitted_busbw_gbytes_per_s,
            "residual_pct": self.residual_pct,
        }

    @classmethod
    def from_dict(cls, d: Any, path: str = "fit.points[]") -> FitPoint:
        d = stored_object(d, path)
        return cls(
            run=stored(d, "run", int, path),
            op=stored(d, "op", str, path),
            nodes=stored(d, "nodes", int, path),
            ranks=stored(d, "ranks", int, path),
            nbytes=stored(d, "bytes", int, path),
            measured_busbw_gbytes_per_s=stored(d, "measured_busbw_GBps", float, path),
            default_busbw_gbytes_per_s=stored(d, "default_busbw_GBps", float, path),
            fitted_busbw_gbytes_per_s=stored(d, "fitted_busbw_GBps", float, path),
            residual_pct=stored(d, "residual_pct", float, path),
        )


@dataclass(frozen=True)
class TermFit:
    """Fitted bandwidth and latency of one domain kind (``network`` or ``scaleup``)."""

    kind: str
    bytes_per_s: float
    default_bytes_per_s: float
    latency_s: float
    default_latency_s: float
    bandwidth_identified: bool
    latency_identified: bool
    rms_residual_pct: float
    default_rms_residual_pct: float
    points: tuple[FitPoint, ...]

    @property
    def bandwidth_scale(self) -> float:
        if self.default_bytes_per_s <= 0:
            return 1.0
        return self.bytes_per_s / self.default_bytes_per_s

    @property
    def bandwidth_gbytes_per_s(self) -> float:
        return self.bytes_per_s / 1e9

    @property
    def default_bandwidth_gbytes_per_s(self) -> float:
        return self.default_bytes_per_s / 1e9

    @property
    def latency_us(self) -> float:
        return self.latency_s * 1e6

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "bandwidth_GBps": self.bytes_per_s / 1e9,
            "default_bandwidth_GBps": self.default_bytes_per_s / 1e9,
            "bandwidth_scale": self.bandwidth_scale,
            "latency_us": self.latency_s * 1e6,
            "default_latency_us": self.default_latency_s * 1e6,
            "bandwidth_identified": self.bandwidth_identified,
            "latency_identified": self.latency_identified,
            "rms_residual_pct": self.rms_residual_pct,
            "default_rms_residual_pct": self.default_rms_residual_pct,
            "points": [p.to_dict() for p in self.points],
        }

    @classmethod
    def from_dict(cls, d: Any, path: str = "fit.term") -> TermFit:
        """A stored fit term (to_dict's shape, GB/s and microseconds) back in SI units; a
        value of the wrong type raises ResultFormatError naming its path."""
        d = stored_object(d, path)
        points = d.get("points") or []
        if not isinstance(points, list):
            raise ResultFormatError(f"{path}.points: expected a list, got {type(points).__name__}")
        return cls(
            kind=stored(d, "kind", str, path),
            bytes_per_s=stored(d, "bandwidth_GBps", float, path) * 1e9,
            default_bytes_per_s=stored(d, "default_bandwidth_GBps", float, path) * 1e9,
            latency_s=stored(d, "latency_us", float, path) / 1e6,
            default_latency_s=stored(d, "default_latency_us", float, path) / 1e6,
            bandwidth_identified=stored(d, "bandwidth_identified", bool, path),
            latency_identified=stored(d, "latency_identified", bool, path),
            rms_residual_pct=stored(d, "rms_residual_pct", float, path),
            default_rms_residual_pct=stored(d, "default_rms_residual_pct", float, path),
            points=tuple(
                FitPoint.from_dict(p, f"{path}.points[{i}]") for i, p in enumerate(points)
            ),
        )


@dataclass(frozen=True)
class FabricFit:
    """Result of :func:`fit_measurement`."""

    gpu_id: str | None
    gpu_name: str | None
    hardware: FitHardware | None
    network: TermFit | None
    scaleup: TermFit | None
    warnings: tuple[str, ...]
    link: dict[str, float] | None = None
    """perftest summary: ``write_bw_Gbps`` (best average), ``write_lat_us`` (best typical)."""

    def calibration(self) -> Calibration:
        net_scale, lat_delta, up_scale = 1.0, 0.0, 1.0
        parts: list[str] = []
        fabric = self.hardware.fabric if self.hardware else None
        if self.network is not None and self.network.bandwidth_identified:
            # never above line rate: the default runs at wire_efficiency of it
            line_cap = 1.0 / FABRICS[fabric].wire_efficiency if fabric else SCALE_MAX
            net_scale = min(_clamp(self.network.bandwidth_scale), line_cap)
            parts.append(f"{fabric or 'network'} bandwidth x{net_scale:.2f}")
        if self.network is not None and self.network.latency_identified:
            lat_delta = self.network.latency_s - self.network.default_latency_s
            parts.append(f"{fabric or 'network'} latency {lat_delta * 1e6:+.1f} us per step")
        if self.scaleup is not None and self.scaleup.bandwidth_identified:
            up_scale = _clamp(self.scaleup.bandwidth_scale)
            parts.append(f"scale-up bandwidth x{up_scale:.2f}")
        return Calibration(
            net_bandwidth_scale=net_scale,
            net_latency_delta_s=lat_delta,
            scaleup_bandwidth_scale=up_scale,
            source="; ".join(parts) if parts else "nothing identified: default model",
            fabric=fabric if self.network is not None else None,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "gpu_id": self.gpu_id,
            "gpu_name": self.gpu_name,
            "hardware": self.hardware.to_dict() if self.hardware else None,
            "network": self.network.to_dict() if self.network else None,
            "scaleup": self.scaleup.to_dict() if self.scaleup else None,
            "warnings": list(self.warnings),
            "link": self.link,
            "calibration": self.calibration().applied().to_dict(),
        }

    @classmethod
    def from_dict(cls, d: Any) -> FabricFit:
        """A stored fit (to_dict's shape) as the typed record; its `calibration` key is not read
        (calibration() derives it from the terms, as to_dict did). A damaged value raises
        ResultFormatError naming its path (``fit.network.latency_us: expected float, ...``)."""
        d = stored_object(d, "fit")
        hardware, network, scaleup = d.get("hardware"), d.get("network"), d.get("scaleup")
        link = stored_object(d.get("link") or {}, "fit.link")
        return cls(
            gpu_id=stored_optional(d, "gpu_id", str, "fit"),
            gpu_name=stored_optional(d, "gpu_name", str, "fit"),
            hardware=FitHardware.from_dict(hardware) if hardware else None,
            network=TermFit.from_dict(network, "fit.network") if network else None,
            scaleup=TermFit.from_dict(scaleup, "fit.scaleup") if scaleup else None,
            warnings=_texts(d, "warnings", "fit"),
            link={str(k): stored(link, k, float, "fit.link") for k in link} if link else None,
        )

    @property
    def terms(self) -> tuple[TermFit, ...]:
        """The fitted terms there are: the network's, then the scale-up domain's."""
        return tuple(term for term in (self.network, self.scaleup) if term is not None)


def _clamp(scale: float) -> float:
    return min(SCALE_MAX, max(SCALE_MIN, scale))


# ----------------------------------------------------------------------------- fitting


@dataclass(frozen=True)
class _Sample:
    run: int
    op: str
    engine_op: str
    domain: CommDomain
    nbytes: int
    time_s: float
    busbw_gbytes_per_s: float


def _domain_at(domain: CommDomain, kind: str, bw: float, lat: float) -> CommDomain:
    """`domain` with the fitted term set to (bw, lat)."""
    if kind == "network":
        return replace(domain, net_bytes_per_s=bw, net_extra_latency_s=lat)
    return replace(domain, scaleup_bytes_per_s=bw)


def _time_on(sample: _Sample, dom: CommDomain, kind: str, lat: float) -> float:
    t = collective_time_s(sample.engine_op, float(sample.nbytes), dom)[0]
    return t if kind == "network" else max(1e-9, t + lat)


def _model_time(sample: _Sample, kind: str, bw: float, lat: float) -> float:
    return _time_on(sample, _domain_at(sample.domain, kind, bw, lat), kind, lat)


def _cost(samples: list[_Sample], kind: str, bw: float, lat: float) -> float:
    total = 0.0
    # The rows of one run share their domain: set the term once per domain, not per row
    # (dataclasses.replace was ~40% of a fit).
    domains: dict[int, CommDomain] = {}
    for s in samples:
        dom = domains.get(id(s.domain))
        if dom is None:
            dom = domains[id(s.domain)] = _domain_at(s.domain, kind, bw, lat)
        t = _time_on(s, dom, kind, lat)
        if t <= 0:
            return math.inf
        total += abs(math.log(t) - math.log(s.time_s))
    return total


def _minimise(
    samples: list[_Sample],
    kind: str,
    *,
    bw0: float,
    lat0: float,
    fit_bw: bool,
    fit_lat: bool,
    lat_min: float,
) -> tuple[float, float]:
    """Coarse grid then pattern search in (log10 bw, latency); fixed terms stay at bw0/lat0."""
    log_grid = [LOG_B_MIN + 0.25 * i for i in range(int((LOG_B_MAX - LOG_B_MIN) / 0.25) + 1)]
    logs = log_grid if fit_bw else [math.log10(bw0)]
    lats = [lat_min + v for v in LATENCY_GRID_S] if fit_lat else [lat0]
    best = (math.inf, math.log10(bw0), lat0)
    for lb in logs:
        for la in lats:
            c = _cost(samples, kind, 10.0**lb, la)
            if c < best[0]:
                best = (c, lb, la)
    cost, lb, la = best
    step_b = 0.125 if fit_bw else 0.0
    step_l = max(1e-7, abs(la) * 0.5) if fit_lat else 0.0
    for _ in range(60):
        improved = False
        for db, dl in ((step_b, 0.0), (-step_b, 0.0), (0.0, step_l), (0.0, -step_l)):
            if db == 0.0 and dl == 0.0:
                continue
            nb, nl = lb + db, la + dl
            if not (LOG_B_MIN <= nb <= LOG_B_MAX) or nl < lat_min:
                continue
            c = _cost(samples, kind, 10.0**nb, nl)
            if c < cost:
                cost, lb, la, improved = c, nb, nl, True
        if not improved:
            step_b /= 2.0
            step_l /= 2.0
            if step_b < 1e-3 and step_l < 1e-9:
                break
    return 10.0**lb, la


def _bw_share(s: _Sample, kind: str, bw: float, lat: float) -> float:
    """Share of the row's predicted time that depends on the bandwidth term (0..1)."""
    t = _model_time(s, kind, bw, lat)
    t2 = _model_time(s, kind, bw * 1.1, lat)
    if t <= 0 or t2 <= 0:
        return 0.0
    return min(1.0, max(0.0, (math.log(t) - math.log(t2)) / math.log(1.1)))


def _scaleup_bound(s: _Sample, bw: float, lat: float) -> bool:
    dom = replace(s.domain, net_bytes_per_s=bw, net_extra_latency_s=lat)
    faster = replace(dom, scaleup_bytes_per_s=dom.scaleup_bytes_per_s * 1.1)
    t = collective_time_s(s.engine_op, float(s.nbytes), dom)[0]
    t2 = collective_time_s(s.engine_op, float(s.nbytes), faster)[0]
    return t > 0 and t2 > 0 and (math.log(t) - math.log(t2)) / math.log(1.1) >= IDENTIFY_SHARE


def _rms_pct(samples: list[_Sample], kind: str, bw: float, lat: float) -> float:
    if not samples:
        return 0.0
    sq = [(math.log(_model_time(s, kind, bw, lat)) - math.log(s.time_s)) ** 2 for s in samples]
    return (math.exp(min(50.0, math.sqrt(sum(sq) / len(sq)))) - 1.0) * 100.0


def _fit_term(
    samples: list[_Sample],
    kind: str,
    *,
    default_bw: float,
    default_lat: float,
    lat_min: float,
    warnings: list[str],
) -> TermFit:
    label = "network" if kind == "network" else "scale-up"
    sizes = {s.nbytes for s in samples}
    fit_lat = len(sizes) > 1
    if not fit_lat:
        warnings.append(
            f"{label}: only one message size ({next(iter(sizes))} B); one size cannot separate "
            "latency from bandwidth, so latency is held at the default model's"
        )
    bw, lat = _minimise(
        samples,
        kind,
        bw0=default_bw,
        lat0=default_lat,
        fit_bw=True,
        fit_lat=fit_lat,
        lat_min=lat_min,
    )
    # Refine as an engineer reads the curve: bandwidth from the bandwidth-bound sizes,
    # latency from the latency-bound sizes (mid sizes, where protocols switch, stay residuals).
    for _ in range(2):
        shares = [_bw_share(s, kind, bw, lat) for s in samples]
        bw_rows = [s for s, sh in zip(samples, shares, strict=True) if sh >= BANDWIDTH_BOUND_SHARE]
        lat_rows = [
            s for s, sh in zip(samples, shares, strict=True) if sh <= 1.0 - BANDWIDTH_BOUND_SHARE
        ]
        if bw_rows:
            bw, _ = _minimise(
                bw_rows, kind, bw0=bw, lat0=lat, fit_bw=True, fit_lat=False, lat_min=lat_min
            )
        if fit_lat and lat_rows:
            _, lat = _minimise(
                lat_rows, kind, bw0=bw, lat0=lat, fit_bw=False, fit_lat=True, lat_min=lat_min
            )
    shares = [_bw_share(s, kind, bw, lat) for s in samples]
    bw_ok = max(shares) >= IDENTIFY_SHARE
    # Latency counts as identified only when some row is latency-bound even with the default
    # latency: otherwise a large fitted latency would make its own rows "latency-bound".
    default_lat_shares = [_bw_share(s, kind, bw, default_lat) for s in samples]
    lat_ok = fit_lat and min(default_lat_shares) <= 1.0 - IDENTIFY_SHARE
    if not bw_ok:
        largest = max(samples, key=lambda s: s.nbytes)
        if kind == "network" and _scaleup_bound(largest, bw, lat):
            warnings.append(
                f"{label}: bandwidth not identified - in the model the in-server (scale-up) "
                f"bandwidth, not the network, limits the largest size ({largest.nbytes} B, "
                f"measured busbw {largest.busbw_gbytes_per_s:.1f} GB/s); the network delivers "
                "at least that. Held at the default."
            )
        else:
            warnings.append(
                f"{label}: bandwidth not identified - every size up to {largest.nbytes} B is "
                "latency-bound in the model; held at the default. Run larger sizes (-e 8G)."
            )
    if fit_lat and not lat_ok:
        smallest = min(sizes)
        warnings.append(
            f"{label}: latency not identified - even the smallest size ({smallest} B) is "
            "bandwidth-bound; held at the default. Run small sizes too (-b 8)."
        )
    if not bw_ok or (fit_lat and not lat_ok):
        bw, lat = _minimise(
            samples,
            kind,
            bw0=bw if bw_ok else default_bw,
            lat0=lat if lat_ok else default_lat,
            fit_bw=bw_ok,
            fit_lat=lat_ok,
            lat_min=lat_min,
        )
        if not bw_ok:
            bw = default_bw
        if not lat_ok:
            lat = default_lat
    points = []
    for s in samples:
        t_fit = _model_time(s, kind, bw, lat)
        t_def = _model_time(s, kind, default_bw, default_lat)
        factor = busbw_factor(s.engine_op, s.domain.ranks)
        points.append(
            FitPoint(
                run=s.run,
                op=s.op,
                nodes=s.domain.nodes,
                ranks=s.domain.ranks,
                nbytes=s.nbytes,
                measured_busbw_gbytes_per_s=s.busbw_gbytes_per_s,
                default_busbw_gbytes_per_s=s.nbytes / t_def * factor / 1e9,
                fitted_busbw_gbytes_per_s=s.nbytes / t_fit * factor / 1e9,
                residual_pct=(t_fit / s.time_s - 1.0) * 100.0,
            )
        )
    return TermFit(
        kind=kind,
        bytes_per_s=bw,
        default_bytes_per_s=default_bw,
        latency_s=lat,
        default_latency_s=default_lat,
        bandwidth_identified=bw_ok,
        latency_identified=lat_ok,
        rms_residual_pct=_rms_pct(samples, kind, bw, lat),
        default_rms_residual_pct=_rms_pct(samples, kind, default_bw, default_lat),
        points=tuple(points),
    )


_OFI_NET_NAMES = frozenset({"OFI", "AWS", "Libfabric"})
"""NCCL's name for the aws-ofi-nccl plugin in its log (``NET/OFI``, ``Using network AWS
Libfabric`` / ``Libfabric``)."""


def _efa_transport(transport: str | None, env: Mapping[str, str], gpu: GpuSpec) -> str:
    """The EFA transport a log ran on (docs/MODEL.md 3, "Transports"), or "" for none: the
    plugin's net name or EFA's libfabric settings, then the instance family by GPU generation
    (A100: p4d/p4de, Hopper: p5/p5e, Blackwell: p6-b200)."""
    efa = transport in _OFI_NET_NAMES or env.get("FI_PROVIDER") == "efa"
    if not (efa or any(k.startswith("FI_EFA_") for k in env)):
        return ""
    return {"ampere": "efa-p4d", "hopper": "efa-p5", "blackwell": "efa-p5en"}.get(
        gpu.generation, ""
    )


def _guess_hardware(
    runs: tuple[Run, ...],
    gpus_per_node: int,
    *,
    fabric: str | None,
    nic_gbps: float | None,
    nics_per_node: int | None,
    gpu: GpuSpec,
) -> FitHardware:
    assumed: list[str] = []
    transport = next((r.transport for r in runs if r.transport), None)
    env: dict[str, str] = {}
    for r in runs:
        env.update(dict(r.env))
    efa = _efa_transport(transport, env, gpu) if fabric in (None, "roce") else ""
    if efa:
        fabric = "roce"  # EFA's bandwidth as the RDMA-over-Ethernet class (MODEL.md 3)
    if fabric is None:
        if transport == "Socket" or env.get("NCCL_IB_DISABLE") == "1":
            fabric = "ethernet"
        elif transport == "IB":
            fabric = "infiniband"
        elif transport == "RoCE" or "NCCL_IB_GID_INDEX" in env:
            fabric = "roce"
        else:
            fabric = "roce"
            assumed.append("fabric")
    if nics_per_node is None:
        hca = env.get("NCCL_IB_HCA", "")
        listed = [h for h in hca.lstrip("=").split(",") if h] if hca and "^" not in hca else []
        if listed:
            nics_per_node = len(listed)
        else:
            nics_per_node = max(1, gpus_per_node)
            assumed.append("nics_per_node")
    if nic_gbps is None:
        nic_gbps = DEFAULT_NIC_GBPS
        assumed.append("nic_gbps")
    return FitHardware(
        fabric=fabric,
        nic_gbps=nic_gbps,
        nics_per_node=nics_per_node,
        assumed=tuple(assumed),
        transport=efa,
    )


def fit_measurement(
    parsed: ParsedText,
    *,
    catalog: Catalog | None = None,
    fabric: str | None = None,
    nic_gbps: float | None = None,
    nics_per_node: int | None = None,
) -> FabricFit:
    """Fit network and scale-up terms to the parsed runs (see module docstring).

    ``fabric`` (``ethernet|roce|infiniband``), ``nic_gbps`` and ``nics_per_node`` describe the
    measured cluster; when omitted they are read from the log (transport, ``NCCL_IB_HCA``) or
    assumed (one 400G NIC per GPU), and the fit says which.
    """
    cat = catalog or default_catalog()
    warnings: list[str] = []
    if fabric is not None and fabric not in FABRICS:
        raise ValueError(f"fabric must be one of {', '.join(sorted(FABRICS))}")
    gpu_name = next((r.gpu for r in parsed.runs if r.gpu), None)
    gpu_id = gpu_id_for_name(gpu_name)
    gpu: GpuSpec | None = cat.gpu(gpu_id) if gpu_id else None
    if gpu is None:
        fallback = "l40s"
        gpu = cat.gpu(fallback) or cat.gpus[0]
        warnings.append(
            f"GPU {gpu_name or 'not named in the log'!r} is not in the catalog; the default "
            f"model uses {gpu.name} (PCIe) for the scale-up part"
        )
    usable: list[tuple[int, Run]] = []
    for i, run in enumerate(parsed.runs):
        if run.engine_op is None:
            warnings.append(f"run {i + 1} ({run.op}): not an operation the engine models; skipped")
        elif not run.nodes or not run.gpus_per_node or not run.ranks:
            warnings.append(
                f"run {i + 1} ({run.op}): servers and GPUs per server unknown (no '# Using "
                "devices' lines); skipped"
            )
        elif run.ranks < 2:
            warnings.append(f"run {i + 1} ({run.op}): a single rank measures no communication")
        else:
            usable.append((i, run))
    multi = [(i, r) for i, r in usable if (r.nodes or 0) > 1]
    single = [(i, r) for i, r in usable if r.nodes == 1]
    gpn = max((r.gpus_per_node or 1 for _i, r in usable), default=1)
    hardware = (
        _guess_hardware(
            tuple(r for _i, r in multi),
            gpn,
            fabric=fabric,
            nic_gbps=nic_gbps,
            nics_per_node=nics_per_node,
            gpu=gpu,
        )
        if multi
        else None
    )
    if hardware is not None and hardware.assumed:
        warnings.append(
            "default model assumes "
            + ", ".join(f"{name}={getattr(hardware, name)}" for name in hardware.assumed)
            + " for the measured cluster (not in the log); give them to compare correctly"
        )

    # Runs of the same shape share one domain object, so a fit sets its terms once per shape.
    interned: dict[CommDomain, CommDomain] = {}

    def domain(run: Run) -> CommDomain:
        dom = _make_domain(run)
        return interned.setdefault(dom, dom)

    def _make_domain(run: Run) -> CommDomain:
        assert run.nodes and run.gpus_per_node
        return make_domain(
            nodes=run.nodes,
            ranks_per_node=run.gpus_per_node,
            scaleup=ScaleUp.of(gpu),
            fabric_id=hardware.fabric if hardware and run.nodes > 1 else None,
            nic_gbps=hardware.nic_gbps if hardware else 0.0,
            nics_per_node=hardware.nics_per_node if hardware else 1,
            transport=(hardware.transport or None) if hardware else None,
        )

    skipped: list[int] = []

    def samples(pairs: list[tuple[int, Run]]) -> list[_Sample]:
        out: list[_Sample] = []
        for i, run in pairs:
            dom = domain(run)
            engine_op = run.engine_op
            assert engine_op is not None
            for row in run.rows:
                if row.nbytes <= 0 or not MIN_TIME_US <= row.time_us <= MAX_TIME_US:
                    skipped.append(row.nbytes)
                    continue
                out.append(
                    _Sample(
                        run=i,
                        op=run.op,
                        engine_op=engine_op,
                        domain=dom,
                        nbytes=row.nbytes,
                        time_s=row.time_us * 1e-6,
                        busbw_gbytes_per_s=row.busbw_gbytes_per_s,
                    )
                )
        if len(out) > MAX_FIT_SAMPLES:
            stride = math.ceil(len(out) / MAX_FIT_SAMPLES)
            warnings.append(
                f"{len(out)} rows: every {stride}th enters the fit (at most {MAX_FIT_SAMPLES})"
            )
            out = out[::stride]
        return out

    network: TermFit | None = None
    scaleup: TermFit | None = None
    net_samples = samples(multi)
    if net_samples:
        ref = net_samples[0].domain
        fab = FABRICS[hardware.fabric] if hardware else None
        network = _fit_term(
            net_samples,
            "network",
            default_bw=ref.net_bytes_per_s,
            default_lat=fab.extra_step_latency_s if fab else 0.0,
            lat_min=0.0,
            warnings=warnings,
        )
    elif multi:
        warnings.append("multi-server runs have no usable rows (time must be positive)")
    up_samples = samples(single)
    if up_samples:
        ref = up_samples[0].domain
        min_t = min(_model_time(s, "scaleup", ref.scaleup_bytes_per_s, 0.0) for s in up_samples)
        scaleup = _fit_term(
            up_samples,
            "scaleup",
            default_bw=ref.scaleup_bytes_per_s,
            default_lat=0.0,
            lat_min=-0.9 * min_t,
            warnings=warnings,
        )
    if skipped:
        warnings.append(
            f"{len(skipped)} rows skipped: size 0 or a time outside "
            f"{MIN_TIME_US}..{MAX_TIME_US:g} us"
        )
    if network is None and scaleup is None and not parsed.link_runs:
        warnings.append("nothing to fit: no run with known servers, GPUs and a modelled operation")
    link = _link_summary(parsed)
    return FabricFit(
        gpu_id=gpu_id,
        gpu_name=gpu_name,
        hardware=hardware,
        network=network,
        scaleup=scaleup,
        warnings=tuple(warnings),
        link=link,
    )


def _link_summary(parsed: ParsedText) -> dict[str, float] | None:
    out: dict[str, float] = {}
    for lr in parsed.link_runs:
        for row in lr.rows:
            if row.bw_average_gbps is not None:
                out["write_bw_Gbps"] = max(out.get("write_bw_Gbps", 0.0), row.bw_average_gbps)
            if row.lat_typical_us is not None:
                best = out.get("write_lat_us")
                out["write_lat_us"] = (
                    row.lat_typical_us if best is None else min(best, row.lat_typical_us)
                )
    return out or None


# ----------------------------------------------------------------------------- comparison


def _summary(result: EngineResult) -> CalibrationSummary:
    rec = result.recommendation
    design_eval = result.design_evaluation
    return CalibrationSummary(
        fabric=rec.fabric or None,
        nic_gbps=rec.nic_gbps,
        nics_per_node=rec.nics_per_node,
        topology=rec.topology.kind,
        oversubscription=rec.topology.oversubscription,
        headline=rec.headline,
        step_time_s=result.metrics.step_time_s,
        ms_per_token=result.metrics.ms_per_token,
        total_cost_usd=result.cost.total_cost_usd,
        design_metrics=design_eval.metrics if design_eval is not None else None,
    )


_DESIGN_KEYS = ("fabric", "nic_gbps", "nics_per_node", "topology", "oversubscription")


def _pct(new: float, old: float) -> str:
    return f"{(new / old - 1.0) * 100.0:+.1f}%" if old else "n/a"


def _best_option(result: EngineResult, fabric: str) -> tuple[float, float] | None:
    """(metric, total cost) of the cheapest feasible option of ``fabric`` in a result."""
    best: tuple[float, float] | None = None
    for o in result.options:
        if o.fabric != fabric or not o.feasible:
            continue
        metric = o.metrics.step_time_s
        metric = metric if metric is not None else o.metrics.ms_per_token
        if metric is None:
            continue
        total = float(o.cost.total_cost_usd)
        if best is None or total < best[1]:
            best = (float(metric), total)
    return best


def _same_option(result: EngineResult, design: CalibrationSummary) -> tuple[float, float] | None:
    """(metric, total cost) of the option of ``result`` built like ``design``."""
    for o in result.options:
        if (o.fabric, o.nic_gbps, o.nics_per_node, o.oversubscription) == (
            design.fabric,
            design.nic_gbps,
            design.nics_per_node,
            design.oversubscription,
        ):
            metric = o.metrics.step_time_s
            metric = metric if metric is not None else o.metrics.ms_per_token
            if metric is not None:
                return float(metric), float(o.cost.total_cost_usd)
    return None


def calibration_comparison(
    default: EngineResult, calibrated: EngineResult, fit: FabricFit
) -> CalibrationComparison:
    """Default vs calibrated result side by side, and whether and why the answer changes."""
    before, after = _summary(default), _summary(calibrated)
    cal = fit.calibration()
    changed = any(getattr(before, k) != getattr(after, k) for k in _DESIGN_KEYS)
    speed = "step_time_s" if before.step_time_s is not None else "ms_per_token"
    unit = "s per step" if speed == "step_time_s" else "ms per token"
    old_v, new_v = getattr(before, speed), getattr(after, speed)
    measured = f"Your measurement ({cal.source})"
    if before.fabric is None:
        why = (
            f"{measured} changes the job's communication time; there is no recommendation to "
            "compare (the job fits in one server or no design was evaluated)."
        )
    elif changed:
        why = (
            f"{measured} changes the answer: {before.fabric} {before.nics_per_node} x "
            f"{before.nic_gbps}G becomes {after.fabric} {after.nics_per_node} x "
            f"{after.nic_gbps}G."
        )
        old_choice = _same_option(calibrated, before)
        if old_choice and new_v is not None:
            why += (
                f" On the measured fabric the former choice needs "
                f"{significant(old_choice[0], 4)} {unit} and "
                f"${old_choice[1]:,.0f} in total; the new one "
                f"{significant(float(new_v), 4)} {unit} and "
                f"${float(after.total_cost_usd or 0):,.0f}."
            )
    else:
        delta = (
            f"{significant(float(old_v), 4)} -> {significant(float(new_v), 4)} {unit} "
            f"({_pct(float(new_v), float(old_v))})"
            if old_v is not None and new_v is not None
            else "unchanged"
        )
        why = (
            f"{measured} does not change the recommendation: {before.fabric} "
            f"{before.nics_per_node} x {before.nic_gbps}G stays best ({delta})."
        )
    if cal.fabric and before.fabric not in (None, cal.fabric):
        old_o, new_o = _best_option(default, cal.fabric), _best_option(calibrated, cal.fabric)
        if old_o and new_o:
            why += (
                f" The measurement is of {cal.fabric}, so it recalibrates the {cal.fabric} "
                f"candidates: the best one now costs ${new_o[1]:,.0f} in total "
                f"(was ${old_o[1]:,.0f}) at {significant(new_o[0], 4)} {unit} "
                f"(was {significant(old_o[0], 4)}); the "
                f"{before.fabric} candidates keep the default model."
            )
    return CalibrationComparison(
        calibration=cal.applied(),
        fit_warnings=tuple(fit.warnings),
        default=before,
        calibrated=after,
        recommendation_changed=changed,
        why=why,
    )
