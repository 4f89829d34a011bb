"""cp.relu and cp.sigmoid against NumPy: relu is np.maximum(x, 0) bit for bit (float32 and
int32), sigmoid is 1 / (1 + exp(-x)) within a few ulp of the float64 value rounded to float32."""

from __future__ import annotations

import math
from typing import Any

import copapy as cp
import numpy as np
import pytest
import refsem as R
from helpers import F32
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from readback import nested

EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, math.inf, -math.inf, math.nan, 1e-45, -1e-45, 1.17549435e-38,
         -1.17549435e-38, 3.4028235e38, -3.4028235e38, 88.0, -88.0, 89.0, -89.0, 104.0, -104.0, 20.0, -20.0]


def random_floats(n: int, seed: int, scale: float) -> list[float]:
    rng = np.random.default_rng(seed)
    return [float(x) for x in (rng.standard_normal(n) * scale).astype(np.float32)]


def run(fn: Any, xs: list[Any], dtype: str = "float") -> list[Any]:
    vals = [cp.value(x, dtype) for x in xs]
    outs = [fn(v) for v in vals]
    tg = cp.Target()
    tg.compile(outs)
    tg.run()
    return list(tg.read_value(outs))


# ---------------------------------------------------------------------------------------------
# relu


def test_relu_float_is_numpy_maximum_bit_for_bit() -> None:
    xs = EDGES + random_floats(300, 1, 5.0)
    got = run(cp.relu, xs)
    bad = []
    for x, g in zip(xs, got, strict=True):
        want = np.maximum(F32(x), F32(0.0))
        if type(g) is not float or not R.same_float(g, want):
            bad.append(f"relu({x!r}) = {g!r}, want {want!r}")
    assert not bad, R.describe_failures(bad)


def test_relu_of_negative_zero_and_nan() -> None:
    got = run(cp.relu, [-0.0, math.nan, -math.inf])
    assert math.copysign(1.0, got[0]) == 1.0  # +0.0, as np.maximum(-0.0, 0)
    assert math.isnan(got[1])
    assert got[2] == 0.0


def test_relu_int_is_numpy_maximum() -> None:
    xs = [0, 1, -1, 5, -5, 2**31 - 1, -(2**31), 12345, -12345]
    got = run(cp.relu, xs, "int")
    assert got == [int(np.maximum(np.int32(x), np.int32(0))) for x in xs]
    assert all(type(g) is int for g in got)


def test_relu_plain_numbers() -> None:
    assert cp.relu(2.5) == 2.5 and cp.relu(-2.5) == 0.0 and type(cp.relu(-2.5)) is float
    assert cp.relu(3) == 3 and cp.relu(-3) == 0 and type(cp.relu(-3)) is int
    assert math.copysign(1.0, cp.relu(-0.0)) == 1.0
    assert math.isnan(cp.relu(math.nan))
    assert cp.relu(math.inf) == math.inf and cp.relu(-math.inf) == 0.0


def test_relu_on_containers() -> None:
    v = cp.vector([cp.value(-1.5), cp.value(2.0), 0.0, -3.0])
    m = cp.matrix([[cp.value(-1.0), cp.value(4.0)], [cp.value(0.5), -2.0]])
    rv, rm = cp.relu(v), cp.relu(m)
    assert isinstance(rv, cp.vector) and isinstance(rm, cp.tensor)
    assert rm.shape == (2, 2)
    tg = cp.Target()
    tg.compile(rv, rm)
    tg.run()
    assert nested(tg.read_value(rv)) == [0.0, 2.0, 0.0, 0.0]
    assert nested(tg.read_value(rm)) == [[0.0, 4.0], [0.5, 0.0]]
    assert list(cp.relu(cp.vector([1.0, -1.0]))) == [1.0, 0.0]
    assert list(cp.relu(cp.quaternion(1.0, -2.0, 3.0, -4.0))) == [1.0, 0.0, 3.0, 0.0]


def test_relu_rejects_other_types() -> None:
    with pytest.raises(TypeError):
        cp.relu("x")  # type: ignore[call-overload]


# ---------------------------------------------------------------------------------------------
# sigmoid


def sigmoid64(x: float) -> float:
    if math.isnan(x):
        return x
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def sigmoid_f32_formula(x: float) -> np.float32:
    """1 / (1 + exp(-x)) evaluated in float32 NumPy (overflowing exp gives 0, as compiled)."""
    with np.errstate(over="ignore"):
        return F32(1.0) / (F32(1.0) + np.exp(-F32(x)))


def test_sigmoid_float() -> None:
    xs = EDGES + random_floats(500, 2, 10.0)
    got = run(cp.sigmoid, xs)
    bad = []
    for x, g in zip(xs, got, strict=True):
        formula = sigmoid_f32_formula(x)
        if math.isnan(x):
            ok = math.isnan(g)
        elif formula == 0.0:  # exp(-x) overflows float32: the formula's result is exactly 0
            ok = g == 0.0
        else:
            # exp within 1 ulp, then an add and a divide: within 3 ulp of the exact value
            # rounded to float32 (where that is a normal number); NumPy's own float32 exp is
            # less accurate, so its formula is only a loose cross-check
            ok = R.ulp_distance(g, float(formula)) <= 8
            exact = F32(sigmoid64(x))
            if exact >= np.finfo(np.float32).tiny:
                ok = ok and R.ulp_distance(g, float(exact)) <= 3
        if not ok or type(g) is not float:
            bad.append(f"sigmoid({x!r}) = {g!r}, want {formula!r} (exact {sigmoid64(x)!r})")
    assert not bad, R.describe_failures(bad)


def test_sigmoid_saturates_and_is_monotone() -> None:
    xs = [-200.0, -100.0, -50.0, -10.0, -1.0, 0.0, 1.0, 10.0, 50.0, 100.0, 200.0, math.inf, -math.inf]
    got = run(cp.sigmoid, xs)
    assert got[0] == 0.0 and got[-1] == 0.0 and got[-2] == 1.0 and got[-3] == 1.0
    assert got[5] == 0.5
    finite = got[:-2]
    assert finite == sorted(finite)
    assert all(0.0 <= g <= 1.0 for g in got)


def test_sigmoid_of_ints() -> None:
    xs = [-3, 0, 2, 7]
    got = run(cp.sigmoid, xs, "int")
    assert all(type(g) is float for g in got)
    for x, g in zip(xs, got, strict=True):
        assert R.ulp_distance(g, float(F32(sigmoid64(x)))) <= 3


def test_sigmoid_plain_numbers() -> None:
    for x in [-800.0, -50.0, -1.0, 0.0, 0.25, 3.0, 800.0]:
        assert cp.sigmoid(x) == pytest.approx(sigmoid64(x), rel=1e-15, abs=0)
    assert cp.sigmoid(0) == 0.5 and type(cp.sigmoid(0)) is float
    assert cp.sigmoid(-1e6) == 0.0 and cp.sigmoid(1e6) == 1.0
    assert math.isnan(cp.sigmoid(math.nan))


def test_sigmoid_on_containers() -> None:
    xs = [-2.0, -0.5, 0.0, 1.5]
    v = cp.vector([cp.value(x) for x in xs])
    m = cp.matrix([[cp.value(-2.0), cp.value(-0.5)], [cp.value(0.0), cp.value(1.5)]])
    sv, sm = cp.sigmoid(v), cp.sigmoid(m)
    assert isinstance(sv, cp.vector) and isinstance(sm, cp.tensor)
    tg = cp.Target()
    tg.compile(sv, sm)
    tg.run()
    got_v, got_m = nested(tg.read_value(sv)), nested(tg.read_value(sm))
    assert got_v == [got_m[0][0], got_m[0][1], got_m[1][0], got_m[1][1]]
    for x, g in zip(xs, got_v, strict=True):
        assert R.ulp_distance(g, float(F32(sigmoid64(x)))) <= 3
    plain = cp.sigmoid(cp.vector(xs))
    assert list(plain) == [pytest.approx(sigmoid64(x), rel=1e-15) for x in xs]


# the float32 inputs whose exp(-x) overflows: sigmoid is exactly 0 there (documented)
EXP_OVERFLOWS_BELOW = -88.72283935546875


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.floats(width=32), st.floats(-120.0, 120.0, width=32),
                          st.sampled_from(EDGES)), min_size=1, max_size=20))
def test_sigmoid_array_and_scalars_agree_with_float64(xs: list[float]) -> None:
    """One cp.array step and one scalar stencil per element (packed four to a SIMD step
    where the target has packs) give the same bits, within 3 ulp of the float64 value
    rounded to float32, 0 where exp(-x) overflows, NaN for NaN."""
    tg = cp.Target()
    arr = cp.sigmoid(cp.array(np.array(xs, dtype=np.float32)))
    scalars = [cp.sigmoid(cp.value(x)) for x in xs]
    tg.compile(arr, scalars)
    tg.run()
    got_arr = [float(v) for v in np.asarray(tg.read_value(arr), dtype=np.float32)]
    got = list(tg.read_value(scalars))
    for x, a, g in zip(xs, got_arr, got, strict=True):
        assert R.same_float(a, g), f"sigmoid({x!r}): array {a!r}, scalar {g!r}"
        if math.isnan(x):
            assert math.isnan(g)
            continue
        want = 0.0 if x < EXP_OVERFLOWS_BELOW else float(F32(sigmoid64(x)))
        assert R.ulp_distance(g, want) <= 3, f"sigmoid({x!r}) = {g!r}, want {want!r}"
