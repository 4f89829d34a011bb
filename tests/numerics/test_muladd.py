"""Multiply-add superinstructions (crates/copapy-compiler/src/muladd.rs): a float sum or
difference that reads products nothing else reads runs as one stencil
(``p*q + r*s``, ``p*q - r*s``, ``t + p*q``, ``t - p*q``, ``p*q - t``), whose product and
sum are each rounded to float32 as the separate operations round them: no fused
multiply-add on any target. The reference is NumPy float32, one operation at a time.

Operands are inputs (every factor from memory), values computed just before (factors in
a register) and values read again later; the values include signed zeros, subnormals,
products that underflow, products that overflow while the exact sum of two would be
finite (2e20 * 2e20 - 2e20 * 2e20 is NaN here, 0 with one rounding), infinities and NaN.
The emulated passes run the same program on every target (tests/conftest.py).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

import copapy as cp
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

F = np.float32
EDGES = [0.0, -0.0, 1.0, -1.5, 0.1, 3.0, 1e-45, -1e-45, 1.1754942e-38, 1e-20, -1e-20, 2e20,
         -2e20, 1.8446744e19, 3.4028235e38, -3.4028235e38, math.inf, -math.inf, math.nan]
floats = st.one_of(st.sampled_from(EDGES), st.sampled_from(EDGES), st.floats(width=32))
NAMES = ("p", "q", "r", "s", "t")

# each expression over the five inputs, written once: evaluated on copapy values it
# traces the program, on np.float32 scalars it is the reference (one rounding per op)
Expr = Callable[[dict[str, Any]], Any]
EXPRESSIONS: list[Expr] = [
    lambda v: v["p"] * v["q"] + v["r"] * v["s"],
    lambda v: v["p"] * v["q"] - v["r"] * v["s"],
    lambda v: v["t"] + v["p"] * v["q"],
    lambda v: v["t"] - v["p"] * v["q"],
    lambda v: v["p"] * v["q"] - v["t"],
    # a factor computed just before: it is in a register
    lambda v: (v["p"] + v["t"]) * v["q"] + v["r"] * v["s"],
    lambda v: v["r"] * v["s"] - (v["p"] - v["t"]) * v["q"],
    lambda v: (v["p"] - v["q"]) + v["r"] * v["s"],
    lambda v: (v["p"] + v["q"]) - (v["r"] - v["t"]) * v["s"],
    lambda v: v["p"] * v["q"] - (v["r"] + v["s"]),
    # both registers taken: a sum and a factor computed before the product
    lambda v: (v["p"] + v["t"]) + (v["q"] - v["r"]) * v["s"],
    # a dot product's chain, and a product read twice (not fused)
    lambda v: v["t"] + v["p"] * v["q"] + v["r"] * v["s"] + v["q"] * v["t"],
    lambda v: v["p"] * v["q"] + (v["p"] * v["q"]) * v["r"],
    # a squared value: one factor twice
    lambda v: v["p"] * v["p"] + v["q"] * v["q"],
]

settings_ = settings(max_examples=40, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow])


@functools.cache
def program() -> tuple[Any, list[Any], list[Any]]:
    """One program of every expression, compiled once: (target, inputs, outputs). Each
    expression reads inputs of its own (the same values are written to all), or equal
    products of two expressions would be one node read twice, which is never fused."""
    inputs, outputs = [], []
    for e in EXPRESSIONS:
        own = {n: cp.value(0.0) for n in NAMES}
        outputs.append(e(own))
        inputs += [(n, own[n]) for n in used(e)]
    tg = cp.Target()
    tg.compile(outputs)
    return tg, inputs, outputs


def used(e: Expr) -> list[str]:
    """The names expression `e` reads, in NAMES order."""
    seen: set[str] = set()

    class Recording(dict[str, Any]):
        def __getitem__(self, key: str) -> Any:
            seen.add(key)
            return F(1.0)

    e(Recording())
    return [n for n in NAMES if n in seen]


def write(tg: Any, inputs: list[Any], values: list[float]) -> None:
    """The same five values (by name) into every expression's inputs."""
    by_name = dict(zip(NAMES, values, strict=True))
    tg.write_value([v for _, v in inputs], [by_name[n] for n, _ in inputs])


def same(got: float, want: Any) -> bool:
    """The same float32 bits, or both NaN (a NaN's sign and payload are unspecified)."""
    if math.isnan(want):
        return math.isnan(got)
    return bool(np.float32(got).view(np.uint32) == np.float32(want).view(np.uint32))


@settings_
@given(st.lists(floats, min_size=len(NAMES), max_size=len(NAMES)))
def test_fused_sums_of_products_round_each_operation_like_numpy(values: list[float]) -> None:
    tg, inputs, outputs = program()
    write(tg, inputs, values)
    tg.run()
    got = tg.read_value(outputs)
    env = {n: F(x) for n, x in zip(NAMES, values, strict=True)}
    with np.errstate(all="ignore"):
        want = [e(env) for e in EXPRESSIONS]
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        assert same(g, w), f"expression {k} of {values}: {g!r}, want {w!r}"


def test_an_overflowing_product_is_rounded_before_the_sum() -> None:
    # 2e20 * 2e20 overflows float32: the difference of two such products is inf - inf =
    # NaN when each product is rounded (a fused multiply-add would give 0), and
    # 2e20 * 2e20 - 3e38 is inf - 3e38 = inf (fused: 4e40 - 3e38, finite in float64 only)
    tg, inputs, outputs = program()
    write(tg, inputs, [2e20, 2e20, 2e20, 2e20, 3e38])
    tg.run()
    got = tg.read_value(outputs)
    assert math.isnan(got[1])
    assert got[4] == math.inf
