"""Casts (cp.cast, to_float, to_int, to_bool, to_bytes) against an independent reference:
NumPy float32 for int to float, and the documented saturating rule written out in
refsem.saturating_cast (NumPy's astype is undefined out of range), on edge values, every
dtype, values, arrays, packed and unpacked vectors and tensors, plain numbers, errors.

scripts/test.sh runs this module on every target (COPAPY_TEST_TARGET): the conversions
must give the same bits everywhere.
"""

from __future__ import annotations

import math
from typing import Any

import copapy as cp
import numpy as np
import pytest
import refsem as R
from copapy import _core, _packing

FLOATS = [0.0, -0.0, 1.0, -1.0, 3.7, -3.7, 0.5, -0.5, 255.0, 255.5, 254.99998, 256.0, 1e-45,
          2.0**31, -(2.0**31), 2147483520.0, -2147483904.0, 3.4e38, -3.4e38,
          math.inf, -math.inf, math.nan, 16777217.0]
INTS = [0, 1, -1, 2, 255, 256, -255, 16777217, 2**31 - 1, -(2**31), 123456789]
BOOLS = [False, True]
BYTES = [0, 1, 127, 128, 254, 255]
SOURCES = {"float": FLOATS, "int": INTS, "bool": BOOLS}
TARGETS = ("float", "int", "bool", "byte")


def reference(xs: list[Any], source: str, target: str) -> list[Any]:
    """What copapy must read back, as Python numbers of the target's type."""
    if target == "float":
        dt = np.float32 if source == "float" else np.int32
        return [float(v) for v in np.array(xs, dtype=dt).astype(np.float32)]
    if target == "bool":
        return [x != 0 for x in xs]
    lo, hi = (0, 255) if target == "byte" else (R.INT_MIN, R.INT_MAX)
    with np.errstate(over="ignore"):  # huge floats are inf in float32, as in copapy
        src = np.array(xs, dtype=np.float64).astype(np.float32) if source == "float" else \
            np.array(xs, dtype=np.int64).astype(np.int32)
    return [int(v) for v in R.saturating_cast(src, lo, hi)]


def _same(got: list[Any], want: list[Any], target: str, xs: list[Any]) -> list[str]:
    bad = []
    for x, g, w in zip(xs, got, want, strict=True):
        if target == "float":
            ok = type(g) is float and R.same_float(g, w)
        elif target == "bool":
            ok = type(g) is bool and g == w
        else:
            ok = type(g) is int and g == w
        if not ok:
            bad.append(f"{x!r} -> {g!r}, reference {w!r}")
    return bad


FN = {"float": cp.to_float, "int": cp.to_int, "bool": cp.to_bool, "byte": cp.to_bytes}


@pytest.mark.parametrize("source", list(SOURCES))
@pytest.mark.parametrize("target", TARGETS)
def test_values_cast_by_the_documented_rule(source: str, target: str) -> None:
    xs = SOURCES[source]
    by_name = [cp.cast(cp.value(x, source), target) for x in xs]
    by_function = [FN[target](cp.value(x, source)) for x in xs]
    tg = cp.Target()
    tg.compile(*by_name, *by_function)
    tg.run()
    want = reference(xs, source, target)
    for outs in (by_name, by_function):
        bad = _same([tg.read_value(o) for o in outs], want, "int" if target == "byte" else target, xs)
        assert not bad, R.describe_failures(bad)


@pytest.mark.parametrize("source", [*SOURCES, "byte"])
@pytest.mark.parametrize("target", TARGETS)
def test_arrays_cast_in_one_stencil(source: str, target: str) -> None:
    xs = BYTES if source == "byte" else SOURCES[source]
    a = cp.array(xs, source)
    out = cp.cast(a, target)
    assert isinstance(out, cp.array) and out.dtype == target and out.shape == a.shape
    tg = cp.Target()
    tg.compile(out)
    tg.run()
    stored = "int" if source == "byte" else source
    read_as = {"byte": "int"}.get(target, target)
    bad = _same(tg.read_value(out), reference(xs, stored, target), read_as, xs)
    assert not bad, R.describe_failures(bad)


def test_an_array_cast_is_one_stencil_whatever_the_length() -> None:
    sizes = []
    for n in (10, 1000):
        a = cp.array([float(k) - 0.5 for k in range(n)])
        tg = cp.Target()
        tg.compile(cp.to_int(a), cp.to_bytes(a))
        sizes.append(tg.stats()[1])
    assert sizes[0] == sizes[1]


def test_a_cast_to_the_same_type_is_the_operand_itself() -> None:
    v, a = cp.value(1.5), cp.array([1, 2, 3])
    assert cp.to_float(v) is v and cp.to_int(a) is a and cp.cast(a, int) is a


@pytest.mark.parametrize("n", [5, 100])
def test_vectors_and_tensors_cast_elementwise_packed_or_not(n: int) -> None:
    xs = [FLOATS[k % len(FLOATS)] * (1 + k // len(FLOATS)) for k in range(n)]
    vec = cp.vector([cp.value(x) for x in xs])
    ten = cp.tensor([cp.value(x) for x in xs], shape=(n // 5, 5))
    vi, vb, tq = cp.to_int(vec), cp.to_bytes(vec), cp.to_bool(ten)
    assert isinstance(vi, cp.vector) and isinstance(tq, cp.tensor) and tq.shape == ten.shape
    if n > _packing.PACK_THRESHOLD:  # one loop stencil through the container's array
        assert getattr(vi, "_arr", None) is not None and getattr(tq, "_arr", None) is not None
    tg = cp.Target()
    tg.compile(vi, vb, tq)
    tg.run()
    for out, target in ((vi, "int"), (vb, "byte"), (tq, "bool")):
        got = list(tg.read_value(out).values)
        bad = _same(got, reference(xs, "float", target), "int" if target == "byte" else target, xs)
        assert not bad, R.describe_failures(bad)


def test_plain_numbers_convert_while_tracing() -> None:
    assert cp.to_int(3.9) == 3 and cp.to_int(-3.9) == -3 and type(cp.to_int(2.0)) is int
    assert cp.to_float(3) == 3.0 and type(cp.to_float(3)) is float
    assert cp.to_bool(0.0) is False and cp.to_bool(math.nan) is True
    assert [cp.to_bytes(x) for x in (300, -5, 254.9, -0.5, math.nan, math.inf)] == [255, 0, 254, 0, 0, 255]
    mixed = cp.to_int(cp.vector([1.5, cp.value(2.5)]))
    assert mixed.values[0] == 1 and type(mixed.values[0]) is int
    assert isinstance(mixed.values[1], cp.value) and mixed.values[1].dtype == "int"


def test_bad_casts_say_what_to_use() -> None:
    with pytest.raises(ValueError, match="'float', 'int', 'bool' or 'byte'"):
        cp.cast(cp.value(1.0), "double")
    with pytest.raises(ValueError, match="cannot cast to"):
        cp.cast(1.0, str)
    with pytest.raises(TypeError, match="cannot cast a str"):
        cp.cast("1", "int")


def test_an_unknown_dtype_is_refused_for_numbers_and_values() -> None:
    # the core's cast of one element names the dtypes it takes, for a number as for a value
    for x in (2.5, cp.value(2.5)):
        with pytest.raises(ValueError, match="'float', 'int', 'bool' or 'byte'"):
            _core.nd_cast_leaf(x, "double")
