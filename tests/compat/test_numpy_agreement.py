"""No silent misreading: where copapy takes NumPy's rules, it takes all of them.

Property tests (hypothesis) against NumPy itself or float32 references built from it:

* int means (``cp.array.mean`` with and without axes, ``tensor.mean``, ``filters.mean``,
  ``@cp.jit`` with NumPy arguments, packed and not) accumulate in float like NumPy's and never
  wrap: the reference is the float32 sum, in the documented order, of the terms rounded to
  float32, divided by the count; it is also within float32 summation error of ``np.mean``;
* empty means are NaN (with NumPy's RuntimeWarning), per axis too, in NumPy's shapes;
* ``reshape`` accepts exactly the specs NumPy accepts, with the same shape or error type;
* ``cp.zeros``/``ones``/``eye`` build NumPy's shapes and values, refuse what NumPy refuses,
  and share ``cp.array``'s size limit and message;
* vectors, tensors and arrays broadcast as NumPy does (a length-1 vector included);
* every NumPy dtype kind that is not a number (complex, datetime, timedelta, bytes, str,
  object, void) is refused with a TypeError naming the dtype by every entry point, which
  then has written nothing.
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Callable
from typing import Any

import copapy as cp
import numpy as np
import pytest
import refsem as R
from helpers import F32, ordered_sum
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

_EMULATED = bool(os.environ.get("COPAPY_TEST_TARGET"))
_FUZZ = os.environ.get("HYPOTHESIS_PROFILE") == "fuzz"


def _settings(native: int) -> settings:
    """``native`` examples here, an eighth in the emulator; ``HYPOTHESIS_PROFILE=fuzz``
    draws twenty times as many fresh ones."""
    n = native * 20 if _FUZZ else max(5, native // 8) if _EMULATED else native
    return settings(max_examples=n, deadline=None, derandomize=not _FUZZ,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def run(*xs: Any) -> cp.Target:
    tg = cp.Target()
    tg.compile(*xs)
    tg.run()
    return tg


def float_mean_ref(ints: list[int]) -> np.float32:
    """The mean as copapy defines it for int data: each term rounded to float32, summed in
    the documented order (tests/arrays/test_arrays.py), divided by the count in float32."""
    return F32(ordered_sum(np.array([R.f32(v) for v in ints], F32)) / F32(len(ints)))


def near_numpy(got: float, ints: list[int]) -> bool:
    """Within float32 summation error of NumPy's float64 mean: never wrapped."""
    m = float(np.mean(np.array(ints, np.int64)))
    bound = 2.0**-22 * float(np.abs(np.array(ints, np.float64)).sum()) / len(ints) + 2.0**-23 * abs(m)
    return abs(got - m) <= bound


# --- int means ---------------------------------------------------------------------------------


def test_the_mean_of_int32_extremes_is_numpys_rounded_to_float32() -> None:
    x = np.array([2**31 - 1] * 2, np.int32)
    a = cp.array(x)
    m, m0 = a.mean(), a.mean(axis=0)
    t = cp.tensor([cp.value(int(v)) for v in x]).mean()
    f = cp.filters.mean(cp.vector([cp.value(int(v)) for v in x]))
    tg = run(m, m0, t, f)
    want = np.float32(np.mean(x))  # 2147483647.0 rounded to float32: 2**31
    assert want == np.float32(2147483647.0) == 2.0**31
    assert [tg.read_value(v) for v in (m, t, f)] == [want] * 3
    assert tg.read_value(m0) == want


INTS = st.one_of(st.sampled_from([0, 1, -1, 7, 2**24 + 1, R.INT_MAX, R.INT_MIN, R.INT_MAX - 1, -(2**30)]),
                 st.integers(R.INT_MIN, R.INT_MAX))


@st.composite
def int_data(draw: st.DrawFn) -> tuple[str, list[int]]:
    dtype = draw(st.sampled_from(["int", "int", "bool", "byte"]))
    n = draw(st.sampled_from([1, 2, 3, 8, 9, 17, 65, 100]))
    if dtype == "bool":
        return dtype, draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    if dtype == "byte":
        return dtype, draw(st.lists(st.integers(0, 255), min_size=n, max_size=n))
    return dtype, draw(st.lists(INTS, min_size=n, max_size=n))


def _jit_mean(x: Any) -> Any:
    return cp.filters.mean(x)


_JIT_MEAN = cp.jit(_jit_mean)


@_settings(120)
@given(int_data(), st.sampled_from(["array", "array_axis", "tensor", "tensor_axis", "filters", "jit"]))
def test_int_means_accumulate_in_float_on_every_path(data: tuple[str, list[int]], path: str) -> None:
    dtype, ints = data
    np_dtype = {"int": np.int32, "bool": np.bool_, "byte": np.uint8}[dtype]
    host = np.array(ints).astype(np_dtype)
    if path == "jit":
        got = _JIT_MEAN(host)  # a vector of NumPy's data (packed above 64 elements)
    else:
        values = [cp.value(bool(v)) if dtype == "bool" else cp.value(int(v)) for v in ints]
        out = {
            "array": lambda: cp.array(host).mean() if dtype != "byte" else cp.array(ints, "byte").mean(),
            "array_axis": lambda: cp.array(host.tolist(), dtype).reshape(1, -1).mean(axis=1)[0],
            "tensor": lambda: cp.tensor(values).mean(),
            "tensor_axis": lambda: cp.tensor([values]).mean(axis=1)[0],
            "filters": lambda: cp.filters.mean(values),
        }[path]()
        if isinstance(out, cp.tensor):
            out = out.values[0]
        got = run(out).read_value(out)
    want = float_mean_ref(ints)
    assert R.same_float(got, want), (path, dtype, ints, got, want)
    assert near_numpy(got, ints), (got, np.mean(host))


def test_means_of_plain_ints_are_pythons_exact_ones() -> None:
    assert cp.tensor([2**31 - 1, 2**31 - 1]).mean() == 2147483647.0
    assert cp.filters.mean([2**40, 1]) == np.mean([2**40, 1])


# --- empty means -------------------------------------------------------------------------------


@_settings(80)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=3).filter(lambda s: 0 in s), st.data())
def test_empty_means_are_nan_as_numpy(shape: list[int], d: st.DataObject) -> None:
    ndim = len(shape)
    axis = d.draw(st.one_of(st.none(), st.integers(-ndim, ndim - 1)))
    ref_x = np.zeros(shape, np.float32)
    with warnings.catch_warnings(record=True) as np_warned:
        warnings.simplefilter("always")
        want = np.mean(ref_x, axis=axis)
    with warnings.catch_warnings(record=True) as cp_warned:
        warnings.simplefilter("always")
        got = cp.zeros(tuple(shape)).mean(axis=axis)
    empty_slices = any("Mean of empty slice" in str(w.message) for w in np_warned)
    assert empty_slices == any("Mean of empty slice" in str(w.message) for w in cp_warned)
    if np.ndim(want) == 0:  # every axis reduced: a scalar, as NumPy's (and Copapy's sums)
        assert math.isnan(got)
        return
    assert got.shape == want.shape
    assert all(math.isnan(v) for v in got.values) == bool(np.all(np.isnan(want)))


def test_an_empty_filters_mean_is_nan_with_numpys_warning() -> None:
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        assert math.isnan(cp.filters.mean([]))
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        assert math.isnan(cp.zeros((0, 3)).mean())


# --- reshape -----------------------------------------------------------------------------------


def outcome(f: Callable[[], Any]) -> Any:
    """The shape a reshape gives, or the kind of error it raises."""
    try:
        return tuple(f().shape)
    except (ValueError, TypeError) as e:
        return type(e)


def within_limit(shape: Any) -> Any:
    """NumPy's outcome with copapy's one size limit (``cp.array``'s 2**26 elements) on top:
    a shape whose non-zero dimensions multiply beyond it is a ValueError, as NumPy's
    "array is too big" is beyond its address space."""
    if isinstance(shape, tuple) and math.prod(d for d in shape if d) > 2**26:
        return ValueError
    return shape


SPEC_DIM = st.one_of(st.integers(-3, 7), st.sampled_from([-1, -1, 0, 1, 2**40, -(2**40)]))
SPECS = st.one_of(
    st.lists(SPEC_DIM, min_size=1, max_size=4).map(tuple),  # reshape(a, b, ...)
    st.lists(SPEC_DIM, min_size=0, max_size=4).map(lambda s: (tuple(s),)),  # reshape((a, b))
    st.lists(SPEC_DIM, min_size=1, max_size=3).map(lambda s: (list(s),)),  # reshape([a, b])
    st.sampled_from([(2.0,), (True, 3), ((2, 3), 1), ("6",), ((2.5,),)]),
)
SHAPES = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


@_settings(400)
@given(SHAPES, SPECS)
def test_array_reshape_accepts_what_numpy_accepts(shape: tuple[int, ...], spec: tuple[Any, ...]) -> None:
    ref = np.zeros(shape, np.float32)
    want = outcome(lambda: ref.reshape(*spec))
    if want == ():  # a 0-d result: a cp.array always has a dimension (use a[0] for a scalar)
        want = ValueError
    a = cp.array(ref)
    got = outcome(lambda: a.reshape(*spec))
    assert got == want, (shape, spec, got, want)


@_settings(400)
@given(st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple), SPECS)
def test_tensor_reshape_accepts_what_numpy_accepts(shape: tuple[int, ...], spec: tuple[Any, ...]) -> None:
    ref = np.zeros(shape)
    want = within_limit(outcome(lambda: ref.reshape(*spec)))
    t = cp.tensor(ref.tolist()) if shape else cp.tensor(0.0)
    if t.shape != shape:  # cp.tensor of nested lists with a zero dimension: build it by reshape
        t = cp.zeros(shape)
    got = outcome(lambda: t.reshape(*spec))
    assert got == want, (shape, spec, got, want)


def test_reshape_names_the_problem() -> None:
    a = cp.array(np.arange(6.0, dtype=np.float32))
    with pytest.raises(ValueError, match="can only specify one unknown dimension"):
        a.reshape(-2, -3)
    with pytest.raises(ValueError, match=r"cannot reshape an array of size 6 into shape \(4, -1\)"):
        a.reshape(4, -1)
    with pytest.raises(TypeError, match="not a bool"):
        a.reshape(True, 6)
    assert a.reshape(-2, 3).shape == (2, 3) == np.zeros(6).reshape(-2, 3).shape


# --- zeros, ones, eye ----------------------------------------------------------------------------


SHAPE_ARGS = st.one_of(
    st.integers(-2, 5),
    st.lists(st.one_of(st.integers(-1, 4), st.sampled_from([2**30, 2**40])), max_size=3).map(tuple),
    st.lists(st.integers(0, 3), min_size=1, max_size=2),
    st.sampled_from([2.0, True, (2, 1.5), np.int64(3), (np.int32(2), 2), "3"]),
)


@_settings(200)
@given(SHAPE_ARGS, st.sampled_from(["zeros", "ones"]))
def test_zeros_and_ones_take_numpys_shapes(shape: Any, which: str) -> None:
    dims = shape if isinstance(shape, (tuple, list)) else (shape,)
    if all(type(d) is int and d >= 0 for d in dims) and within_limit(tuple(dims)) is ValueError:
        with pytest.raises(ValueError, match="too large"):  # NumPy would allocate it
            getattr(cp, which)(shape)
        return
    try:
        want = getattr(np, which)(shape, np.int32)
    except (ValueError, TypeError) as e:
        with pytest.raises(type(e)):
            getattr(cp, which)(shape)
        return
    got = getattr(cp, which)(shape)
    assert got.shape == want.shape and list(got.values) == want.reshape(-1).tolist()


@_settings(100)
@given(st.one_of(st.integers(-1, 5), st.sampled_from([2.0, True, np.int64(2)])),
       st.one_of(st.none(), st.integers(-1, 5)))
def test_eye_takes_numpys_arguments(rows: Any, cols: Any) -> None:
    try:
        want = np.eye(rows, cols, dtype=np.int32)
    except (ValueError, TypeError) as e:
        with pytest.raises(type(e)):
            cp.eye(rows, cols)
        return
    got = cp.eye(rows, cols)
    assert got.shape == want.shape and list(got.values) == want.reshape(-1).tolist()


NUMBER = st.one_of(st.integers(-20, 20), st.floats(-20, 20, allow_nan=False, width=32))


@_settings(200)
@given(NUMBER, st.one_of(st.none(), NUMBER), st.one_of(st.integers(-5, 5), st.floats(-4, 4, width=32)))
def test_arange_has_numpys_length_and_adds_the_step(start: Any, stop: Any, step: Any) -> None:
    # NumPy's count (ceil((stop - start) / step)); each element the previous plus the step (Copapy)
    args = (start,) if stop is None else (start, stop, step)
    try:
        want = np.arange(*args)
    except (ValueError, ZeroDivisionError):
        with pytest.raises(ValueError):
            cp.arange(*args)
        return
    got = cp.arange(*args)
    first, inc = (0, 1) if stop is None else (start, step)
    expected = [first]
    while len(expected) < want.size:
        expected.append(expected[-1] + inc)
    assert got.shape == want.shape and list(got.values) == expected[:want.size]


@_settings(100)
@given(st.lists(st.one_of(st.integers(-9, 9), st.floats(-9, 9, width=32)), max_size=6))
def test_diagonal_is_numpys_diag(vals: list[Any]) -> None:
    got = cp.diagonal(vals)
    want = np.diag(np.array(vals, dtype=object)) if vals else np.zeros((0, 0), dtype=object)
    assert got.shape == want.shape and list(got.values) == want.reshape(-1).tolist()


@pytest.mark.parametrize("make", [
    lambda: cp.zeros((30000, 30000)), lambda: cp.zeros((10**5,) * 2), lambda: cp.ones(2**26 + 1),
    lambda: cp.eye(2**13 + 1), lambda: cp.zeros((2**40, 2**40)),
])
def test_zeros_beyond_the_array_limit_are_refused_before_anything_is_built(make: Callable[[], Any]) -> None:
    with pytest.raises(ValueError, match=r"an array of \d+ elements is too large \(at most 67108864\)"):
        make()


def test_cp_array_has_the_same_limit_and_message() -> None:
    with pytest.raises(ValueError, match=r"an array of 67108865 elements is too large \(at most 67108864\)"):
        cp.array(np.zeros(2**26 + 1, np.float32))


# --- broadcasting --------------------------------------------------------------------------------


@st.composite
def broadcast_pair(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Two shapes that broadcast, or (sometimes) not."""
    nd = draw(st.integers(1, 3))
    a = draw(st.lists(st.integers(1, 4), min_size=nd, max_size=nd))
    b = [draw(st.sampled_from([d, 1, d, draw(st.integers(1, 4))])) for d in a]
    b = b[draw(st.integers(0, nd - 1)):]
    pair = (tuple(a), tuple(b))
    return pair if draw(st.booleans()) else (pair[1], pair[0])


KINDS = ["vector", "tensor", "array"]
OPS: dict[str, Callable[[Any, Any], Any]] = {
    "+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y, "<": lambda x, y: x < y,
}


def build(kind: str, shape: tuple[int, ...], flat: list[float]) -> Any:
    if kind == "vector":
        return cp.vector([cp.value(v) for v in flat])
    if kind == "tensor":
        return cp.tensor([cp.value(v) for v in flat]).reshape(shape)
    return cp.array(np.array(flat, np.float32).reshape(shape))


def flat_of(tg: cp.Target, out: Any) -> list[float]:
    if isinstance(out, cp.array):
        return list(np.array(tg.read_value(out), np.float32).reshape(-1))
    return [tg.read_value(v) for v in out.values]


@_settings(250)
@given(broadcast_pair(), st.sampled_from(KINDS), st.sampled_from(KINDS), st.sampled_from(list(OPS)),
       st.data())
def test_vectors_tensors_and_arrays_broadcast_as_numpy(shapes: tuple[tuple[int, ...], tuple[int, ...]],
                                                       ka: str, kb: str, op: str, d: st.DataObject) -> None:
    sa, sb = shapes
    if ka == "vector":
        sa = sa[-1:]
    if kb == "vector":
        sb = sb[-1:]
    fa = d.draw(st.lists(st.integers(-9, 9).map(float), min_size=int(np.prod(sa)), max_size=int(np.prod(sa))))
    fb = d.draw(st.lists(st.integers(-9, 9).map(float), min_size=int(np.prod(sb)), max_size=int(np.prod(sb))))
    ra, rb = np.array(fa, np.float32).reshape(sa), np.array(fb, np.float32).reshape(sb)
    fn = OPS[op]
    try:
        want = fn(ra, rb)
    except ValueError:
        with pytest.raises(ValueError):
            fn(build(ka, sa, fa), build(kb, sb, fb))
        return
    out = fn(build(ka, sa, fa), build(kb, sb, fb))
    assert tuple(out.shape) == want.shape, (ka, sa, kb, sb, out.shape, want.shape)
    tg = cp.Target()
    tg.compile(out)
    tg.run()
    assert flat_of(tg, out) == want.reshape(-1).tolist()


def test_a_length_one_vector_broadcasts_like_a_tensor() -> None:
    v = cp.vector([cp.value(1.0)]) + cp.vector([1.0, 2.0, 3.0])
    t = cp.tensor([1.0]) + cp.tensor([1.0, 2.0, 3.0])
    assert isinstance(v, cp.vector) and v.shape == t.shape == (3,)
    tg = run(*v.values)
    assert [tg.read_value(x) for x in v.values] == list(t.values) == [2.0, 3.0, 4.0]
    w = cp.vector([5.0, 6.0]) - cp.vector([cp.value(1.0)])
    tg = run(*w.values)
    assert [tg.read_value(x) for x in w.values] == [4.0, 5.0]
    with pytest.raises(ValueError, match=r"cannot add vectors of shapes \(2,\) and \(3,\)"):
        cp.vector([1.0, 2.0]) + cp.vector([1.0, 2.0, 3.0])


# --- dtypes ----------------------------------------------------------------------------------------


DTYPES = [np.dtype(c) for c in "?bhilqnpBHILQNPefdgFDG"] + [
    np.dtype(x) for x in ("S3", "U3", "V4", "O", "M8[D]", "M8[ns]", "m8[s]", "m8[us]")
] + [np.dtype([("a", "<f4"), ("b", "<i4")])]


def test_the_dtype_list_covers_every_kind() -> None:
    assert {d.kind for d in DTYPES} == set("biufcSUVOMm") == {np.dtype(c).kind for c in np.typecodes["All"]}


def is_number(dt: np.dtype[Any]) -> bool:
    return dt.kind in "biuf"


def entry_points() -> list[tuple[str, Callable[[np.dtype[Any]], Any]]]:
    """Every way NumPy data gets into copapy, each with fresh targets."""
    x = cp.value(7.0)
    v = cp.vector([cp.value(7.0), cp.value(7.0)])
    t = cp.tensor([[cp.value(7.0)] * 2] * 2)
    a = cp.array(np.full(2, 7.0, np.float32))
    n = cp.value(7.0, name="n")
    tg = cp.Target()
    tg.compile(x, v, t, a, n)

    def snapshot() -> list[Any]:
        return [tg.read_value(e) for e in (x, *v.values, *t.values, n)] + [tg.read_value(a)]

    before = snapshot()

    def unchanged() -> None:
        assert snapshot() == before, "a refused write changed something"

    def write(var: Any, shape: tuple[int, ...]) -> Callable[[np.dtype[Any]], Any]:
        def go(dt: np.dtype[Any]) -> Any:
            data = np.zeros(shape, dt)  # a 0-d array for a scalar: its one number
            try:
                return tg.write_value(var, data)
            finally:
                if not is_number(dt):
                    unchanged()
        return go

    jitted = cp.jit(lambda arr: arr * 2)
    return [
        ("write_value scalar", write(x, ())),
        ("write_value list", write([x], (1,))),
        ("write_value vector", write(v, (2,))),
        ("write_value tensor", write(t, (2, 2))),
        ("write_value array", write(a, (2,))),
        ("write_value by name", write("n", ())),
        ("cp.value", lambda dt: cp.value(np.zeros(1, dt)[0])),
        ("cp.vector", lambda dt: cp.vector(np.zeros(2, dt))),
        ("cp.tensor", lambda dt: cp.tensor(np.zeros((2, 2), dt))),
        ("cp.array", lambda dt: cp.array(np.zeros(2, dt))),
        ("cp.array nested", lambda dt: cp.array([np.zeros(2, dt)])),
        ("operand", lambda dt: cp.vector([cp.value(1.0)]) + np.zeros(1, dt)[0]),
        ("jit scalar", lambda dt: jitted(np.zeros(1, dt)[0])),
        ("jit array", lambda dt: jitted(np.zeros(3, dt))),
        ("jit packed", lambda dt: jitted(np.zeros(100, dt))),
    ]


@pytest.mark.parametrize("dt", DTYPES, ids=str)
def test_every_entry_point_refuses_dtypes_that_are_not_numbers(dt: np.dtype[Any]) -> None:
    element = np.zeros(1, dt)[0]  # what the scalar entry points get
    for where, go in entry_points():
        plain = not hasattr(element, "dtype")  # an object array's element is a Python int
        wide_float = dt.kind == "f" and dt.itemsize > 8
        if wide_float and where.startswith("jit ") and where != "jit scalar":
            # @cp.jit reads NumPy's memory itself: a longdouble array is refused by name
            with pytest.raises(TypeError, match=f"dtype {dt}"):
                go(dt)
        elif is_number(dt) or (plain and where in ("cp.value", "operand", "jit scalar")):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                go(dt)
        else:
            with pytest.raises(TypeError) as e:
                go(dt)
            names = (f"dtype {dt}", f"dtype {getattr(element, 'dtype', dt)}")
            assert any(n in str(e.value) for n in names), (where, str(e.value))


def test_the_readme_claim_complex_is_refused_holds_for_write_value() -> None:
    a = cp.array(np.zeros(2, np.float32))
    tg = cp.Target()
    tg.compile(a)
    with pytest.raises(TypeError, match="dtype complex128: copapy has no complex numbers"):
        tg.write_value(a, np.array([1 + 2j, 3.0]))
    assert tg.read_value(a) == [0.0, 0.0]
