"""pow over every special class of its operands, scalar and array, against NumPy.

``cpm_powf`` resolves its special cases (x <= 0, integer y, inf/NaN, over- and underflow,
x = 1, y = 0) with a few compares feeding the final picks (docs/math.md, "pow"). Here each
class meets each other class: a grid of edge values (signed zeros, ±1, ±inf, NaN,
subnormals, FLT_MAX, odd and even integers around 2^24 and 2^32, halves) and random
pairs (hypothesis), through the scalar stencils and the array kernel (4 lanes at a time
where the target vectorises, the rest one by one), which must agree bit for bit.

The reference is NumPy's float64 ``np.power`` of the float32 operands: a NaN reference
wants the quiet NaN 0x7fc00000, an infinite or zero one the same bits (signs included,
``pow(-0, -3) = -inf``), where float32 over- or underflows the same (one ulp of slack
at the overflow and underflow edges), and otherwise the documented 2 ulp bar.
"""

from __future__ import annotations

import math
import struct
from typing import Any

import copapy as cp
import numpy as np
import pytest
from helpers import run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

F32 = np.float32


def f32(bits: int) -> float:
    return float(struct.unpack("<f", struct.pack("<I", bits))[0])


def bits_of(x: float) -> int:
    return int(struct.unpack("<I", struct.pack("<f", x))[0])


EDGES = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0,
         1.5, -1.5, 2.5, f32(0x3F7FFFFF), f32(0x3F800001), -f32(0x3F7FFFFF), f32(1), -f32(1),
         f32(0x007FFFFF), 3.4028235e38, -3.4028235e38, 16777215.0, 16777216.0, -16777215.0,
         8388607.0, 8388607.5, 2147483648.0, 4294967296.0, -4294967296.0, 4294967040.0,
         127.0, 128.0, -149.0, -150.0, 0.1, -7.0, 1e10, -1e-10]


def reference(x: float, y: float) -> float:
    """C99 pow in float64 (arrays: NumPy's scalar fast paths, e.g. sqrt for y = 0.5, give
    sqrt(-0) = -0 where C99 says pow(-0, 0.5) = +0)"""
    with np.errstate(all="ignore"):
        x64, y64 = np.array([x], F32).astype(np.float64), np.array([y], F32).astype(np.float64)
        return float(np.power(x64, y64)[0])


FLT_MAX = float(np.finfo(F32).max)
TOP_ULP = 2.0**104  # the ulp of FLT_MAX


def check(got: float, x: float, y: float) -> None:
    ref = reference(x, y)
    g = float(F32(got))
    if math.isnan(ref):
        assert bits_of(g) == 0x7FC00000, (x, y, g)
        return
    with np.errstate(over="ignore"):
        ref32 = float(F32(ref))
    if ref == 0.0 or math.isinf(ref):
        assert bits_of(g) == bits_of(ref32), (x, y, g, ref)
        return
    assert math.copysign(1.0, g) == math.copysign(1.0, ref), (x, y, g, ref)
    if math.isinf(g) or math.isinf(ref32):  # one overflows: both, or |ref| within the bar of FLT_MAX
        assert math.isinf(g) == math.isinf(ref32) or abs(abs(ref) - FLT_MAX) <= 2 * TOP_ULP, (x, y, g, ref)
        return
    with np.errstate(over="ignore"):  # the spacing above FLT_MAX
        ulp = min(float(np.spacing(F32(abs(ref32)))), TOP_ULP) if ref32 != 0.0 else f32(1)
    assert abs(g - ref) <= 2 * ulp, (x, y, g, ref)


def scalar_and_array(xs: list[float], ys: list[float]) -> tuple[list[float], list[float]]:
    scalars = [cp.value(x) ** cp.value(y) for x, y in zip(xs, ys, strict=True)]
    arr = cp.pow(cp.array(xs), cp.array(ys))
    tg = run(*scalars, arr)
    return [tg.read_value(s) for s in scalars], list(tg.read_value(arr))


def test_every_pair_of_edge_classes() -> None:
    pairs = [(x, y) for x in EDGES for y in EDGES]
    xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
    arr = cp.pow(cp.array(xs), cp.array(ys))
    got = list(run(arr).read_value(arr))
    for g, x, y in zip(got, xs, ys, strict=True):
        check(g, x, y)


@pytest.mark.parametrize("x", [-0.0, 0.0, -math.inf, math.inf, -1.0, -2.0])
def test_signs_of_odd_even_and_fractional_exponents(x: float) -> None:
    """the sign flips for odd integers only; negative finite x with a fraction is NaN"""
    ys = [3.0, -3.0, 2.0, -2.0, 1.5, -1.5, 16777215.0, 16777216.0, 0.5, 1.0, -1.0, 2.0**40]
    s, a = scalar_and_array([x] * len(ys), ys)
    assert [bits_of(v) for v in s] == [bits_of(v) for v in a]
    for g, y in zip(s, ys, strict=True):
        check(g, x, y)


edge = st.sampled_from(EDGES)
anything = st.floats(width=32)
near_one = st.integers(-3000, 3000).map(lambda k: float(F32(1.0 + k * 2.0**-23)))
ints = st.integers(-2**31, 2**31).map(lambda k: float(F32(k)))
operand = st.one_of(edge, anything, near_one, ints)


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(st.tuples(operand, operand), min_size=1, max_size=24))
def test_random_pairs_scalar_and_array_agree_with_numpy(pairs: list[tuple[float, float]]) -> None:
    xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
    s, a = scalar_and_array(xs, ys)
    assert [bits_of(v) for v in s] == [bits_of(v) for v in a]
    for g, x, y in zip(s, xs, ys, strict=True):
        check(g, x, y)


def test_results_across_the_whole_range() -> None:
    """x = 2^(w/y): results from subnormal to overflow, with negative x for integer y"""
    rng = np.random.default_rng(23)
    w = rng.uniform(-152.0, 130.0, 200)
    y = (10.0 ** rng.uniform(-3.0, 9.0, 200)) * rng.choice([-1.0, 1.0], 200)
    with np.errstate(over="ignore"):
        x = np.exp2(w / y).astype(F32)
    yi = np.rint(y).astype(F32)
    xs: list[Any] = [float(v) for v in x] + [-float(v) for v in x]
    ys: list[Any] = [float(v) for v in y.astype(F32)] + [float(v) for v in yi]
    keep = [(a, b) for a, b in zip(xs, ys, strict=True) if math.isfinite(a) and a != 0.0]
    s, a = scalar_and_array([p[0] for p in keep], [p[1] for p in keep])
    assert [bits_of(v) for v in s] == [bits_of(v) for v in a]
    for g, (xv, yv) in zip(s, keep, strict=True):
        check(g, xv, yv)
