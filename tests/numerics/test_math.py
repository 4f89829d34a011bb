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


SMALL = (EDGES + [k * math.pi / 4 for k in range(-16, 17)]
         + [float(np.float32(k * math.pi / 2)) for k in range(-40, 41)]
         + _random_floats(2000, 3, -10.0, 10.0) + _random_floats(1000, 4, -1e-3, 1e-3)
         + _random_floats(1000, 5, -1e4, 1e4))


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_cos_within_one_ulp(name: str) -> None:
    fn = cp.sin if name == "sin" else cp.cos
    ref = R.sin if name == "sin" else R.cos
    _check_ulp(name, fn, ref, SMALL)


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_sin_cos_within_one_ulp_for_large_arguments(name: str) -> None:
    """Arguments far from zero need an exact argument reduction."""
    xs = (_random_floats(500, 6, -1e6, 1e6) + _random_floats(500, 7, -3e38, 3e38)
          + [float(np.float32(x)) for x in (1e5, 1e6, 1e7, 1e10, 1e20, 1e30, 3.4e38, 2.0**23, 2.0**24)])
    fn = cp.sin if name == "sin" else cp.cos
    ref = R.sin if name == "sin" else R.cos
    _check_ulp(name, fn, ref, xs)


def test_sin_cos_of_int_values() -> None:
    xs = [0, 1, -1, 3, 100, 2**31 - 1, -(2**31)]
    _check_ulp("sin", cp.sin, R.sin, [float(np.float32(x)) for x in xs])
    got = _eval(cp.sin, xs, "int")
    for x, g in zip(xs, got, strict=True):
        assert R.ulp_distance(g, float(R.sin(x))) <= 1, (x, g)
