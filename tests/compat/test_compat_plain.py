"""Compatibility: the math functions on plain Python numbers behave as Python and NumPy.

On plain numbers copapy functions return plain numbers (as Copapy does), computed in
double precision. Special cases follow NumPy's float64 functions instead of raising or
going complex: ``cp.abs(-0.0)`` is ``0.0``, ``cp.pow(-8.0, 1/3)`` is NaN, ``cp.pow(0.0,
-1)`` is inf (C's ``pow``, which NumPy's ``power`` calls); ``cp.minimum``/``cp.maximum``
propagate NaN as NumPy's. Where Copapy 0.0.7 is right, its plain results are the same
numbers (checked under the installed release).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
import warnings
from typing import Any

import copapy as cp
import numpy as np
import pytest
from copapy_reference import run_reference

SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 1 / 3, -8.0, 10.0, 1e-300, 1e300,
           math.inf, -math.inf, math.nan]


def same(a: Any, b: Any) -> bool:
    """Equal as floats, NaN equal to NaN, and -0.0 distinct from 0.0."""
    a, b = float(a), float(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1, a) == math.copysign(1, b)


def numpy64(fn: Any, *args: float) -> float:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return float(fn(*(np.float64(a) for a in args)))


@pytest.mark.parametrize("x", SPECIAL, ids=repr)
def test_abs_is_pythons_abs(x: float) -> None:
    assert same(cp.abs(x), abs(x))
    assert same(cp.abs(x), numpy64(np.abs, x))


def test_abs_keeps_ints() -> None:
    assert cp.abs(-7) == 7 and type(cp.abs(-7)) is int
    assert cp.abs(-(2**31)) == 2**31  # Python ints do not wrap; traced int32 values do


_libm = ctypes.CDLL(ctypes.util.find_library("m"))
_libm.pow.restype = ctypes.c_double
_libm.pow.argtypes = [ctypes.c_double, ctypes.c_double]


@pytest.mark.parametrize(("x", "y"), [(a, b) for a in SPECIAL for b in SPECIAL], ids=repr)
def test_pow_is_the_c_librarys_pow(x: float, y: float) -> None:
    """The reference is C's ``pow`` (C99 Annex F), which NumPy's ``power`` calls; NumPy
    alone differs for ``y = 0.5`` at -0 and -inf (it takes a square root there)."""
    got = cp.pow(x, y)
    assert type(got) is float
    assert same(got, _libm.pow(x, y)), (x, y, got)
    if y != 0.5:  # NumPy's own power agrees to its last bit, 1 ulp64
        want = numpy64(np.power, x, y)
        assert same(got, want) or abs(got - want) <= 2.3e-16 * abs(got)


def test_pow_of_ints_and_the_issue_examples() -> None:
    assert math.isnan(cp.pow(-8.0, 1 / 3))
    assert cp.pow(0.0, -1) == math.inf
    assert cp.pow(-0.0, -3) == -math.inf
    assert cp.pow(2, 10) == 1024.0
    assert cp.pow(-2, 3) == -8.0
    assert cp.pow(-10.0, 401) == -math.inf


MINMAX = [*SPECIAL[:8], math.nan]


@pytest.mark.parametrize(("x", "y"), [(a, b) for a in MINMAX for b in MINMAX], ids=repr)
def test_minimum_maximum_are_numpys(x: float, y: float) -> None:
    assert same(cp.minimum(x, y), numpy64(np.minimum, x, y))
    assert same(cp.maximum(x, y), numpy64(np.maximum, x, y))
    assert same(cp.clamp(x, -1.0, 1.0), numpy64(np.clip, x, -1.0, 1.0))


@pytest.mark.parametrize("name", ["sqrt", "sin", "cos", "tan", "asin", "acos", "atan", "exp", "log", "tanh"])
def test_unary_functions_are_pythons_math_inside_the_domain(name: str) -> None:
    fn = getattr(cp, name)
    ref = getattr(math, name)
    for x in [0.0, -0.0, 0.25, 0.5, 0.9, 1.0, 2.0, 10.0]:
        if name in ("asin", "acos") and x > 1:
            continue
        if name == "log" and x == 0:
            continue
        got = fn(x)
        assert type(got) is float
        assert same(got, ref(x)), (name, x)


def test_atan2_is_math_atan2_with_the_first_argument_first() -> None:
    for x, y in [(1.0, 2.0), (-1.0, -0.0), (0.0, -1.0), (-0.0, -1.0), (3.0, 0.0)]:
        assert same(cp.atan2(x, y), math.atan2(x, y))
        assert same(cp.atan2(x=x, y=y), numpy64(np.arctan2, x, y))


COPAPY_SCRIPT = """
import json, math, copapy as cp
xs = [0.0, 0.25, 0.5, 0.9, 1.0, 2.0, 10.0, -3.0]
out = {}
for name in ('sqrt', 'sin', 'cos', 'tan', 'atan', 'exp', 'log'):
    f = getattr(cp, name)
    out[name] = [f(x) if (x > 0 or name not in ('sqrt', 'log')) else None for x in xs]
out['atan2'] = [cp.atan2(1.0, 2.0), cp.atan2(x=-1.0, y=0.5)]
out['pow'] = [cp.pow(2.0, 0.5), cp.pow(3, 2), cp.pow(x=9.0, y=0.5)]
out['abs'] = [cp.abs(x) for x in xs if x != 0]
out['sign'] = [cp.sign(x) for x in xs]
out['clamp'] = [cp.clamp(x, 0.5, 1.0) for x in xs]
out['minmax'] = [cp.min(1.0, 2.0), cp.max(1.0, 2.0)]
out['relu'] = [cp.relu(x) for x in xs]
out['iif'] = [cp.iif(1, 2.0, 3.0), cp.iif(0, 2.0, 3.0)]
print(json.dumps(out))
"""


def test_plain_results_are_copapys_where_copapy_is_right() -> None:
    theirs = run_reference(COPAPY_SCRIPT)
    xs = [0.0, 0.25, 0.5, 0.9, 1.0, 2.0, 10.0, -3.0]
    for name in ("sqrt", "sin", "cos", "tan", "atan", "exp", "log"):
        ours = [getattr(cp, name)(x) if (x > 0 or name not in ("sqrt", "log")) else None for x in xs]
        assert ours == theirs[name], name
    assert [cp.atan2(1.0, 2.0), cp.atan2(x=-1.0, y=0.5)] == theirs["atan2"]
    assert [cp.pow(2.0, 0.5), cp.pow(3, 2), cp.pow(x=9.0, y=0.5)] == theirs["pow"]
    assert [cp.abs(x) for x in xs if x != 0] == theirs["abs"]
    assert [cp.sign(x) for x in xs] == theirs["sign"]
    assert [cp.clamp(x, 0.5, 1.0) for x in xs] == theirs["clamp"]
    assert [cp.min(1.0, 2.0), cp.max(1.0, 2.0)] == theirs["minmax"]
    assert [cp.relu(x) for x in xs] == theirs["relu"]
    assert [cp.iif(1, 2.0, 3.0), cp.iif(0, 2.0, 3.0)] == theirs["iif"]
