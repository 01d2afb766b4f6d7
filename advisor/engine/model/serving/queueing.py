"""The serving model's queues: the M/G/c queue of prompts waiting for a prefill instance and
of requests waiting for a decode slot (Erlang C with the Allen-Cunneen correction for
deterministic service), docs/MODEL.md 15.

Units: seconds, requests per second.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Final

from advisor.engine.facts.constants import SATURATED_S
from advisor.engine.model.serving.compute import ERLANG_MAX_SERVERS

_SERVER_COUNTS = tuple(float(k) for k in range(1, ERLANG_MAX_SERVERS + 1))

BOUND_MARGIN: Final = 2.0
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


_GAUSS_LEGENDRE_NODES = (
    (-0.9602898564975363, 0.1012285362903763),
    (-0.7966664774136267, 0.2223810344533745),
    (-0.5255324099163290, 0.3137066458778873),
    (-0.1834346424956498, 0.3626837833783620),
    (0.1834346424956498, 0.3626837833783620),
    (0.5255324099163290, 0.3137066458778873),
    (0.7966664774136267, 0.2223810344533745),
    (0.9602898564975363, 0.1012285362903763),
)
"""Eight-point Gauss-Legendre rule on [-1, 1] (nodes, weights; Abramowitz and Stegun 25.4.30,
table 25.4): exact for polynomials of degree 15, so for the smooth exponentials of
:func:`decode_time_sd_s` (exponent at most the feedback gain, below ~1) to ~1e-12."""


def decode_time_sd_s(
    rate: float,
    iterations: float,
    iteration_s: float,
    prompt_s: float,
    stretch: float,
    slope_s: float,
) -> float:
    """Standard deviation of one request's decode time (its ``iterations`` steps) on an
    instance whose steps cost ``slope_s`` more per sequence of the batch and whose GPUs also
    serve every arriving request's prompt (``prompt_s``; 0 when prefill runs elsewhere).

    Linear-noise (diffusion) reading of the tagged request's clock T(n) after n of its steps
    (docs/MODEL.md 15, "Load"): with Poisson arrivals at ``rate`` (per instance, compensated
    count M), prompt utilisation rho = rate x prompt_s (``stretch`` = 1 / (1 - rho)) and the
    batch = the others present at its start that are still decoding + the arrivals since,

        (1 - rho) dT/dn = step(batch) + prompt_s x dM/dn,  step slope ``slope_s`` per sequence,

    so a deviation d of T grows by kappa = slope x rate x stretch per step (every request that
    arrived in d more seconds stays in the batch until the tagged one ends) and a disturbance
    at step n reaches the end weighted w(u) = stretch x exp(kappa u), u = N - n steps later.
    The variance V of T(N) is the arrivals' (rate x iteration_s per step, each bringing its
    prompt at once and a sequence for the u steps left, weight P w(u) + slope W(u), W the
    integral of w) plus the others' present at the start (mean the batch b = rate x N x
    iteration_s by Little's law, each leaving after a uniform share of the N steps):

        A = rate iteration_s int_0^N (P w(u) + slope W(u))^2 du,
        B = (b / N) int_0^N slope^2 (W(N) - W(u))^2 du     (their count Poisson),
        V = A + (1 + rate^2 V / b) B = (A + B) / (1 - rate^2 B / b),

    their count being the arrivals of the previous N steps' time, which varies as T(N) does
    (a Poisson count over a random window T': variance rate E[T'] + rate^2 Var T'; Ross,
    Introduction to Probability Models, conditional variance formula).  ``math.inf`` when
    rate^2 B / b >= 1 (the batch's feedback through the step has no stationary spread).

    Without the step's slope this is the delay busy period of the prompts started by the
    request's own work x (mean x / (1 - rho), variance x rate P^2 / (1 - rho)^3; Kleinrock,
    Queueing Systems vol. 1, 1975, sec. 5.10; Harchol-Balter 2013, ch. 27); without prompts
    and feedback, the M/D/inf lifetime-mean batch variance 2/3 b (Eick, Massey and Whitt 1993)."""
    if rate <= 0 or iterations <= 0 or iteration_s <= 0:
        return 0.0
    n = iterations
    batch = rate * n * iteration_s
    if slope_s <= 0:
        # w = stretch, B = 0: A = rate x iteration_s x N x (P x stretch)^2
        return prompt_s * stretch * math.sqrt(batch)
    kappa = slope_s * rate * stretch
    whole = stretch * math.expm1(kappa * n) / kappa
    half = 0.5 * n
    arrivals_sum = present_sum = 0.0
    for node, weight in _GAUSS_LEGENDRE_NODES:
        u = half * (1.0 + node)
        grown = math.expm1(kappa * u)
        big_w = stretch * grown / kappa
        arrivals_sum += weight * (prompt_s * stretch * (1.0 + grown) + slope_s * big_w) ** 2
        present_sum += weight * (slope_s * (whole - big_w)) ** 2
    arrivals = rate * iteration_s * half * arrivals_sum
    present = batch / n * half * present_sum
    # the others present at the start arrived in the last N steps' time T', which varies as
    # T(N) does: Var(count) = b + rate^2 Var T' (a Poisson count over a random window), so
    # their part is (1 + rate^2 V / b) times the Poisson one and V = arrivals + present x that
    feedback = rate * rate * present / batch
    if feedback >= 1.0:
        return math.inf
    return math.sqrt((arrivals + present) / (1.0 - feedback))
