"""The serving model's queues: the M/G/c queue of prompts waiting for a prefill instance and
of requests waiting for a decode slot (Erlang C with the Allen-Cunneen correction for
deterministic service), docs/MODEL.md 15.

Units: seconds, requests per second.
"""

from __future__ import annotations

import math
from functools import lru_cache

from advisor.engine.model.serving.compute import ERLANG_MAX_SERVERS, SATURATED_S

_SERVER_COUNTS = tuple(float(k) for k in range(1, ERLANG_MAX_SERVERS + 1))

BOUND_MARGIN = 2.0
"""How far below a threshold :func:`erlang_c_bound` must be for a wait to be decided by it
without the Erlang B recursion: the recursion and the bound's own logarithms round each of
their few hundred operations to nearest (relative errors near 1e-13), far inside a factor 2."""


@lru_cache(maxsize=4096)
def erlang_c(servers: int, offered: float) -> float:
    """Probability of waiting in M/M/c (Erlang C) via the Erlang B recursion (cached: the
    median, p95 and mean waits of one load point ask for the same value)."""
    if offered <= 0:
        return 0.0
    if offered >= servers:
        return 1.0
    b = 1.0
    for k in _SERVER_COUNTS[:servers] if servers <= ERLANG_MAX_SERVERS else range(1, servers + 1):
        ab = offered * b  # k + offered x b as floats, offered x b once: the same IEEE values
        b = ab / (k + ab)
        if b < 1e-300:
            # Erlang B falls with every server added: the probability of waiting is 0 to
            # within 1e-300
            return 0.0
    rho = offered / servers
    return b / (1.0 - rho * (1.0 - b))


def erlang_c_bound(servers: int, offered: float) -> float:
    """An upper bound of the Erlang C probability of waiting, in a few operations where the
    recursion of :func:`erlang_c` takes one per server (1.0 where none is cheap).

    Erlang B is the truncated Poisson law at its last point, B = P(N = c) / P(N <= c) with N
    Poisson of mean a (the offered load); the median of N is below a + 1/3 (Choi 1994), so
    P(N <= c) >= 1/2 once c >= a + 1 and B <= 2 P(N = c) = 2 exp(-a + c ln a - ln c!).  Erlang
    C = B / (1 - rho (1 - B)) <= B / (1 - rho), rho = a / c.  Kept below rho = 0.99, where
    1 - rho (1 - B) loses no more than a few digits."""
    if offered <= 0:
        return 0.0
    if servers < offered + 1.0 or offered > 0.99 * servers:
        return 1.0
    log_pmf = -offered + servers * math.log(offered) - math.lgamma(servers + 1.0)
    return 2.0 * math.exp(log_pmf) / (1.0 - offered / servers)


def _mgc_queue(rate: float, service_s: float, servers: int) -> tuple[int, float, float] | None:
    """(servers c, offered load, mean of a wait given one m = 0.5 / (c/S - lambda)) of the
    M/G/c queue with deterministic service (Allen-Cunneen), ``None`` at or above capacity.
    Past ``ERLANG_MAX_SERVERS`` the servers are pooled into that many faster ones."""
    c = servers
    mu = 1.0 / service_s
    if c > ERLANG_MAX_SERVERS:
        mu *= c / ERLANG_MAX_SERVERS
        c = ERLANG_MAX_SERVERS
    if rate >= c * mu:
        return None
    return c, rate / mu, 0.5 / (c * mu - rate)


def _mgc_wait_terms(rate: float, service_s: float, servers: int) -> tuple[float, float] | None:
    """(probability of waiting C, mean of a wait given one m) of :func:`_mgc_queue`."""
    queue = _mgc_queue(rate, service_s, servers)
    if queue is None:
        return None
    c, offered, mean_tail = queue
    return erlang_c(c, offered), mean_tail


def mgc_mean_wait_s(rate: float, service_s: float, servers: int) -> float:
    """Mean wait of the M/G/c queue of :func:`mgc_wait_quantile_s`: C x m;
    ``SATURATED_S`` at or above capacity."""
    if rate <= 0 or service_s <= 0:
        return 0.0
    terms = _mgc_wait_terms(rate, service_s, servers)
    if terms is None:
        return SATURATED_S
    prob_wait, mean_tail = terms
    return min(SATURATED_S, prob_wait * mean_tail)


def plus_mean_wait_s(
    total: float, rate: float, service_s: float, servers: int, then: float
) -> float:
    """``total + mgc_mean_wait_s(rate, service_s, servers)`` for a caller whose next operation
    adds ``then`` (> 0) to it, without the Erlang B recursion when the wait cannot change the
    bits of that sum (sums rounded to nearest): :func:`erlang_c_bound` keeps the wait below
    half a unit in the last place of ``total`` (``total`` + wait is ``total``), or ``total``
    and the wait each below a quarter of one of ``then`` (either way ``total`` + wait +
    ``then`` is ``then``)."""
    if rate > 0 and service_s > 0:
        queue = _mgc_queue(rate, service_s, servers)
        if queue is not None:
            c, offered, mean_tail = queue
            wait = BOUND_MARGIN * erlang_c_bound(c, offered) * mean_tail
            if total > 0 and wait < 0.5 * math.ulp(total):
                return total
            quarter = 0.25 * math.ulp(then)
            if total < quarter and wait < quarter:
                return total
    return total + mgc_mean_wait_s(rate, service_s, servers)


def mgc_wait_quantile_s(rate: float, service_s: float, servers: int, q: float) -> float:
    """q-quantile of the wait in an M/G/c queue with deterministic service.

    Allen-Cunneen: W(M/G/c) ~ W(M/M/c) x (1 + cs^2) / 2 with cs = 0 for deterministic
    service; the M/M/c wait is 0 with probability 1 - C and exponential with rate
    c/S - lambda otherwise, so the quantile is m ln(C / (1 - q)), m = 0.5 / (c/S - lambda).
    0 without the Erlang B recursion when :func:`erlang_c_bound` keeps C below 1 - q.
    """
    if rate <= 0 or service_s <= 0:
        return 0.0
    queue = _mgc_queue(rate, service_s, servers)
    if queue is None:
        return SATURATED_S
    c, offered, mean_tail = queue
    if BOUND_MARGIN * erlang_c_bound(c, offered) <= 1.0 - q:
        return 0.0
    prob_wait = erlang_c(c, offered)
    if prob_wait <= 1.0 - q:
        return 0.0
    return min(SATURATED_S, mean_tail * math.log(prob_wait / (1.0 - q)))
