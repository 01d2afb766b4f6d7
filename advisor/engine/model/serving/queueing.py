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


def _mgc_wait_terms(rate: float, service_s: float, servers: int) -> tuple[float, float] | None:
    """(probability of waiting C, mean of a wait given one m = 0.5 / (c/S - lambda)) of the
    M/G/c queue with deterministic service (Allen-Cunneen), ``None`` at or above capacity.
    Past ``ERLANG_MAX_SERVERS`` the servers are pooled into that many faster ones."""
    c = servers
    mu = 1.0 / service_s
    if c > ERLANG_MAX_SERVERS:
        mu *= c / ERLANG_MAX_SERVERS
        c = ERLANG_MAX_SERVERS
    if rate >= c * mu:
        return None
    return erlang_c(c, rate / mu), 0.5 / (c * mu - rate)


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


def mgc_wait_quantile_s(rate: float, service_s: float, servers: int, q: float) -> float:
    """q-quantile of the wait in an M/G/c queue with deterministic service.

    Allen-Cunneen: W(M/G/c) ~ W(M/M/c) x (1 + cs^2) / 2 with cs = 0 for deterministic
    service; the M/M/c wait is 0 with probability 1 - C and exponential with rate
    c/S - lambda otherwise, so the quantile is m ln(C / (1 - q)), m = 0.5 / (c/S - lambda).
    """
    if rate <= 0 or service_s <= 0:
        return 0.0
    terms = _mgc_wait_terms(rate, service_s, servers)
    if terms is None:
        return SATURATED_S
    prob_wait, mean_tail = terms
    if prob_wait <= 1.0 - q:
        return 0.0
    return min(SATURATED_S, mean_tail * math.log(prob_wait / (1.0 - q)))
