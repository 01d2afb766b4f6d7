"""``decision.util.cents`` is ``round(value, 2)``, float for float (sign of zero included), on
the figures money and power take and on the ones built to sit on a half cent."""

from __future__ import annotations

import math
import random

from advisor.engine.decision.util import cents


def _same(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b) and type(a) is type(b)


def test_cents_is_round_to_two_decimals() -> None:
    rng = random.Random(20261205)
    figures: list[float] = [
        0.0, -0.0, 0.001, -0.001, 0.005, -0.005, 0.015, 1.005, 2.675, 1e15, -1e15, 1e16,
        123456789.125, math.inf, -math.inf, math.nan, 5e-324, 1.7976931348623157e308,
    ]  # fmt: skip
    for _ in range(200_000):
        price = round(rng.uniform(0.0, 80_000.0), rng.choice((0, 1, 2, 3)))
        count = rng.randint(0, 20_000)
        figures.append(count * price)  # a BOM line: a count times a catalog price
        figures.append(rng.uniform(-1e6, 1e6))
        figures.append(rng.uniform(-1.0, 1.0) * 10.0 ** rng.randint(-6, 16))
        # a half cent and its neighbours, where round's decimal conversion decides
        half = (rng.randint(-(10**9), 10**9) + 0.5) / 100.0
        figures.extend((half, math.nextafter(half, math.inf), math.nextafter(half, -math.inf)))
    for value in figures:
        assert _same(cents(value), round(value, 2)), value
