"""cp.sqrt (exact IEEE float32) and cp.sin / cp.cos (within 1 ulp of the float64 result
rounded to float32) on compiled values."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import copapy as cp
import numpy as np
import pytest
import refsem as R

EDGES = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 2.0, 0.5, 1e-30, 1e30,
         1.401298464324817e-45, -5.877471754111438e-39, float(np.finfo(np.float32).max),
         float(np.finfo(np.float32).tiny)]


def _random_floats(n: int, seed: int, lo: float, hi: float) -> list[float]:
    rng = np.random.default_rng(seed)
    return [float(x) for x in rng.uniform(lo, hi, n).astype(np.float32)]


def _random_bit_patterns(n: int, seed: int) -> list[float]:
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    return [float(x) for x in bits.view(np.float32)]


def _eval(fn: Callable[[Any], Any], xs: list[Any], dtype: str = "float") -> list[Any]:
    vals = [cp.value(x, dtype) for x in xs]
    outs = [fn(v) for v in vals]
    tg = cp.Target()
    tg.compile(outs)
    tg.run()
    got = tg.read_value(outs)
    assert all(type(g) is float for g in got)
    return got


def test_sqrt_is_exact() -> None:
    xs = EDGES + _random_floats(500, 1, 0.0, 1000.0) + _random_bit_patterns(2000, 2)
    got = _eval(cp.sqrt, xs)
    bad = [f"sqrt({x!r}) = {g!r}, want {R.sqrt(x)!r}"
           for x, g in zip(xs, got, strict=True) if not R.same_float(g, R.sqrt(x))]
    assert not bad, R.describe_failures(bad)


def test_sqrt_of_int_and_bool_values() -> None:
    xs = [0, 1, 2, 4, 1000003, 2**31 - 1, -4, 16777217]
    got = _eval(cp.sqrt, xs, "int")
    bad = [f"sqrt(int {x}) = {g!r}" for x, g in zip(xs, got, strict=True) if not R.same_float(g, R.sqrt(x))]
    got_b = _eval(cp.sqrt, [False, True], "bool")
    assert got_b == [0.0, 1.0]
    assert not bad, R.describe_failures(bad)


def _check_ulp(name: str, fn: Callable[[Any], Any], ref: Callable[[Any], Any], xs: list[float]) -> None:
    got = _eval(fn, xs)
    bad = []
    worst = 0
    for x, g in zip(xs, got, strict=True):
        want = ref(x)
        if np.isnan(want):
            if not math.isnan(g):
                bad.append(f"{name}({x!r}) = {g!r}, want nan")
            continue
        if math.isnan(g):
            bad.append(f"{name}({x!r}) = nan, want {float(want)!r}")
            continue
        d = R.ulp_distance(g, float(want))
        worst = max(worst, d)
        if d > 1:
            bad.append(f"{name}({x!r}) = {g!r}, want {float(want)!r} ({d} ulp)")
    assert not bad, R.describe_failures(bad)


# sin and cos are within 1 ulp for |x| < 2^20 (docs/math.md); beyond, deterministic with a
# bounded absolute error (test_sin_cos_of_large_arguments_are_bounded)
ACCURATE = 2.0**20
SMALL = ([e for e in EDGES if not abs(e) >= ACCURATE]
         + [k * math.pi / 4 for k in range(-16, 17)]
         + [float(np.float32(k * math.pi / 2)) for k in range(-40, 41)]
         + _random_floats(2000, 3, -10.0, 10.0) + _random_floats(1000, 4, -1e-3, 1e-3)
         + _random_floats(1000, 5, -1e4, 1e4) + _random_floats(1000, 8, -1048575.0, 1048575.0))


def _quadrant_boundaries() -> list[float]:
    """float32 neighbours of k pi/2 and k pi/4 (the quadrant and pass-through edges)."""
    out = []
    for k in [*range(-325, 326), *range(667000, 667537, 7), 2**18, 2**19 + 1, 2**19 + 12345]:
        for c in (k * math.pi / 2, k * math.pi / 4):
            f = np.float32(c)
            if abs(float(f)) >= ACCURATE:
                continue
            for d in (-2, -1, 0, 1, 2):
                out.append(float(np.nextafter(f, np.float32(math.copysign(math.inf, d)))) if d else float(f))
    return out


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_cos_within_one_ulp(name: str) -> None:
    fn = cp.sin if name == "sin" else cp.cos
    ref = R.sin if name == "sin" else R.cos
    _check_ulp(name, fn, ref, SMALL)


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_cos_within_one_ulp_next_to_quadrant_boundaries(name: str) -> None:
    """Cancellation near k pi/2 needs the double-float reduction; k pi/4 switches paths."""
    fn = cp.sin if name == "sin" else cp.cos
    ref = R.sin if name == "sin" else R.cos
    xs = _quadrant_boundaries()
    _check_ulp(name, fn, ref, xs + [-x for x in xs])


def _subnormals() -> list[float]:
    bits = np.array([1, 2, 0x3FF, 0x400000, 0x7FFFFF], dtype=np.uint32)
    pos = [float(x) for x in bits.view(np.float32)]
    return pos + [-x for x in pos]


def test_sin_cos_tan_of_special_values() -> None:
    """NaN and infinities give the quiet NaN; zeros and subnormals keep their sign."""
    xs = [math.nan, -math.nan, math.inf, -math.inf, 0.0, -0.0, *_subnormals()]
    for fn, name in ((cp.sin, "sin"), (cp.cos, "cos"), (cp.tan, "tan")):
        got = _eval(fn, xs)
        for x, g in zip(xs, got, strict=True):
            if math.isnan(x) or math.isinf(x):
                assert R.f32_bits(g) == 0x7FC00000, (name, x, g)
            elif name == "cos":
                assert g == 1.0, (name, x, g)
            else:
                assert R.same_float(g, x), (name, x, g)


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_cos_of_large_arguments_are_bounded(name: str) -> None:
    """From |x| = 2^20 on the reduction rounds its products (no branch to an exact
    reduction): the result stays in [-1, 1], and its error is bounded in absolute terms,
    below |x| 2^-21 while |x| < 2^30 (docs/math.md)."""
    xs = (_random_floats(500, 6, -1e8, 1e8) + _random_floats(500, 7, -3e38, 3e38)
          + [float(np.float32(x)) for x in (2.0**20, -(2.0**20), 2e6, 1e7, 1e10, 1e20, 1e30, 3.4e38,
                                            2.0**23, 2.0**24, 2.0**30, float(np.finfo(np.float32).max))])
    xs = [x for x in xs if abs(x) >= ACCURATE]
    fn = cp.sin if name == "sin" else cp.cos
    ref = R.sin if name == "sin" else R.cos
    got = _eval(fn, xs)
    bad = []
    for x, g in zip(xs, got, strict=True):
        want = float(ref(x))
        if not -1.0 <= g <= 1.0 or (abs(x) < 2.0**30 and abs(g - want) > abs(x) * 2.0**-21):
            bad.append(f"{name}({x!r}) = {g!r}, want {want!r}")
    assert not bad, R.describe_failures(bad)


def test_sin_and_cos_of_one_value_equal_the_separate_programs() -> None:
    """The fused sincos step gives the bits of sin alone and cos alone (scalars and
    arrays, both orders)."""
    xs = (SMALL[:400] + _quadrant_boundaries()[::7] + _subnormals()
          + [math.nan, math.inf, -math.inf, 600.0, -1e5, -1e7, 3e38])
    vals = [cp.value(x) for x in xs]
    both = [f(v) for v in vals for f in (cp.sin, cp.cos)]
    tg = cp.Target()
    tg.compile(both)
    tg.run()
    got = tg.read_value(both)
    alone = _eval(cp.sin, xs), _eval(cp.cos, xs)
    for k, x in enumerate(xs):
        assert R.f32_bits(got[2 * k]) == R.f32_bits(alone[0][k]), ("sin", x)
        assert R.f32_bits(got[2 * k + 1]) == R.f32_bits(alone[1][k]), ("cos", x)
    arr = cp.array(np.array(xs, dtype=np.float32))
    outs = [cp.cos(arr), cp.sin(arr)]
    tg = cp.Target()
    tg.compile(outs)
    tg.run()
    c, s = (np.asarray(tg.read_value(o), dtype=np.float32) for o in outs)
    assert c.view(np.uint32).tolist() == [R.f32_bits(g) for g in alone[1]]
    assert s.view(np.uint32).tolist() == [R.f32_bits(g) for g in alone[0]]


def test_gradients_of_fused_sin_and_cos_match_finite_differences() -> None:
    """d/dx (sin x * cos x) through cp.grad, against a central difference in float64."""
    for x0 in (0.3, -1.2, 2.5, 7.0, -100.25):
        x = cp.value(x0)
        y = cp.sin(x) * cp.cos(x) + cp.sin(x)
        g = cp.grad(y, x)
        tg = cp.Target()
        tg.compile([y, g])
        tg.run()
        got = tg.read_value(g)
        h = 1e-6
        f = lambda t: math.sin(t) * math.cos(t) + math.sin(t)  # noqa: E731
        want = (f(x0 + h) - f(x0 - h)) / (2 * h)
        assert abs(got - want) <= 1e-5 * max(1.0, abs(want)), (x0, got, want)


def test_sin_cos_of_int_values() -> None:
    xs = [0, 1, -1, 3, 100, 2**20 - 1, -(2**20) + 1]  # within the 1-ulp range (|x| < 2^20)
    _check_ulp("sin", cp.sin, R.sin, [float(np.float32(x)) for x in xs])
    got = _eval(cp.sin, xs, "int")
    for x, g in zip(xs, got, strict=True):
        assert R.ulp_distance(g, float(R.sin(x))) <= 1, (x, g)
