"""The queues' Erlang C bound (advisor.engine.model.serving.queueing.erlang_c_bound): an upper
bound of the recursion's probability of waiting, and the waits it decides without the
recursion are the ones the recursion gives, to the bit."""

from __future__ import annotations

import math
import random

from advisor.engine.model.serving.queueing import (
    BOUND_MARGIN,
    erlang_c,
    erlang_c_bound,
    mgc_mean_wait_s,
    mgc_wait_quantile_s,
    plus_mean_wait_s,
)


def _quantile_by_recursion(rate: float, service_s: float, servers: int, q: float) -> float:
    """mgc_wait_quantile_s as it was before the bound: always the Erlang B recursion."""
    c, mu = servers, 1.0 / service_s
    if c > 512:
        mu *= c / 512
        c = 512
    if rate >= c * mu:
        return 3600.0
    prob_wait, mean_tail = erlang_c(c, rate / mu), 0.5 / (c * mu - rate)
    if prob_wait <= 1.0 - q:
        return 0.0
    return min(3600.0, mean_tail * math.log(prob_wait / (1.0 - q)))


def _cases(seed: int, count: int) -> list[tuple[float, float, int]]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        servers = rng.choice([1, 2, 3, 8, 16, 64, 100, 256, 511, 512, 513, 2048, 40_000])
        service_s = 10 ** rng.uniform(-3, 1)
        load = rng.choice([rng.uniform(0.0, 1.0), rng.uniform(0.9, 0.9999), rng.uniform(0, 0.3)])
        out.append((load * servers / service_s, service_s, servers))
    return out


def test_bound_is_above_the_recursion() -> None:
    for servers in (1, 2, 5, 17, 64, 200, 511, 512):
        for load in (0.001, 0.05, 0.2, 0.5, 0.7, 0.9, 0.95, 0.98, 0.99, 0.995):
            offered = load * servers
            bound = erlang_c_bound(servers, offered)
            assert erlang_c(servers, offered) <= bound
    # far from capacity the bound is tiny, so the waits are decided without the recursion
    assert erlang_c_bound(512, 256.0) < 1e-40
    assert erlang_c_bound(512, 0.0) == 0.0


def test_quantiles_are_those_of_the_recursion() -> None:
    decided = 0
    for rate, service_s, servers in _cases(1, 4000):
        for q in (0.5, 0.95):
            assert mgc_wait_quantile_s(rate, service_s, servers, q) == _quantile_by_recursion(
                rate, service_s, servers, q
            )
            c = min(servers, 512)
            mu = 1.0 / service_s * (servers / 512 if servers > 512 else 1.0)
            if rate < c * mu and BOUND_MARGIN * erlang_c_bound(c, rate / mu) <= 1.0 - q:
                decided += 1
    assert decided > 1000  # the bound decides most of them


def test_quantile_skips_the_recursion_far_from_capacity() -> None:
    erlang_c.cache_clear()
    assert mgc_wait_quantile_s(100.0, 2.0, 512, 0.95) == 0.0  # 200 of 512 servers busy
    assert erlang_c.cache_info().misses == 0


def test_sums_with_the_mean_wait_are_those_of_the_recursion() -> None:
    rng = random.Random(2)
    skipped = 0
    for rate, service_s, servers in _cases(3, 4000):
        then = 10 ** rng.uniform(-4, 1)
        for total in (0.0, 1e-300, 1e-30, 1e-18 * then, 0.2 * then, then, 10 * then):
            full = total + mgc_mean_wait_s(rate, service_s, servers) + then
            fast = plus_mean_wait_s(total, rate, service_s, servers, then) + then
            assert fast == full
            if rate > 0 and mgc_mean_wait_s(rate, service_s, servers) < 3600.0:
                erlang_c.cache_clear()
                plus_mean_wait_s(total, rate, service_s, servers, then)
                skipped += erlang_c.cache_info().misses == 0
    assert skipped > 4000  # of some 28,000 sums that needed the recursion before
