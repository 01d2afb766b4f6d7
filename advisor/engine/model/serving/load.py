"""Inference serving as deployed now: deployments, pools, KV-cache transfer and load.

Deployments (``inference.deployment``):

* ``replicas``: each replica fits one server (or NVLink domain); servers never talk.
* ``split``: one replica spans servers (tensor/pipeline parallel, or wide expert parallel with
  attention data-parallel), prefill and decode share the GPUs (chunked prefill).
* ``disaggregated``: a prefill pool and a decode pool on different servers (NVIDIA Dynamo,
  llm-d, SGLang, Mooncake); every request's KV cache crosses the fabric from prefill to decode.

Load: an open arrival rate (Poisson, ``inference.requests_per_s``) or a closed loop of
``concurrent_requests`` users.  Decode uses continuous batching: the in-flight batch follows
Little's law (batch = arrival rate x output tokens x time per token).  The prefill queue is an
M/G/c queue (Erlang C with the Allen-Cunneen correction for deterministic service); time to
first token = queueing + prefill + KV transfer + first decode step.  docs/MODEL.md ("Serving")
lists every formula and constant with its source.

Units: seconds, bytes, FLOPs, requests per second unless the name says otherwise.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final, NamedTuple

from advisor.engine.facts.constants import SATURATED_S, over_capacity_ms
from advisor.engine.facts.formatting import first_token, first_token_over_capacity
from advisor.engine.facts.numbers import to_significant
from advisor.engine.input.scenario import Design, Scenario
from advisor.engine.model.collectives import CommDomain
from advisor.engine.model.serving.compute import (
    CHUNKED_PREFILL_TOKENS,
    CURVE_POINTS,
    P95_Z,
    TARGET_QUANTILE,
    ServingPlan,
    decode_compute_s,
    decode_step_s,
    ep_domain,
    prefill_service_s,
    round3,
)
from advisor.engine.model.serving.kv_transfer import KvTransfer, kv_transfer
from advisor.engine.model.serving.pools import decode_view, reference_design
from advisor.engine.model.serving.queueing import (
    decode_time_sd_s,
    mgc_mean_wait_s,
    mgc_wait_quantile_s,
    plus_mean_wait_s,
)
from advisor.engine.result.records import Metrics

# ----------------------------------------------------------------------------- load


@dataclass(frozen=True)
class LoadPoint:
    requests_per_s: float
    ttft_p50_s: float
    ttft_p95_s: float
    tpot_p50_s: float
    tpot_p95_s: float
    output_tokens_per_s: float
    decode_batch_per_instance: float
    kv_transfer_s: float
    saturated: bool

    def meets(self, serving_plan: ServingPlan) -> bool:
        return (
            not self.saturated
            and self.ttft_p95_s <= serving_plan.target_ttft_s
            and self.tpot_p95_s <= serving_plan.target_tpot_s
        )


class ClosedLoop(NamedTuple):
    """A closed loop's load on a deployment: its arrival rate, and the mean wait before a
    request is admitted of the users the deployment holds no place for (0.0 when it holds them
    all), :meth:`ServingModel.closed_loop`."""

    rate: float
    admission_wait_s: float


_DECODE_TABLES_CACHE: dict[tuple[Any, ...], dict[Any, dict[Any, float]]] = {}
"""Decode steps (and their compute, and the batches Little's law finds from them) already
priced, by batch, tables per decode instance as a step reads it (:func:`pools.decode_view`),
bounded: every replica count, cluster size and copy count the deployment search weighs runs
the same instances, and the load model's fixed points and bisections ask again for the
batches another deployment's asked for."""


def _decode_tables(view: tuple[Any, ...]) -> dict[Any, dict[Any, float]]:
    """The tables of one decode instance (``view``), by what they hold and on what network."""
    tables = _DECODE_TABLES_CACHE.get(view)
    if tables is None:
        if len(_DECODE_TABLES_CACHE) >= 512:
            _DECODE_TABLES_CACHE.clear()
        tables = _DECODE_TABLES_CACHE[view] = {}
    return tables


def _step_network(design: Design | None) -> tuple[Any, ...] | None:
    """What of ``design`` a decode step reads: the expert all-to-all's domain
    (compute.ep_domain) takes the fabric, the NICs, the oversubscription, the adaptive
    routing and the transport (AWS EFA's step latency), not the switch radix, the planes or
    in-network reduction."""
    if design is None:
        return None
    return (
        design.fabric,
        design.nic_gbps,
        design.nics_per_node,
        design.oversubscription,
        design.adaptive_routing,
        design.transport,
    )


class _DecodeAt(NamedTuple):
    b_eff: float
    saturated: bool
    mean_step: float
    tpot50: float
    tpot95: float
    service: float
    kv_s: float
    slots: int
    hold: float
    unloaded: float


def batch_cell(batch: float) -> float:
    """The batch a decode step is kept under: 4 significant digits (the fixed points and
    bisections of the load model revisit nearby batches). Rounding is monotone, so batches
    between two that round alike round alike too."""
    return to_significant(batch, 4)


SUSTAINABLE_TOLERANCE: Final = 1e-4
"""Relative width at which :meth:`ServingModel.sustainable_rps` stops bisecting (the answer
prints 3 significant digits)."""


class ServingModel:
    """Latency and throughput of one serving plan on one network design and bound.

    ``d = None`` is the network-free reference (no traffic between servers costs time): the
    load a closed loop of users offers is its arrival rate there (see ``offered_load``)."""

    def __init__(
        self,
        scenario: Scenario,
        serving_plan: ServingPlan,
        design: Design | None,
        bound: str = "point",
    ) -> None:
        self.scenario, self.serving_plan, self.design, self.bound = (
            scenario,
            serving_plan,
            design,
            bound,
        )
        self.prefill_s = prefill_service_s(
            scenario, serving_plan, serving_plan.prefill, design, bound
        )
        if serving_plan.colocated:
            self.kv: KvTransfer | None = None
        elif design is None:
            self.kv = KvTransfer(seconds=0.0, bytes_per_s_per_server=math.inf, rdma=True)
        else:
            self.kv = kv_transfer(scenario, serving_plan, design, bound)
        view = decode_view(scenario, serving_plan)
        # a decode instance without expert parallelism sends nothing over the network in its
        # step (compute.ep_comm_s is 0): its steps, and the batches Little's law finds from
        # them, are the same on every design, bound and share of the NICs
        self._network_free = serving_plan.decode.ep <= 1 or not scenario.model.is_moe
        on = () if self._network_free else (_step_network(design), bound)
        tables = _decode_tables(view)
        self._steps = tables.setdefault(("step", *on), {})
        self._compute = tables.setdefault(("compute",), {})
        self._little = tables.setdefault(("little", *on), {})
        self._domains: dict[float, CommDomain] = {}
        self._operating: LoadPoint | None = None
        self._max_rate: float | None = None
        self._bracket: tuple[float, float, int] | None = None
        self._sustainable: float | None = None

    # -- decode
    def step(self, batch: float, net_share: float = 1.0) -> float:
        key = (batch_cell(batch), self._share_cell(net_share))
        step_s = self._steps.get(key)
        if step_s is None:
            step_s = self._price_step(key, net_share)
        return step_s

    def step_parts(self, batch: float) -> tuple[float, float]:
        """One decode step at ``batch``, per generated token: (the GPUs' own time, the
        communication the step waits for: the TP all-reduces, the expert all-to-all not hidden,
        a colocated plan's pipeline hops and cross-server traffic)."""
        q = self.serving_plan.tokens_per_step
        cell = batch_cell(batch)  # the batch :meth:`step` prices
        plan = self.serving_plan
        compute = decode_compute_s(self.scenario, plan, plan.decode, cell, tp_comm=False)
        return compute / q, max(0.0, self.step(cell) - compute) / q

    def _share_cell(self, net_share: float) -> float:
        """The share of the NICs a step is kept under: 1 where the step sends nothing over the
        network, else the share to 3 digits."""
        return 1.0 if self._network_free else round3(min(1.0, net_share))

    def _price_step(self, key: tuple[float, float], net_share: float) -> float:
        """The step of :meth:`step`'s ``key`` (its batch to 4 significant digits and its share
        of the NICs) at ``net_share``, priced and kept in the table."""
        compute = self._compute.get(key[0])
        if compute is None:
            compute = decode_compute_s(
                self.scenario, self.serving_plan, self.serving_plan.decode, key[0]
            )
            self._compute[key[0]] = compute
        step_s = decode_step_s(
            self.scenario,
            self.serving_plan,
            key[0],
            self.design,
            self.bound,
            net_share,
            compute_s=compute,
            domain=None if self._network_free else self._ep_domain(net_share),
        )
        self._steps[key] = step_s
        return step_s

    def _ep_domain(self, net_share: float) -> CommDomain | None:
        """The expert group's communicator at ``net_share`` of the NICs (compute.ep_domain,
        by its rounded share), kept by this model: its steps at one share ask for it at every
        batch.  ``None`` without a design (the step decides what to price)."""
        if self.design is None:
            return None
        share = round3(net_share)
        domain = self._domains.get(share)
        if domain is None:
            domain = self._domains[share] = ep_domain(
                self.scenario, self.serving_plan.decode, self.design, self.bound, net_share
            )
        return domain

    def _little_batch(self, k: float, cap_b: float, share: float) -> float:
        """The least batch b = k x step(min(b, cap_b)) (Little's law).

        Plain iteration from below: step grows with b, so the iterates rise to the least fixed
        point, and a design whose steps are no longer (a faster network) never gets a larger
        batch (Tarski).  Without damping it takes a few steps away from saturation.  When the
        step grows almost in proportion to the batch (compute-bound decode near a full pool)
        the iterates creep up by less than the stopping tolerance long before the fixed point;
        then the least root of k x step(b) - b above the last iterate is found by bisection,
        and a pool with no root below its KV slots is full (k x step(slots) is returned).

        Kept by value with the steps it reads: deployments of the same decode instance ask
        again for the same k (the same rate per instance)."""
        key = (k, cap_b, 1.0 if self._network_free else share)
        hit = self._little.get(key)
        if hit is None:
            hit = self._little[key] = self._solve_little_batch(k, cap_b, share)
        return hit

    def _solve_little_batch(self, k: float, cap_b: float, share: float) -> float:
        # self.step(x, share) is self._at(batch_cell(x), ...): the same key, looked up there
        on_share = self._share_cell(share)
        b = 0.0
        for _ in range(200):
            # min(b, cap_b): cap_b only when it is the smaller
            nb = k * self._at(batch_cell(cap_b if cap_b < b else b), on_share, share)
            if nb - b <= 1e-4 * max(1.0, nb):
                b = nb
                break
            b = nb
        if b >= cap_b:
            return b

        def gap(x: float) -> float:
            return k * self._at(batch_cell(x), on_share, share) - x

        hi = cap_b
        if gap(cap_b) >= 0.0:
            # the least root lies before the first point where the gap turns negative
            probes = [b + (cap_b - b) * i / 16.0 for i in range(1, 16)]
            negative = next((x for x in probes if gap(x) < 0.0), None)
            if negative is None:
                return k * self.step(cap_b, share)
            hi = negative
        lo = b
        # the batches lo and hi round to, and k x the step at lo's
        lo_cell, hi_cell = batch_cell(lo), batch_cell(hi)
        k_step = k * self._at(lo_cell, on_share, share)
        if k_step - lo <= 0.0:
            return lo
        for _ in range(40):
            mid = 0.5 * (lo + hi)
            if lo_cell == hi_cell:
                # lo, hi and so mid round to one batch (rounding is monotone): the gap at mid
                # is k x that batch's step (k_step, kept for lo's) - mid, nothing to look up
                above = k_step - mid > 0.0
            else:
                cell = batch_cell(mid)
                k_mid = k * self._at(cell, on_share, share)
                above = k_mid - mid > 0.0
                if above:
                    lo_cell, k_step = cell, k_mid
                else:
                    hi_cell = cell
            if above:
                lo = mid
            else:
                hi = mid
            if hi - lo <= 1e-6 * max(1.0, hi):
                break
        return hi

    def _at(self, cell: float, on_share: float, share: float) -> float:
        """The step of batch cell ``cell`` under share cell ``on_share`` (:meth:`step`'s key),
        priced at ``share`` of the NICs when not yet kept."""
        key = (cell, on_share)
        step_s = self._steps.get(key)
        return self._price_step(key, share) if step_s is None else step_s

    def _kv_load(self, rate: float) -> float:
        """Utilisation of the busier pool's NICs by KV transfer at ``rate``."""
        if self.kv is None:
            return 0.0
        per_server = min(self.serving_plan.prefill.servers, self.serving_plan.decode.servers)
        return (
            rate
            * self.serving_plan.kv_bytes_per_request
            / (self.kv.bytes_per_s_per_server * per_server)
        )

    def capacity_rps(self) -> float:
        """An upper bound of the sustainable arrival rate in closed form (prefill, decode
        memory, KV links; a colocated instance's prefill and decode time-shared): what the
        deployment search orders and prunes by and the bisections start from.
        :meth:`sustainable_rps` is the rate the answer reports."""
        serving_plan = self.serving_plan
        cap_b = float(serving_plan.decode.max_batch_per_instance)
        decode = (
            cap_b
            * serving_plan.decode.instances
            * serving_plan.tokens_per_step
            / (self.step(cap_b) * serving_plan.output_tokens)
        )
        if serving_plan.colocated:
            if self.prefill_s <= 0:
                return decode
            prefill = serving_plan.prefill.instances / self.prefill_s
            # prefill and decode share the instances' time
            return 1.0 / (1.0 / prefill + 1.0 / decode)
        prefill = (
            serving_plan.prefill.instances / self.prefill_s if self.prefill_s > 0 else math.inf
        )
        return min(prefill, decode, self._kv_rps())

    def _kv_rps(self) -> float:
        """Requests per second the KV links carry: the busier pool's servers' NICs over one
        request's cache (``inf`` where the cache stays in a scale-up domain)."""
        assert self.kv is not None
        serving_plan = self.serving_plan
        per_server = min(serving_plan.prefill.servers, serving_plan.decode.servers)
        return self.kv.bytes_per_s_per_server * per_server / serving_plan.kv_bytes_per_request

    def sustainable_rps(self) -> float:
        """Highest arrival rate at which every queue of the load model is stable
        (:meth:`_decode_at` not saturated): :meth:`capacity_rps`, or, for a colocated
        instance, below it where a queue saturates first, as its prompt queue does when each
        prompt rides on decode steps (its service is the prefill plus a decode step per 2,048-token
        chunk, so its queue can fill before the time-shared bound; docs/MODEL.md 15.2).
        Bisected to ``SUSTAINABLE_TOLERANCE`` of the rate (from the top tenth of the bound
        when the queues are stable there, as they mostly are); kept per model."""
        if self._sustainable is None:
            hi = self.capacity_rps()
            if (
                hi <= 0.0
                or not self.serving_plan.colocated
                or not self._decode_at(hi * (1.0 - 1e-9), None).saturated
            ):
                # disaggregated pools: the closed form is their queues' own bound (prefill,
                # decode memory, KV links), to within the KV stream's share of the NICs
                self._sustainable = hi
            else:
                lo = 0.9 * hi
                if self._decode_at(lo, None).saturated:
                    lo = 0.0
                while hi - lo > SUSTAINABLE_TOLERANCE * hi:
                    mid = (lo + hi) / 2
                    if self._decode_at(mid, None).saturated:
                        hi = mid
                    else:
                        lo = mid
                self._sustainable = lo
        return self._sustainable

    def at_rate(self, rate: float, users: float | None = None) -> LoadPoint:
        """The operating point for Poisson arrivals at ``rate`` requests per second.

        ``users``: a closed loop never holds more than ``users`` requests, so no request waits
        behind more than ``users / prefill instances`` prompts (caps the open-queue wait)."""
        return self._at_rate(rate, users)[0]

    def _decode_at(self, rate: float, users: float | None) -> _DecodeAt:
        """The decode pool at ``rate`` (see :meth:`_at_rate`): its batch (Little's law), its
        times per token, a prompt's service and what a first token waits for besides
        queues."""
        serving_plan = self.serving_plan
        inst = serving_plan.decode.instances
        out = serving_plan.output_tokens
        tokens_per_step = serving_plan.tokens_per_step
        steps_per_request = out / tokens_per_step
        cap_b = float(serving_plan.decode.max_batch_per_instance)
        rho_kv = self._kv_load(rate)
        share = 1.0 - min(0.95, rho_kv)
        rho_p = (
            rate * self.prefill_s / serving_plan.prefill.instances
            if serving_plan.colocated
            else 0.0
        )
        stretch = 1.0 / max(0.05, 1.0 - rho_p)
        # Little's law for the decode batch: b = rate x out x tpot(b) / instances
        b = self._little_batch(rate * out * stretch / (tokens_per_step * inst), cap_b, share)
        saturated = b >= cap_b or rho_p >= 1.0 or rho_kv >= 1.0
        b_eff = min(b, cap_b)
        step_eff = self.step(b_eff, share)
        mean_step = step_eff * stretch
        tpot50 = mean_step / tokens_per_step
        # a request's time per token is its own mean over its steps; its spread is its decode
        # time's (queueing.decode_time_sd_s: the batch it sees and, prompts sharing the GPUs,
        # the prompts that arrive while it decodes), the step's slope read between the mean
        # batch and one standard deviation of the instantaneous (Poisson) batch above it.  The
        # batch never passes the KV slots (nor a closed loop's users): the batch's part of the
        # p95 stops at the step there
        b_max = cap_b if users is None else min(cap_b, max(b_eff, users / inst))
        b_hi = min(b_max, b_eff + math.sqrt(max(b_eff, 0.0)))
        slope = (self.step(b_hi, share) - step_eff) / (b_hi - b_eff) if b_hi > b_eff else 0.0
        rate_per_instance = rate / inst
        prompt_s = self.prefill_s if serving_plan.colocated else 0.0
        per_token = P95_Z / steps_per_request / tokens_per_step
        spread = decode_time_sd_s(
            rate_per_instance, steps_per_request, mean_step, prompt_s, stretch, slope
        )
        prompts_only = (
            decode_time_sd_s(
                rate_per_instance, steps_per_request, mean_step, prompt_s, stretch, 0.0
            )
            if prompt_s > 0
            else 0.0
        )
        tpot95 = min(
            SATURATED_S,
            tpot50 + per_token * spread,
            self.step(b_max, share) * stretch / tokens_per_step + per_token * prompts_only,
        )
        fill = 0.0
        if serving_plan.colocated:
            chunk_s = self.prefill_s * min(
                1.0, CHUNKED_PREFILL_TOKENS / max(1.0, serving_plan.computed_prompt_tokens)
            )
            service = self.prefill_s + (
                serving_plan.computed_prompt_tokens / CHUNKED_PREFILL_TOKENS
            ) * (step_eff if self._network_free else self.step(b_eff))
            # a prompt's last chunk leaves the last of pp stages (pp - 1) stage times after
            # the instance finished its share (one chunk per stage at a time)
            fill = (serving_plan.prefill.pp - 1) * chunk_s
            kv_s = 0.0
        else:
            service = self.prefill_s
            assert self.kv is not None
            kv_s = self.kv.seconds / max(0.05, 1.0 - rho_kv) if rho_kv < 1.0 else SATURATED_S
        tpot95 = max(tpot50, tpot95)
        # prompts queue for the prefill instances (a colocated instance's chunk slots, or a
        # disaggregated prefill pool): past c / service the queue for a first token grows
        # without bound (a colocated instance's although the time-shared bound is not reached)
        saturated = saturated or rate * service >= serving_plan.prefill.instances
        # a request waits for a decode slot (KV memory) once the pool's batches are full:
        # M/G/c with c = instances x batch that fits, each slot held for the request's decode
        slots = max(1, int(inst * cap_b))
        hold = steps_per_request * mean_step
        unloaded = service + fill + kv_s + step_eff
        return _DecodeAt(
            b_eff, saturated, mean_step, tpot50, tpot95, service, kv_s, slots, hold, unloaded
        )

    def meets_at(self, rate: float) -> bool:
        """``at_rate(rate).meets(serving_plan)``, without the queues when the decode pool
        already misses (saturated, or its p95 time per token over the target) and without
        the median and mean waits."""
        serving_plan = self.serving_plan
        floor = self._prefill_floor(rate, TARGET_QUANTILE)
        if floor is not None and floor > serving_plan.target_ttft_s < SATURATED_S:
            return False
        d = self._decode_at(rate, None)
        if d.saturated or d.tpot95 > serving_plan.target_tpot_s:
            return False
        w95 = mgc_wait_quantile_s(rate, d.service, serving_plan.prefill.instances, TARGET_QUANTILE)
        w95 += mgc_wait_quantile_s(rate, d.hold, d.slots, TARGET_QUANTILE)
        return min(SATURATED_S, w95 + d.unloaded) <= serving_plan.target_ttft_s

    def _prefill_floor(self, rate: float, q: float | None) -> float | None:
        """A floor under a disaggregated deployment's time to first token at ``rate`` (its
        ``q`` quantile; ``None``: its mean) priced without the decode pool: the prefill queue's
        wait, the prompt and the KV transfer, the sum :meth:`_decode_at` and its callers make
        before they add the decode-slot wait and the first step (both >= 0).  Rounding to
        nearest is monotone, so the computed sum is never below this floor, and a rate whose
        floor is over a target misses it without a decode batch solved.  ``None`` for a
        colocated deployment (its prompt's service reads the decode step) or a saturated
        transfer (its decode pool decides)."""
        if self.kv is None:
            return None
        rho_kv = self._kv_load(rate)
        if rho_kv >= 1.0:
            return None
        # _decode_at: service, fill 0.0, kv_s (then + first); the callers' prefill wait
        kv_s = self.kv.seconds / max(0.05, 1.0 - rho_kv)
        unloaded = self.prefill_s + 0.0 + kv_s
        instances = self.serving_plan.prefill.instances
        wait = (
            plus_mean_wait_s(0.0, rate, self.prefill_s, instances, unloaded)
            if q is None
            else mgc_wait_quantile_s(rate, self.prefill_s, instances, q)
        )
        return wait + unloaded

    def _mean_in_system_s(self, rate: float) -> float:
        """``_at_rate(rate)[1]`` without the load point (the median and p95 waits)."""
        d = self._decode_at(rate, None)
        if d.saturated or d.kv_s >= SATURATED_S:
            return math.inf
        w_mean = mgc_mean_wait_s(rate, d.service, self.serving_plan.prefill.instances)
        w_mean = plus_mean_wait_s(w_mean, rate, d.hold, d.slots, d.unloaded)
        return w_mean + d.unloaded + d.hold

    def _at_rate(self, rate: float, users: float | None = None) -> tuple[LoadPoint, float]:
        """The load point and the *mean* time in system (Little's law of a closed loop)."""
        serving_plan = self.serving_plan
        inst = serving_plan.decode.instances
        out = serving_plan.output_tokens
        tokens_per_step = serving_plan.tokens_per_step
        d = self._decode_at(rate, users)
        if d.saturated:
            # past its capacity a deployment serves at its capacity and the other requests
            # wait in the queue, taking no GPU time: the decode pool runs as at the rate it
            # serves (prefill's share of the GPUs read at the asked rate stretched every step
            # by up to 20x, docs/MODEL.md 15.2), also where the capacity is the rate at which
            # its batch just fills the KV slots (saturated there by definition)
            d = self._decode_at(self.sustainable_rps(), users)._replace(saturated=True)
        b_eff, saturated, mean_step, tpot50, tpot95, service, kv_s, slots, hold, unloaded = d
        if users is not None and kv_s >= SATURATED_S:
            # a closed loop at its KV links' rate: a cache waits behind at most every other
            # user's (as the prefill and decode-slot waits below), not without bound
            assert self.kv is not None
            kv_closed = min(SATURATED_S, self.kv.seconds + users / self._kv_rps())
            unloaded += kv_closed - kv_s
            kv_s = kv_closed
        prefill_instances = serving_plan.prefill.instances
        w50 = mgc_wait_quantile_s(rate, service, prefill_instances, 0.50)
        w95 = mgc_wait_quantile_s(rate, service, prefill_instances, TARGET_QUANTILE)
        w_mean = mgc_mean_wait_s(rate, service, prefill_instances)
        if not saturated:
            w50 += mgc_wait_quantile_s(rate, hold, slots, 0.50)
            w95 += mgc_wait_quantile_s(rate, hold, slots, TARGET_QUANTILE)
            w_mean = plus_mean_wait_s(w_mean, rate, hold, slots, unloaded)
        if saturated:
            w50 = w95 = w_mean = SATURATED_S
        if users is not None:
            # a closed loop never holds more than its users: at worst every other one is
            # ahead, at the prefill queue and for a decode slot
            closed = (
                users / max(1, prefill_instances) * service + max(0.0, users - slots) / slots * hold
            )
            w50, w95 = min(w50, closed), min(w95, closed)
        ttft50 = min(SATURATED_S, w50 + unloaded)
        ttft95 = min(SATURATED_S, w95 + unloaded)
        if users is not None:
            # a closed loop at capacity cycles each user in users / capacity seconds, and the
            # first token comes before the cycle ends
            cycle = max(unloaded, users / max(self.capacity_rps(), 1e-12))
            ttft50, ttft95 = min(ttft50, cycle), min(ttft95, cycle)
        tokens = b_eff * inst * tokens_per_step / mean_step if b_eff > 0 else 0.0
        in_system = math.inf if saturated or kv_s >= SATURATED_S else w_mean + unloaded + hold
        served = min(rate, self.sustainable_rps()) if saturated else rate
        point = LoadPoint(
            requests_per_s=served,
            ttft_p50_s=ttft50,
            ttft_p95_s=ttft95,
            tpot_p50_s=tpot50,
            tpot_p95_s=tpot95,
            # every request served emits its output tokens, no more
            output_tokens_per_s=min(tokens, served * out),
            decode_batch_per_instance=b_eff,
            kv_transfer_s=kv_s,
            saturated=saturated,
        )
        return point, in_system

    def operating_point(self) -> LoadPoint:
        """At ``requests_per_s``, or the closed loop of ``concurrent_requests`` users."""
        if self._operating is None:
            self._operating = self._operating_point()
        return self._operating

    def _operating_point(self) -> LoadPoint:
        serving_plan = self.serving_plan
        if serving_plan.requests_per_s is not None:
            return self.at_rate(serving_plan.requests_per_s)
        users = float(serving_plan.concurrent_requests)
        load = offered_load(self.scenario, serving_plan)
        point = self.at_rate(load.rate, users)
        if load.admission_wait_s <= 0.0 or point.saturated:
            # (a saturated point's first token already waits its whole cycle, _at_rate)
            return point
        # the first token comes before the user's cycle (users / rate) ends, as in _at_rate
        cycle = users / load.rate
        return dataclasses.replace(
            point,
            ttft_p50_s=min(SATURATED_S, cycle, point.ttft_p50_s + load.admission_wait_s),
            ttft_p95_s=min(SATURATED_S, cycle, point.ttft_p95_s + load.admission_wait_s),
        )

    def closed_loop(self) -> ClosedLoop:
        """``concurrent_requests`` users that send a new request when the last one finishes
        (no think time): the rate X with X x mean time in system (X) = users (Little's law, as
        mean value analysis solves a closed network).  Where no rate reaches the users (the
        mean time in system stays finite up to the deployment's capacity, its decode
        throughput rather than its KV slots the limit, or jumps past them where a queue
        saturates), X is the highest rate the deployment holds and the others wait to be
        admitted, each ``users / X - mean time in system`` seconds on average (Little's law
        over the whole loop: every user is in the system or waiting); a fraction of a user
        left over is the bisection's own tolerance, not a user waiting."""
        serving_plan = self.serving_plan
        users = float(serving_plan.concurrent_requests)
        cap = self.capacity_rps()
        hi = cap * (1.0 - 1e-6)

        def within(rate: float) -> bool:
            # rate x mean time in system <= users; a disaggregated deployment's prefill floor
            # over it decides without the decode pool (the product is monotone in the mean)
            floor = self._prefill_floor(rate, None)
            if floor is not None and rate * floor > users:
                return False
            return rate * self._mean_in_system_s(rate) <= users

        if not within(hi):
            lo = 0.0
            for _ in range(40):
                mid = (lo + hi) / 2
                if within(mid):
                    lo = mid
                else:
                    hi = mid
                if hi - lo <= 1e-6 * hi:
                    break
            hi = max(lo, 1e-9)
        waiting = users - hi * self._mean_in_system_s(hi)
        return ClosedLoop(hi, waiting / hi if waiting >= 1.0 else 0.0)

    def max_rate_at_target(self) -> float:
        """Highest arrival rate whose p95 TTFT and time per token meet both targets."""
        if self._max_rate is None:
            rate = self._rate_at_target(three_digits=False, short=None)
            assert rate is not None
            self._max_rate = rate
        return self._max_rate

    def rate_at_target_3g(self, short: Callable[[float], bool] | None = None) -> float | None:
        """:meth:`max_rate_at_target` to 3 significant digits (what the deployment search
        compares), the bisection stopped once its bracket settles them: the rate lies in the
        bracket and rounding is monotone, so both ends rounding alike fixes it.  ``short``: a
        test true of a 3-digit rate and of every lower one (below the incumbent's); once it
        holds for the bracket's upper end it holds for the rate, and ``None`` says so without
        settling it.  A later call resumes the same bisection from the bracket."""
        if self._max_rate is not None:
            return _three_digits(self._max_rate)
        rate = self._rate_at_target(three_digits=True, short=short)
        return None if rate is None else _three_digits(rate)

    def _rate_at_target(
        self, *, three_digits: bool, short: Callable[[float], bool] | None
    ) -> float | None:
        """The bisection of :meth:`max_rate_at_target` (20 halvings from 1e-3 of 0.999 x
        capacity), run until done or, ``three_digits``, until both ends of its bracket have
        the same 3 significant digits (then its lower end), or ``short`` holds for its upper
        end (then ``None``)."""
        if self._bracket is None:
            hi = self.capacity_rps() * 0.999
            if short is not None and short(_three_digits(hi)):
                return None
            if self.meets_at(hi):
                self._max_rate = hi
                return hi
            if not self.meets_at(hi * 1e-3):
                self._max_rate = 0.0
                return 0.0
            self._bracket = (hi * 1e-3, hi, 0)
        lo, hi, halvings = self._bracket
        settled = False
        while halvings < 20:
            if three_digits and _three_digits(lo) == _three_digits(hi):
                break
            if short is not None and short(_three_digits(hi)):
                settled = True
                break
            mid = (lo + hi) / 2
            if self.meets_at(mid):
                lo = mid
            else:
                hi = mid
            halvings += 1
        self._bracket = (lo, hi, halvings)
        if halvings == 20:
            self._max_rate = lo
            return lo
        return None if settled else lo

    def curve(self, points: int = CURVE_POINTS) -> list[LoadPoint]:
        cap = self.sustainable_rps()
        return [self.at_rate(cap * (i + 1) / points * 0.98) for i in range(points)]


def _three_digits(x: float) -> float:
    return to_significant(x, 3)


@lru_cache(maxsize=64)
def offered_load(scenario: Scenario, serving_plan: ServingPlan) -> ClosedLoop:
    """The load a closed loop of ``concurrent_requests`` users offers, as it runs on the
    platform's reference network (:func:`reference_design`, Little's law): its arrival rate and
    the admission wait of the users the deployment holds no place for.  A design that carries
    the rate with no more users in the system serves it as an open loop and the same waiting
    users, so a network faster than the reference only shortens the latencies (a per-design
    closed loop let a faster fabric admit more requests per second and queue them longer
    before prefill); a design that cannot runs its own closed loop of the same users at a lower
    rate (its latencies then follow from its own Little's law, never from a queue offered more
    than it can serve)."""
    ref = dataclasses.replace(serving_plan, legacy_comm_s=serving_plan.reference_comm_s)
    return serving_model(scenario, ref, reference_design(scenario), "point").closed_loop()


@lru_cache(maxsize=1024)
def serving_model(
    scenario: Scenario, serving_plan: ServingPlan, design: Design | None, bound: str = "point"
) -> ServingModel:
    """One :class:`ServingModel` per (scenario, plan, design, bound): the metrics, the rationale
    and the chart ask for the same operating point."""
    return ServingModel(scenario, serving_plan, design, bound)


def serving_metrics(
    scenario: Scenario, serving_plan: ServingPlan, design: Design, *, bounds: bool = True
) -> Metrics:
    """The serving metrics of one design (ENGINE_API metric keys, SI-ish units in the name):
    ``compute_ms_per_token`` and ``comm_ms_per_token`` break one decode step at the operating
    point's batch down (:meth:`ServingModel.step_parts`); the p95 per-token and placement
    figures are the caller's.  ``bounds=False``: without the
    pessimistic TTFT, the rates within the targets and the decode batch at them (None; a
    bisection of ~20 solves of the load model), which the recommendation reads for its chosen
    and fastest designs only."""
    queue_model = serving_model(scenario, serving_plan, design, "point")
    point = queue_model.operating_point()
    servers = max(1, serving_plan.servers)
    ttft = point.ttft_p50_s
    high_ttft_ms: float | None = None
    at_target: float | None = None
    per_gpu_at_target: float | None = None
    batch_at_target: float | None = None
    if bounds:
        high = serving_model(scenario, serving_plan, design, "high").operating_point()
        high_ttft_ms = high.ttft_p95_s * 1e3
        at_target = queue_model.max_rate_at_target()
        per_gpu_at_target = at_target * serving_plan.output_tokens / max(1, scenario.gpus)
        batch_at_target = decode_batch_per_gpu(queue_model, at_target)
    compute_s, comm_s = queue_model.step_parts(point.decode_batch_per_instance)
    return Metrics(
        compute_ms_per_token=compute_s * 1e3,
        comm_ms_per_token=comm_s * 1e3,
        ttft_ms_p50=point.ttft_p50_s * 1e3,
        ttft_ms_p95=point.ttft_p95_s * 1e3,
        ttft_ms_p95_high=high_ttft_ms,
        ms_per_token_p50=point.tpot_p50_s * 1e3,
        ms_per_token_p95=point.tpot_p95_s * 1e3,
        requests_per_s=point.requests_per_s,
        serving_tokens_per_s_per_server=point.output_tokens_per_s / servers,
        decode_batch_per_instance=point.decode_batch_per_instance,
        kv_transfer_ms=point.kv_transfer_s * 1e3,
        kv_transfer_share_of_ttft=min(1.0, point.kv_transfer_s / ttft) if ttft > 0 else 0.0,
        max_requests_per_s_at_target=at_target,
        tokens_per_s_per_gpu_at_target=per_gpu_at_target,
        decode_batch_per_gpu_at_target=batch_at_target,
        capacity_requests_per_s=queue_model.sustainable_rps(),
        load_saturated=point.saturated,
        meets_latency_targets=point.meets(serving_plan),
    )


def decode_batch_per_gpu(queue_model: ServingModel, rate: float) -> float:
    """Sequences a decode GPU holds in its step at ``rate`` requests per second (0.0 at none):
    the decode instance's batch (Little's law) over its GPUs."""
    if rate <= 0.0:
        return 0.0
    decode = queue_model.serving_plan.decode
    point = queue_model.at_rate(rate)
    return point.decode_batch_per_instance / max(1, decode.gpus_per_instance)


def load_curve(
    scenario: Scenario, serving_plan: ServingPlan, design: Design
) -> list[dict[str, float]]:
    """Latency vs load on design ``d`` (for the results chart)."""
    return [
        {
            "requests_per_s": point.requests_per_s,
            "ttft_ms_p95": point.ttft_p95_s * 1e3,
            "ms_per_token_p95": point.tpot_p95_s * 1e3,
            "tokens_per_s_per_server": point.output_tokens_per_s / max(1, serving_plan.servers),
            "kv_transfer_ms": point.kv_transfer_s * 1e3,
        }
        for point in ServingModel(scenario, serving_plan, design, "point").curve()
    ]


# ----------------------------------------------------------------------------- rationale


def kv_transfer_sentence(
    best_label: str,
    best_metrics: Metrics,
    tcp_label: str | None,
    tcp_metrics: Metrics | None,
    target_ttft_ms: float | None,
    pools: str,
    closed_loop: bool,
) -> str | None:
    """The rationale's sentence on KV-cache transfer of a disaggregated deployment, with the
    numbers: bytes per request, transfer time and share of TTFT on the recommended network,
    and on the best TCP design when one was priced (and whether it misses the TTFT target).

    Reads the per-design metrics (``prefill_servers``, ``kv_bytes_per_request``,
    ``kv_transfer_ms``, ``ttft_ms_p95``...) and ``pools``, where the pools run
    (``job_facts.pool_placement``; "" where the sentence before it said so); ``closed_loop``: a
    closed loop of users was asked, whose wait at the over-capacity stand-in is said as such
    (``formatting.first_token_over_capacity``); ``None`` when the deployment is not
    disaggregated."""
    if not best_metrics.prefill_servers:
        return None
    kv_megabytes = (best_metrics.kv_bytes_per_request or 0.0) / 1e6
    kv = best_metrics.kv_transfer_ms or 0.0
    ttft = best_metrics.ttft_ms_p95 or 0.0
    share = (best_metrics.kv_transfer_share_of_ttft or 0.0) * 100
    # an open queue over capacity has no p95 first token to give a share of (said in words,
    # as the headline does), and then the network is not what holds the first token back
    over_capacity = over_capacity_ms(ttft)
    where = f"Prefill and decode run on {pools}, so each" if pools else "Each"
    moved = (
        f"on {best_label} the transfers cannot keep up"
        if over_capacity_ms(kv)
        else f"{kv:,.1f} ms on {best_label}"
    )
    text = (
        f"{where} request's KV cache ({kv_megabytes:,.0f} MB) crosses the fabric before its "
        f"first token: {moved}"
        + (
            f", while at the asked load {first_token_over_capacity(closed_loop)} whatever the "
            "network (the headline says what would carry it)"
            if over_capacity
            else f" ({share:.0f} % of the {first_token(ttft)} p95 time to first token)"
        )
    )
    if tcp_label and tcp_metrics is not None:
        tcp_kv = tcp_metrics.kv_transfer_ms or 0.0
        tcp_ttft = tcp_metrics.ttft_ms_p95 or 0.0
        if over_capacity:
            if over_capacity_ms(tcp_kv):
                return text + f"; over TCP (at best {tcp_label}) the transfers cannot keep up."
            return text + f"; over TCP (at best {tcp_label}) it takes {first_token(tcp_kv)}."
        if over_capacity_ms(tcp_ttft) or over_capacity_ms(tcp_kv):
            return text + (
                f"; over TCP (at best {tcp_label}) the servers cannot keep up with the load "
                f"({first_token_over_capacity(closed_loop)}), so this deployment needs RDMA."
            )
        tcp_share = (tcp_metrics.kv_transfer_share_of_ttft or 0.0) * 100
        text += f"; over TCP (at best {tcp_label}) it takes {first_token(tcp_kv)}"
        if target_ttft_ms and tcp_ttft > target_ttft_ms:
            text += (
                f" and the p95 time to first token reaches {first_token(tcp_ttft)} (KV transfer "
                f"{tcp_share:.0f} % of it), over the {target_ttft_ms:,.0f} ms target, so this "
                "deployment needs RDMA"
            )
    return text + "."
