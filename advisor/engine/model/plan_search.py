"""The planner's search of one cluster size: every plan shape that can fit, ranked by the step
estimate (:mod:`advisor.engine.model.plan_estimate`) with branch and bound, its memory fits and
stage times asked once per size (:class:`_SizeMemo`).

Units: bytes, seconds, FLOPs (not FLOP/s) unless the name says otherwise.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from operator import itemgetter
from typing import Any, Final

from advisor.engine.facts.constants import DP_OVERLAP_EFFICIENCY
from advisor.engine.input.scenario import ZERO_STAGES, Scenario
from advisor.engine.model.efficiency import hopper_or_newer
from advisor.engine.model.memory import (
    _activation_part,
    _activation_terms,
    _state_parts,
    memory_consts,
)
from advisor.engine.model.plan_estimate import (
    REFERENCE_GPU_NET_BYTES_PER_S,
    SCALE_UP_REFERENCE_BYTES_PER_S,
    _ShapeBase,
    shape_base_of,
    shape_consts,
)
from advisor.engine.model.plans import (
    _divisors,
    _powers_of_two_up_to,
    a2a_overlap_runs,
    domain_gpus,
    moe_software,
)
from advisor.engine.model.stage_time import (
    TP_OVERLAP_HIDDEN,
    _microbatches,
    _stage_split,
    _stage_table,
    _stage_time_per_microbatch,
    layer_and_head_s,
)
from advisor.engine.result.echo import Memory

MICRO_BATCHES: tuple[int, ...] = (1, 2)
MOE_MICRO_BATCHES: tuple[int, ...] = (1, 2, 4)
"""Mixture-of-experts models also try 4 sequences a micro-batch: each local expert's GEMMs grow
with the tokens routed to it, and NeMo's MoE recipes run 4 (gpt-oss 120B on 64 B200 / GB200,
Qwen3 30B-A3B on 8 B200 / GB200: Megatron-Bridge performance configurations); its dense recipes
run 1 or 2."""
PP_MAX: Final = 128
"""Pipeline depths the planner tries: divisors of the layer count and powers of two (with
Megatron's uneven first/last stages), up to 128 stages."""
VIRTUAL_STAGES: tuple[int, ...] = (1, 2, 4, 8)
CONTEXT_PARALLEL: tuple[int, ...] = (1, 2, 4, 8, 16, 32)
CP_MIN_TOKENS_PER_RANK: Final = 4096
"""The planner splits a sequence over cp ranks only while each keeps >= 4096 tokens (NeMo's
long-context recipes: CP 2 at 8k-16k, CP 16 at 128k)."""


@dataclass(frozen=True)
class _Candidate:
    tp: int
    pp: int
    cp: int
    dp: int
    ep: int
    mb: int
    vp: int
    sharding: str
    recompute: str
    stages: tuple[int, int, int]
    mem: Memory
    estimate_s: float

    # written out: mypyc runs the methods @dataclass generates interpreted (ARCHITECTURE.md)
    def __init__(
        self,
        tp: int,
        pp: int,
        cp: int,
        dp: int,
        ep: int,
        mb: int,
        vp: int,
        sharding: str,
        recompute: str,
        stages: tuple[int, int, int],
        mem: Memory,
        estimate_s: float,
    ) -> None:
        object.__setattr__(self, "tp", tp)
        object.__setattr__(self, "pp", pp)
        object.__setattr__(self, "cp", cp)
        object.__setattr__(self, "dp", dp)
        object.__setattr__(self, "ep", ep)
        object.__setattr__(self, "mb", mb)
        object.__setattr__(self, "vp", vp)
        object.__setattr__(self, "sharding", sharding)
        object.__setattr__(self, "recompute", recompute)
        object.__setattr__(self, "stages", stages)
        object.__setattr__(self, "mem", mem)
        object.__setattr__(self, "estimate_s", estimate_s)


def _min_dp(batch: int, dp_max: int, mb: int, ep: int) -> int:
    """Fewest data-parallel ranks (a multiple of ep, <= dp_max) with the micro-batch count of
    dp_max: more ranks than that only add communication, so they are left idle."""
    m = _microbatches(batch, dp_max, mb)
    dp = math.ceil(batch / (m * mb))
    dp = math.ceil(dp / ep) * ep
    return max(ep, min(dp_max, dp))


def _tp_overlap(scenario: Scenario) -> bool:
    p = scenario.parallelism
    if p.tp_comm_overlap is not None:
        return p.tp_comm_overlap
    return hopper_or_newer(scenario.gpu)


def _sharding_options(scenario: Scenario) -> tuple[str, ...]:
    assert scenario.training is not None
    p = scenario.parallelism
    if p.zero is not None:
        return (ZERO_STAGES[p.zero],)
    if scenario.training.sharding_given:
        return (scenario.training.sharding,)
    return (
        (scenario.training.sharding, "zero3")
        if scenario.training.sharding != "zero3"
        else ("zero3",)
    )


_Shape = tuple[float, int, int, int, int, int, int, int, tuple[int, int, int], int]
"""(compute floor, tp, cp, pp, ep, micro-batch, dp, micro-batches, stages, deepest vp)."""


class _SizeMemo:
    """Memory fits and stage times of one cluster size (one scenario): its fast and slow
    searches walk the same shapes and ask the same questions (~40 % of the fits twice)."""

    __slots__ = (
        "_cap", "_consts", "_recomputes", "_scenario", "_shape_fits", "_state", "_table",
        "_terms", "bases", "consts",
    )  # fmt: skip

    def __init__(self, scenario: Scenario) -> None:
        p = scenario.parallelism
        self._scenario = scenario
        self._recomputes = (p.recompute,) if p.recompute else RECOMPUTE_ORDER
        self._shape_fits: dict[tuple[Any, ...], dict[tuple[str, str, int], bool]] = {}
        self._state: dict[tuple[Any, ...], tuple[float, float, float]] = {}
        self._terms: dict[tuple[int, int, str, int], tuple[float, float, float]] = {}
        """memory._activation_terms by (tp, micro-batch, recomputation, cp)."""
        self.bases: dict[tuple[int, ...], _ShapeBase] = {}
        """Each shape's :func:`plan_estimate.shape_base` (its bytes; each search divides
        them by its own rate)."""
        # the model's constants and the stage-time table, looked up once for the size
        self._consts = memory_consts(scenario)
        self._table = _stage_table(scenario)
        self.consts = shape_consts(scenario)
        """:func:`plan_estimate.shape_consts` of the size (what each shape's bytes read of it)."""
        self._cap = scenario.gpu.usable_bytes
        """:func:`memory._parts_fit`'s usable bytes."""

    def shape_fits(
        self,
        tp: int,
        pp: int,
        dp: int,
        ep: int,
        mb: int,
        mcount: int,
        cp: int,
        stages: tuple[int, int, int],
    ) -> dict[tuple[str, str, int], bool]:
        """The fits of one shape by (sharding, recomputation, interleaving), filled by the
        searches of this size as they ask (:meth:`fit_of`): a search asks each shape
        several times, both searches the same shapes."""
        key = (tp, pp, dp, ep, mb, mcount, cp, stages)
        table = self._shape_fits.get(key)
        if table is None:
            table = self._shape_fits[key] = {}
        return table

    def fit_of(
        self,
        tp: int,
        pp: int,
        dp: int,
        ep: int,
        mb: int,
        sharding: str,
        recompute: str,
        mcount: int,
        cp: int,
        vp: int,
        stages: tuple[int, int, int],
    ) -> bool:
        """:func:`advisor.engine.model.memory._fits`, not kept (the searches keep it in
        :meth:`shape_fits`'s tables)."""
        # memory._fits from its two halves: the weights and optimizer state, kept for the
        # size (they do not depend on the micro-batch, recomputation or interleaving), and
        # the activations from their terms, kept by (tp, micro-batch, recomputation, cp); the
        # activation part itself is priced again (four in five are asked once: keeping them
        # cost more than the arithmetic)
        s = self._scenario
        state_key = (tp, pp, dp, ep, sharding, cp, stages)
        state = self._state.get(state_key)
        if state is None:
            state = self._state[state_key] = _state_parts(
                s, tp, pp, dp, ep, sharding, cp, stages, self._consts
            )
        terms_key = (tp, mb, recompute, cp)
        terms = self._terms.get(terms_key)
        if terms is None:
            terms = self._terms[terms_key] = _activation_terms(
                s, tp, mb, recompute, cp, self._consts
            )
        act = _activation_part(
            s, tp, pp, mb, recompute, mcount, cp, vp, stages, self._consts, terms
        )
        return state[0] + state[1] + act <= self._cap  # memory._parts_fit

    def timing(
        self,
        tp: int,
        cp: int,
        ep: int,
        mb: int,
        stages: tuple[int, int, int],
        pp: int,
        level: int,
    ) -> tuple[float, float]:
        """The stage time per micro-batch of a shape under the ``level``-th recomputation
        tried, computed when first asked (a shape cut by its bound never needs the levels
        above the first)."""
        rc = self._recomputes[level]
        hit = self._table.get((tp, cp, ep, mb, rc, stages, pp))  # _stage_time_per_microbatch's
        if hit is None:
            hit = _stage_time_per_microbatch(
                self._scenario, tp, cp, ep, mb, rc, stages, pp, self._table
            )
        return hit


def _search_training(
    scenario: Scenario,
    rates: Sequence[tuple[float, int]] = ((REFERENCE_GPU_NET_BYTES_PER_S, 1),),
    shapes: list[_Shape] | None = None,
    *,
    shared: _SizeMemo | None = None,
) -> list[list[_Candidate]]:
    """The fitting plans the planner considers (branch and bound on the step estimate), their
    memory left to :func:`_with_memory` (:data:`_MEMORY_PENDING`).

    tp: powers of two inside the scale-up domain dividing the heads; pp: divisors of the layers
    and powers of two (Megatron's uneven first/last stages); cp: while >= 4096 tokens per rank;
    ep: divisors of the experts; vp: interleaving that divides the inner stages; micro-batch
    1/2; ZeRO 1/3; recomputation none < selective < full (the first that fits, per sharding and
    per interleaving: deeper interleaving may hold less than vp 2, so each vp walks the levels,
    from the first that vp 1, which holds least, could take). dp is the fewest ranks that reach
    the micro-batch count of all remaining GPUs, so adding servers never slows a plan (monotone
    by construction): the extra GPUs idle instead. Estimates use ``bw`` bytes/s per GPU across
    servers. A plan whose compute alone (no recomputation, no communication) is slower than the
    ``keep``-th best fitting plan found so far is skipped without pricing its memory, so the
    ``keep`` best by estimate are exact (among the plans returned): a true top ``keep`` depends
    on the plans alone, so the best plans of a size that fit a smaller size are the best of that
    size too, and the planner's levels (:func:`_fastest_on_fewer_gpus`) carry them to every
    larger size.

    ``rates``: (``bw``, ``keep``) of each search; the searches walk the shapes together (one
    list of plans found each, in the order each alone finds them): a shape's fits, stage
    times, bytes and interleavings are looked up once for all of them, and a search that has
    passed its bound drops out.  ``shared``: the memory fits and stage times of this size
    (its searches walk the same shapes).
    """
    assert scenario.training is not None
    p = scenario.parallelism
    memo = shared if shared is not None else _SizeMemo(scenario)
    recomputes = (p.recompute,) if p.recompute else RECOMPUTE_ORDER
    shardings = _sharding_options(scenario)
    tp_overlap = _tp_overlap(scenario)
    # Megatron-Core's 1F1B all-to-all overlap runs on some plans only (a2a_overlap_runs); the
    # shape's bound below assumes it (it only lowers the estimate), each plan asks
    a2a = moe_software(scenario).overlap == "a2a_1f1b"
    # 1. every shape (tp, cp, pp, ep, micro-batch) that can fit at all, with a compute floor
    # (the same whatever ``bw``: computed once for both searches of a size)
    if shapes is None:
        shapes = _shapes(scenario)
    # 2. best first: each search prices shapes by their floor until the floor exceeds its
    # keep-th best estimate (a max-heap of the keep best so far); floors rise and bests only
    # fall, so a search that has stopped never resumes
    searches = [_Search(bw, keep) for bw, keep in rates]
    live = searches
    least = math.inf  # the lowest bound of the live searches
    bases = memo.bases
    consts = memo.consts
    # _estimate_from's arithmetic, written out (the same float operations in the same order):
    # ~6,000 estimates a design
    hidden = 1.0 - TP_OVERLAP_HIDDEN if tp_overlap else 1.0
    zero3 = tuple(sharding == "zero3" for sharding in shardings)
    last_fit = (shardings[-1], recomputes[-1], 1)
    no_dp = (0.0,) * len(shardings)
    levels = len(recomputes)
    two = len(shardings) == 2
    z3_first, z3_last = zero3[0], zero3[-1]
    given_vps: tuple[int, ...] = (p.virtual_stages,) if p.virtual_stages else (1,)
    # the interleavings of a shape by (inner stage layers, micro-batches >= pp)
    vps_by: dict[tuple[int, bool], tuple[int, ...]] = {}
    for floor, tp, cp, pp, ep, mb, dp, mcount, stages, vp_max in shapes:
        if floor > least:
            # compute alone (no recomputation, no communication) is already slower
            live = [s for s in live if floor <= s.best]
            if not live:
                break
            least = min(s.best for s in live)
        fit = None
        if least == math.inf:
            # no live search has a plan yet: each prices the shape whatever its estimate, so
            # the smallest footprint is asked before the estimate
            fit = memo.shape_fits(tp, pp, dp, ep, mb, mcount, cp, stages)
            smallest = fit.get(last_fit)
            if smallest is None:
                smallest = fit[last_fit] = memo.fit_of(
                    tp, pp, dp, ep, mb, shardings[-1], recomputes[-1], mcount, cp, 1, stages
                )
            if not smallest:
                continue
        base = bases.get((tp, cp, pp, ep, mb, dp))
        if base is None:
            base = bases[tp, cp, pp, ep, mb, dp] = shape_base_of(
                consts, tp, pp, cp, dp, ep, mb, stages, mcount
            )
        # the stage time of each recomputation level, asked once per shape
        times: list[tuple[float, float] | None] = [None] * len(recomputes)
        per_mb0, tp_s0 = times[0] = memo.timing(tp, cp, ep, mb, stages, pp, 0)
        # a bound with the data-parallel term of the cheaper sharding and the deepest
        # interleaving; then the smallest footprint of the shape (last sharding and
        # recomputation, no interleaving) must fit: a shape either fails is skipped, so the
        # memory is asked only of the shapes some search's bound keeps
        pricing = []
        compute0 = (mcount + (pp - 1) / vp_max) * (per_mb0 + tp_s0 * hidden)
        # shape_terms_at of each search's rate, written out (the same divisions)
        _, grad_b, grad_share, pp_bytes, ep_bytes, ep_net, has_dp, dualpipe = base
        # the data-parallel passes of each sharding (ZeRO-3 adds two per micro-batch), written
        # out for the one or two shardings tried
        pass0 = 2.0 + (2.0 * mcount if z3_first else 0.0)
        pass1 = 2.0 + (2.0 * mcount if z3_last else 0.0)
        for search in live:
            bw = search.bw
            grad = max(grad_b * grad_share / bw, grad_b / SCALE_UP_REFERENCE_BYTES_PER_S)
            grad3 = grad_b / (bw if grad_share > 0.0 else REFERENCE_GPU_NET_BYTES_PER_S)
            pp_unit = pp_bytes / bw
            ep_unit = ep_bytes / (bw if ep_net else SCALE_UP_REFERENCE_BYTES_PER_S)
            dp_s = no_dp
            if has_dp:
                first = pass0 * (grad3 if z3_first else grad)
                dp_s = (first, pass1 * (grad3 if z3_last else grad)) if two else (first,)
            if search.best < math.inf:
                dp_exposed = math.inf
                for i in range(len(zero3)):  # zip(zero3, dp_s): one or two shardings
                    z3, dp_z = zero3[i], dp_s[i]
                    window = (compute0 if z3 else per_mb0) * DP_OVERLAP_EFFICIENCY
                    exposed = dp_z - window
                    exposed = exposed if exposed > 0.0 else 0.0  # max(0.0, exposed)
                    if exposed < dp_exposed:  # min(dp_exposed, exposed)
                        dp_exposed = exposed
                ep_s = ep_unit * mcount
                if dualpipe:
                    ep_s = max(0.0, ep_s - compute0)
                if compute0 + dp_exposed + 0.0 + ep_s > search.best:
                    continue
            pricing.append((search, pp_unit, ep_unit, dualpipe, dp_s))
        if not pricing:
            continue
        if fit is None:
            fit = memo.shape_fits(tp, pp, dp, ep, mb, mcount, cp, stages)
            smallest = fit.get(last_fit)
            if smallest is None:
                smallest = fit[last_fit] = memo.fit_of(
                    tp, pp, dp, ep, mb, shardings[-1], recomputes[-1], mcount, cp, 1, stages
                )
            if not smallest:
                continue
        vps = given_vps
        if not p.virtual_stages and pp > 1:
            vkey = (stages[1], mcount >= pp)
            found_vps = vps_by.get(vkey)
            if found_vps is None:
                found_vps = vps_by[vkey] = tuple(
                    v for v in VIRTUAL_STAGES if stages[1] % v == 0 and mcount >= pp
                ) or (1,)
            vps = found_vps
        for search, pp_unit, ep_unit, dualpipe, dp_s in pricing:
            best = search.best
            kept = search.kept
            ep_mb = ep_unit * mcount
            for i in range(len(shardings)):  # zip(shardings, zero3, dp_s)
                sharding, z3, dp_z = shardings[i], zero3[i], dp_s[i]
                # each interleaving takes its own least recomputation that fits: memory is not
                # monotone in vp (the first rank's 1 + (pp-1)/(pp vp) peaks at vp 2, the last
                # rank's grows with vp), only least without interleaving, so a level that does
                # not fit at vp 1 fits at no vp and every walk starts from vp 1's first
                # candidate level
                floor_rc = 0
                for vp in vps:
                    level = floor_rc
                    bubble = mcount + (pp - 1) / vp
                    pp_send = pp_unit * mcount * vp
                    while level < levels:
                        rc = recomputes[level]
                        timed = times[level]
                        if timed is None:
                            timed = times[level] = memo.timing(tp, cp, ep, mb, stages, pp, level)
                        per_mb, tp_s = timed
                        compute = bubble * (per_mb + tp_s * hidden)
                        window = (compute if z3 else per_mb) * DP_OVERLAP_EFFICIENCY
                        ep_s = ep_mb
                        if dualpipe and (not a2a or a2a_overlap_runs(ep, pp, vp, rc)):
                            ep_s = ep_mb - compute
                            ep_s = ep_s if ep_s > 0.0 else 0.0  # max(0.0, ...)
                        exposed = dp_z - window
                        exposed = exposed if exposed > 0.0 else 0.0  # max(0.0, ...)
                        est = compute + exposed + pp_send + ep_s
                        if est > best:
                            break  # more recomputation is only slower
                        ok = fit.get((sharding, rc, vp))
                        if ok is None:
                            ok = fit[sharding, rc, vp] = memo.fit_of(
                                tp, pp, dp, ep, mb, sharding, rc, mcount, cp, vp, stages
                            )
                        if ok:
                            heapq.heappush(kept, -est)
                            if len(kept) > search.keep:
                                heapq.heappop(kept)
                            best = -kept[0] if len(kept) >= search.keep else math.inf
                            search.out.append(
                                _Candidate(
                                    tp, pp, cp, dp, ep, mb, vp, sharding, rc, stages,
                                    _MEMORY_PENDING, est,
                                )
                            )  # fmt: skip
                            break
                        level += 1
                    if vp == 1:
                        floor_rc = level  # the levels below do not fit at vp 1, so at no vp
                    if floor_rc >= levels:
                        break
            if best < search.best:
                search.best = best
                least = min(least, best)
    return [s.out for s in searches]


class _Search:
    """One search of :func:`_search_training`: its rate, how many best plans it keeps, the
    keep-th best estimate so far (its bound), the max-heap of the kept estimates and the
    plans found."""

    __slots__ = ("best", "bw", "keep", "kept", "out")

    def __init__(self, bw: float, keep: int) -> None:
        self.bw = bw
        self.keep = keep
        self.best = math.inf
        self.kept: list[float] = []
        self.out: list[_Candidate] = []


def _shapes(scenario: Scenario) -> list[_Shape]:
    """Every shape (tp, cp, pp, ep, micro-batch) of :func:`_search_training` that can fit at
    all, with its compute floor (no recomputation, the deepest interleaving), lowest first."""
    p = scenario.parallelism
    first_rc = p.recompute or RECOMPUTE_ORDER[0]
    shapes: list[_Shape] = []
    table = _stage_table(scenario)
    for tp, cp, pp, ep, mb, dp, mcount, stages, vp_max in _shape_rows(scenario):
        timed = table.get((tp, cp, ep, mb, first_rc, stages, pp))  # as the function keys it
        if timed is None:
            timed = _stage_time_per_microbatch(
                scenario, tp, cp, ep, mb, first_rc, stages, pp, table
            )
        per_mb = timed[0]
        floor = (mcount + (pp - 1) / vp_max) * per_mb
        shapes.append((floor, tp, cp, pp, ep, mb, dp, mcount, stages, vp_max))
    shapes.sort(key=itemgetter(0))
    return shapes


def _shape_rows(
    scenario: Scenario,
) -> Iterator[tuple[int, int, int, int, int, int, int, tuple[int, int, int], int]]:
    """The shapes of :func:`_shapes` without their floors, in enumeration order:
    (tp, cp, pp, ep, micro-batch, dp, micro-batches, stages, deepest vp)."""
    assert scenario.training is not None
    p = scenario.parallelism
    m = scenario.model
    batch = scenario.training.global_batch_sequences
    n = scenario.gpus
    tp_limit = min(domain_gpus(scenario), max(scenario.gpus_per_node, 8))
    tps = sorted((t for t in _powers_of_two_up_to(tp_limit) if m.heads % t == 0), reverse=True)
    cps = _context_parallel_sizes(scenario)
    depths = _pipeline_depths(m.layers, m.mtp_layers)
    eps = [1]
    if m.is_moe:
        eps = [e for e in _divisors(m.moe_experts) if e <= n]
    mbs = _micro_batch_sizes(scenario)
    ranks: dict[tuple[int, int, int], tuple[int, int]] = {}
    for tp in tps:
        for cp in cps:
            for pp, stages, deepest in depths:
                mp = tp * cp * pp
                if mp > n:
                    break
                vp_max = p.virtual_stages or deepest
                dp_max = n // mp
                for ep in eps:
                    # ep divides tp x dp x cp (MoE parallel folding, placement.expert_tp)
                    ep_unit = max(1, ep // math.gcd(ep, tp * cp))
                    if dp_max < ep_unit:
                        continue
                    for mb in mbs:
                        if mb > 1 and batch < dp_max * mb and mb != p.micro_batch:
                            continue
                        # shapes of one model-parallel size share their dp (integers, asked once)
                        key = (dp_max, mb, ep_unit)
                        counts = ranks.get(key)
                        if counts is None:
                            dp = _min_dp(batch, dp_max - dp_max % ep_unit, mb, ep_unit)
                            counts = ranks[key] = (dp, _microbatches(batch, dp, mb))
                        yield tp, cp, pp, ep, mb, counts[0], counts[1], stages, vp_max


def _context_parallel_sizes(scenario: Scenario) -> list[int]:
    """Context-parallel sizes the search tries: 1, and each that leaves every rank at least
    :data:`CP_MIN_TOKENS_PER_RANK` tokens and splits the sequence into 2 x cp equal chunks."""
    seq = scenario.sequence_length
    return [
        c
        for c in CONTEXT_PARALLEL
        if c == 1 or (seq // c >= CP_MIN_TOKENS_PER_RANK and seq % (2 * c) == 0)
    ]


def _micro_batch_sizes(scenario: Scenario) -> tuple[int, ...]:
    """Micro-batch sizes the search tries: the scenario's own, or :data:`MICRO_BATCHES`
    (:data:`MOE_MICRO_BATCHES` for a mixture-of-experts model)."""
    p = scenario.parallelism
    if p.micro_batch:
        return (p.micro_batch,)
    return MOE_MICRO_BATCHES if scenario.model.is_moe else MICRO_BATCHES


FLOOR_BOUND_MARGIN: Final = 1e-9
"""Relative margin :func:`fewer_gpus_floor_s` keeps below the bound it computes: the bound holds
in real numbers; a plan's floor is a handful of rounded float operations (relative error
~1e-15), so the margin covers rounding and is far below any gap that decides a plan."""


def sequence_gpu_seconds(scenario: Scenario) -> float:
    """The least compute GPU-seconds one sequence of the global batch costs under any shape the
    search tries at any cluster size up to ``scenario.gpus``: the least over tensor-, context-
    and expert-parallel sizes, micro-batches and recomputation of
    ``(layers x layer + head) x tp x cp / micro-batch`` (one layer's and the output head's
    seconds for a micro-batch, :func:`stage_time.layer_and_head_s`; the shapes of
    :func:`_shape_rows`, with every tensor-parallel size up to ``max(gpus per node, 8)``, every
    expert-parallel size up to ``scenario.gpus`` and every recomputation: a superset of what
    any smaller size tries).  Selective recomputation is left out: its layer is the one without
    recomputation plus a non-negative term, never less.  The layer times are the stage-time
    table's, which the searches then reuse.  :func:`fewer_gpus_floor_s` turns it into a lower
    bound of every plan's compute floor on fewer GPUs."""
    assert scenario.training is not None
    p = scenario.parallelism
    m = scenario.model
    table = _stage_table(scenario)
    tps = [t for t in _powers_of_two_up_to(max(scenario.gpus_per_node, 8)) if m.heads % t == 0]
    cps = _context_parallel_sizes(scenario)
    eps = [e for e in _divisors(m.moe_experts) if e <= scenario.gpus] if m.is_moe else [1]
    mbs = _micro_batch_sizes(scenario)
    recomputes = (p.recompute,) if p.recompute else ("none", "full")
    least = math.inf
    for tp in tps:
        for cp in cps:
            for ep in eps:
                for mb in mbs:
                    for rc in recomputes:
                        layer, head = layer_and_head_s(scenario, tp, cp, ep, mb, rc, table)
                        least = min(least, (m.layers * layer + head) * tp * cp / mb)
    return least


def fewer_gpus_floor_s(scenario: Scenario, per_sequence_s: float, gpus: int) -> float:
    """A lower bound of the compute floor (:func:`training_step.plan_floor_s`) of every plan the
    search can find on ``gpus`` GPUs (at most ``scenario.gpus``), from
    :func:`sequence_gpu_seconds` (``per_sequence_s``) and no search of that size.

    A plan (tp, cp, pp, dp, micro-batch mb) on at most ``gpus`` GPUs runs
    ``m = ceil(B / (dp x mb)) >= B x tp x cp x pp / (gpus x mb)`` micro-batches of its global
    batch of B sequences, each in the time of its slowest pipeline stage, at least the mean of
    its stages, which hold the model's layers and the head (:func:`stage_time._stage_split`):
    ``(layers x layer + head) / pp``.  Its floor, compute plus optimizer plus bubble (each >=
    0), is therefore at least ``B / gpus x (layers x layer + head) x tp x cp / mb``, at least
    ``B x per_sequence_s / gpus``; :data:`FLOOR_BOUND_MARGIN` below for rounding.  The
    planner searches a smaller size only when this bound is below the step to beat (MODEL.md
    5.3, "Smaller sizes searched when they can win")."""
    assert scenario.training is not None
    batch = scenario.training.global_batch_sequences
    return batch * per_sequence_s / gpus * (1.0 - FLOOR_BOUND_MARGIN)


@lru_cache(maxsize=64)
def _pipeline_depths(
    layers: int, mtp_layers: int
) -> tuple[tuple[int, tuple[int, int, int], int], ...]:
    """(pp, stage layers, deepest interleaving dividing the inner stages) of every pipeline
    depth :func:`_shape_rows` tries, shallowest first: divisors of the layers and powers of
    two up to :data:`PP_MAX` that split them (a pure function of the model's layers, asked
    by every cluster size the planner searches)."""
    out = []
    for pp in sorted(
        q
        for q in set(_divisors(layers)) | set(_powers_of_two_up_to(layers))
        if q <= PP_MAX and _stage_split(layers, q, mtp_layers) is not None
    ):
        stages = _stage_split(layers, pp, mtp_layers)
        assert stages is not None
        deepest = max((v for v in VIRTUAL_STAGES if stages[1] % v == 0), default=1)
        out.append((pp, stages, deepest))
    return tuple(out)


RECOMPUTE_ORDER: tuple[str, ...] = ("none", "selective", "full")


_MEMORY_PENDING = Memory(fits=False)
"""The memory of a candidate the search found (it fits): computed only for the contenders
kept (:func:`_with_memory`), not for the ~30 others a size's search passes through."""
