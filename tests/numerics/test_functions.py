"""Scalar functions on compiled values: iif, minimum/maximum, clamp, sign, abs and the math
library (tan asin acos atan atan2 exp log pow), against NumPy float32 / a float64 reference.

The math functions' exhaustive error measurement is stencils/ulp_error.py; here a sample
checks that the compiled stencils (not just the C library) deliver the documented bound.
"""

from __future__ import annotations

import math
from typing import Any

import copapy as cp
import numpy as np
import pytest

f32 = np.float32
EDGE = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-40, -1e30, math.inf, -math.inf, math.nan]


def run(exprs: list[Any]) -> list[Any]:
    tg = cp.Target()
    tg.compile(exprs)
    tg.run()
    return [tg.read_value(e) for e in exprs]


def same_bits(got: float, want: Any) -> bool:
    g, w = np.array(got, dtype=np.float32), np.array(want, dtype=np.float32)
    if np.isnan(w):
        return bool(np.isnan(g))
    return int(g.view(np.int32)) == int(w.view(np.int32))


def ulp_error(got: float, exact: float) -> float:
    if math.isnan(exact) or math.isinf(exact):
        return 0.0 if (got == exact or (math.isnan(got) and math.isnan(exact))) else math.inf
    e = float(np.spacing(np.float32(abs(exact)))) if exact != 0 else float(np.spacing(np.float32(0)))
    return abs(got - exact) / e


@pytest.mark.parametrize("name", ["minimum", "maximum"])
def test_minimum_maximum_follow_numpy_including_nan_and_signed_zero(name: str) -> None:
    fn = getattr(cp, name)
    ref = getattr(np, name)
    pairs = [(a, b) for a in EDGE for b in EDGE]
    xs = [(cp.value(a), cp.value(b)) for a, b in pairs]
    got = run([fn(x, y) for x, y in xs])
    for (a, b), g in zip(pairs, got, strict=True):
        assert same_bits(g, ref(f32(a), f32(b))), (name, a, b, g)


def test_int_minimum_maximum_and_mixed_promotion() -> None:
    a, b = cp.value(-7), cp.value(3)
    got = run([cp.minimum(a, b), cp.maximum(a, b), cp.minimum(a, 2.5), cp.max(b, -1)])
    assert got == [-7, 3, -7.0, 3]
    assert isinstance(got[0], int) and isinstance(got[2], float)


def test_iif_selects_without_leaking_nan_or_inf_from_the_branch_not_taken() -> None:
    x = cp.value(-1.0)
    safe = cp.iif(x > 0, cp.sqrt(x), 0.0)
    inf_side = cp.iif(x < 0, 2.0, 1.0 / (x + 1.0))
    taken = cp.iif(x < 0, cp.sqrt(x), 5.0)
    got = run([safe, inf_side, taken])
    assert got[0] == 0.0 and got[1] == 2.0 and math.isnan(got[2])


def test_iif_on_ints_bools_and_float_conditions() -> None:
    n, m, flag = cp.value(5), cp.value(-3), cp.value(True)
    c = cp.value(0.0)
    exprs = [cp.iif(n > m, n, m), cp.iif(n < m, n, m), cp.iif(flag, n, 7), cp.iif(c, 1.5, 2.5),
             cp.iif(flag, flag, False), cp.iif(n, 1, 2)]
    assert run(exprs) == [5, -3, 5, 2.5, True, 1]


def test_iif_with_plain_condition_chooses_now() -> None:
    v = cp.value(1.0)
    assert cp.iif(1, v, 2.0) is v
    assert cp.iif(0, 1, 2) == 2


def test_clamp_sign_abs() -> None:
    xs = [-3.5, -0.0, 0.0, 0.25, 9.0, math.nan, -math.inf]
    vals = [cp.value(x) for x in xs]
    clamps = run([cp.clamp(v, -1.0, 2.0) for v in vals])
    for x, g in zip(xs, clamps, strict=True):
        assert same_bits(g, np.clip(f32(x), f32(-1.0), f32(2.0)))
    signs = run([cp.sign(v) for v in vals])
    assert signs == [-1, 0, 0, 1, 1, 0, -1]
    assert run([cp.abs(cp.value(-4)), cp.sign(cp.value(-4))]) == [4, -1]
    assert cp.sign(-2.0) == -1 and cp.abs(-3) == 3 and cp.clamp(5, 0, 3) == 3


UNARY = {
    "tan": (math.tan, np.linspace(-1.5, 1.5, 301)),
    "asin": (math.asin, np.linspace(-1.0, 1.0, 301)),
    "acos": (math.acos, np.linspace(-1.0, 1.0, 301)),
    "atan": (math.atan, np.concatenate([np.linspace(-20, 20, 301), [1e30, -1e30]])),
    "exp": (math.exp, np.linspace(-87.0, 88.0, 351)),
    "log": (math.log, np.concatenate([np.geomspace(1e-37, 1e38, 301), [1.0, 2.0, 0.5]])),
}
BOUND = {"exp": 1.0, "log": 1.0}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_math_within_documented_ulp(name: str) -> None:
    ref, xs = UNARY[name]
    xs32 = [float(f32(x)) for x in xs]
    got = run([getattr(cp, name)(cp.value(x)) for x in xs32])
    worst = max(ulp_error(g, ref(x)) for g, x in zip(got, xs32, strict=True))
    assert worst <= BOUND.get(name, 2.0), (name, worst)


def test_math_domain_errors_follow_ieee() -> None:
    got = run([cp.log(cp.value(0.0)), cp.log(cp.value(-1.0)), cp.asin(cp.value(2.0)),
               cp.exp(cp.value(1000.0)), cp.exp(cp.value(-1000.0)), cp.acos(cp.value(math.nan))])
    assert got[0] == -math.inf and math.isnan(got[1]) and math.isnan(got[2])
    assert got[3] == math.inf and got[4] == 0.0 and math.isnan(got[5])


def test_atan2_and_pow_within_two_ulp() -> None:
    rng = np.random.default_rng(7)
    ys = rng.uniform(-10, 10, 200).astype(np.float32)
    xs = rng.uniform(-10, 10, 200).astype(np.float32)
    got = run([cp.atan2(cp.value(float(y)), cp.value(float(x))) for y, x in zip(ys, xs, strict=True)])
    assert max(ulp_error(g, math.atan2(float(y), float(x))) for g, y, x in zip(got, ys, xs, strict=True)) <= 2
    bases = rng.uniform(0.01, 10, 200).astype(np.float32)
    exps = rng.uniform(-8, 8, 200).astype(np.float32)
    got = run([cp.value(float(b)) ** cp.value(float(e)) for b, e in zip(bases, exps, strict=True)])
    assert max(ulp_error(g, float(b) ** float(e)) for g, b, e in zip(got, bases, exps, strict=True)) <= 2


def test_pow_special_cases_and_integer_exponents() -> None:
    x = cp.value(-2.0)
    got = run([x ** 0.5, cp.pow(x, 3), x ** cp.value(3.0), 2.0 ** cp.value(10.0), cp.pow(x, 0.0)])
    assert math.isnan(got[0]) and got[1] == -8.0 and got[2] == -8.0 and got[3] == 1024.0 and got[4] == 1.0
    assert cp.pow(2, 3) == 8.0 and isinstance(cp.pow(2.0, 0.5), float)


def test_functions_on_plain_numbers_return_plain_numbers() -> None:
    assert cp.exp(0.0) == 1.0 and cp.log(1.0) == 0.0 and cp.atan2(1.0, 1.0) == math.atan2(1.0, 1.0)
    assert cp.minimum(3, 2) == 2 and cp.maximum(3, 2) == 3


def test_wrong_types_are_clear_errors() -> None:
    with pytest.raises(TypeError, match="takes copapy values"):
        cp.atan2(cp.value(1.0), "x")


def test_huge_integer_exponents_use_powf() -> None:
    x = cp.value(1.0000001)
    got = run([x ** (2**40), x ** -(2**63), cp.value(-1.0) ** (2**64)])
    with np.errstate(over="ignore"):
        assert got[0] == float(np.power(np.float32(1.0000001), np.float32(2**40)))
    assert got[1] == 0.0 and got[2] == 1.0


@pytest.mark.parametrize("name", ["sqrt", "sin", "exp", "log", "abs", "sign"])
def test_unary_functions_name_themselves_on_wrong_types(name: str) -> None:
    with pytest.raises(TypeError, match=rf"{name}\(\) takes copapy values"):
        getattr(cp, name)("1.0")


@pytest.mark.parametrize("name", ["atan2", "pow", "minimum", "maximum"])
def test_binary_functions_name_themselves_on_wrong_types(name: str) -> None:
    with pytest.raises(TypeError, match=rf"{name}\(\) takes copapy values"):
        getattr(cp, name)(1.0, None)
