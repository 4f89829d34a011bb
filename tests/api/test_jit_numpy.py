"""@cp.jit with NumPy arguments: the per-call binding (bulk copy, the fast path through the
specialisation called last) and NumPy results, against NumPy float32/int32 references.

Arrays of more than 64 elements arrive as one ``cp.array`` (copied in bulk), smaller ones
as ``cp.vector``/``cp.matrix``; both are covered. Reductions follow the documented order
(``pairwise`` in test_vectors.py).
"""

from __future__ import annotations

from typing import Any

import copapy as cp
import numpy as np
import pytest
from helpers import pairwise

F32, I32 = np.float32, np.int32


def dot(a: Any, b: Any) -> Any:
    return a @ b


def axpy(a: Any, x: Any, y: Any) -> Any:
    return x * a + y


def f32_axpy(a: float, x: Any, y: Any) -> Any:
    return np.asarray(x).astype(F32) * F32(a) + np.asarray(y).astype(F32)


def test_arrays_mutated_between_calls_give_new_results() -> None:
    """The same array objects, changed in place: each call copies the current data."""
    f = cp.jit(dot)
    g = cp.jit(axpy)
    for n in (5, 600):  # a vector and a packed cp.array
        rng = np.random.default_rng(n)
        u = rng.standard_normal(n).astype(F32)
        v = rng.standard_normal(n).astype(F32)
        for _ in range(4):
            # vectors and packed arrays reduce in the same documented order
            assert f(u, v) == float(pairwise(u * v))
            out = g(1.5, u, v)
            assert isinstance(out, np.ndarray) and out.dtype == F32
            assert out.tolist() == f32_axpy(1.5, u, v).tolist()
            u[:] = rng.standard_normal(n)  # in place: same object, same signature
            v *= F32(-0.5)
    assert f.specialisations == 2 and g.specialisations == 2


def test_the_same_array_passed_twice() -> None:
    f = cp.jit(dot)
    g = cp.jit(axpy)
    for n in (7, 300):
        u = np.linspace(-3.0, 2.0, n, dtype=F32)
        for _ in range(2):
            assert f(u, u) == float(pairwise(u * u))
            assert g(2.0, u, u).tolist() == f32_axpy(2.0, u, u).tolist()
            u[0] += F32(1.0)


@pytest.mark.parametrize("n", [10, 200])
def test_alternating_dtypes_shapes_and_kinds_reuse_the_right_specialisation(n: int) -> None:
    """Calls alternate between signatures, so the last-called specialisation mismatches
    on dtype, byte order, shape, argument kind or count, and each result is still right."""
    traces: list[str] = []

    @cp.jit
    def twice_sum(v: Any) -> Any:
        traces.append(type(v).__name__)
        return v.sum() * 2 if hasattr(v, "sum") else sum(v) * 2

    base = np.arange(n) % 11 - 5
    calls = [base.astype("<f4"), base.astype(">f4"), base.astype("<f8"), base.astype("<i4"),
             base.astype(">i8"), base[: n // 2].astype("<f4"), [float(x) for x in base[:3]]]
    for _ in range(2):
        for arg in calls:
            got = twice_sum(arg)
            a = np.asarray(arg)
            if a.dtype.kind == "f":
                want = float(pairwise(a.astype(F32)) * F32(2))
            else:
                want = int(a.astype(I32).sum()) * 2
            assert got == want and type(got) is type(want)
    assert twice_sum.specialisations == len(calls)
    assert len(traces) == len(calls)  # the second round compiled nothing


def test_a_new_shape_or_dtype_compiles_a_new_specialisation_and_old_ones_stay() -> None:
    f = cp.jit(dot)
    u = np.arange(100, dtype=F32) / F32(7)
    assert f(u, u) == float(pairwise(u * u))
    w = u[:80].copy()
    assert f(w, w) == float(pairwise(w * w))
    d = u.astype(np.float64)
    assert f(d, d) == float(pairwise(u * u))  # float64 rounds to the same float32 numbers
    assert f.specialisations == 3
    assert f(u, u) == float(pairwise(u * u))
    with pytest.raises(ValueError, match="shape|match|align"):
        f(u, w)  # a mismatch inside the function is the function's error, as in NumPy


@pytest.mark.parametrize("layout", ["strided", "reversed", "fortran", "readonly", "byteswapped"])
def test_non_contiguous_read_only_and_byte_swapped_packed_arrays(layout: str) -> None:
    base = (np.arange(2 * 12 * 10, dtype=np.float64) % 13 - 6) / 4
    m = base.reshape(24, 10)
    arr = {"strided": m[::2], "reversed": m[::-2, ::-1], "fortran": np.asfortranarray(m[:12]),
           "readonly": m[:12].copy(), "byteswapped": m[:12].astype(">f8")}[layout]
    if layout == "readonly":
        arr.setflags(write=False)
    assert arr.shape == (12, 10) and arr.size > 64

    @cp.jit
    def f(x: Any) -> Any:
        return x * 3.0 - 1.0, x.sum()

    for _ in range(2):
        got, total = f(arr)
        want = arr.astype(F32) * F32(3) - F32(1)
        assert isinstance(got, np.ndarray) and got.dtype == F32 and got.shape == (12, 10)
        assert got.tolist() == want.tolist()
        assert total == float(pairwise(arr.astype(F32).ravel()))
        if layout != "readonly":
            arr[0, 0] = 5.0  # the next call sees it, whatever the layout
    assert f.specialisations == 1


def test_packed_int_and_bool_arrays_and_their_errors() -> None:
    @cp.jit
    def f(v: Any) -> Any:
        return v + 1

    small = np.arange(100, dtype=np.int64) - 50
    got = f(small)
    assert got.dtype == I32 and got.tolist() == (small.astype(I32) + I32(1)).tolist()
    big = small.copy()
    big[70] = 2**40
    with pytest.raises(OverflowError, match="int32"):
        f(big)
    assert f(small).tolist() == got.tolist()  # the failed call changed nothing

    @cp.jit
    def flip(b: Any) -> Any:
        return b == 0

    bools = np.arange(70) % 3 == 0
    out = flip(bools.astype(I32))
    assert out.dtype == np.bool_ and out.tolist() == (bools.astype(I32) == 0).tolist()


def test_zero_dimensional_arrays_and_numpy_scalars_are_numbers() -> None:
    @cp.jit
    def f(x: Any, y: Any) -> Any:
        return x * y + 1.0

    rows = [(np.float32(1.5), 2.0), (np.array(2.5), 4.0), (np.float64(0.1), 3.0),
            (np.array(F32(0.75)), np.float32(2.0)), (1.5, 2.0), (np.int16(3), 2.0)]
    for _ in range(2):
        for x, y in rows:
            got = f(x, y)
            want = F32(float(x)) * F32(float(y)) + F32(1)
            assert got == float(want) and isinstance(got, float)

    @cp.jit
    def g(x: Any) -> Any:
        return x + 1

    assert g(np.int32(4)) == 5 and g(np.array(7, dtype=np.int64)) == 8 and g(9) == 10
    assert g(np.bool_(True)) == 2 and g(True) == 2
    # a NumPy scalar without a buffer format copapy reads is still a number (its float)
    assert g(np.longdouble(0.5)) == 1.5
    with pytest.raises(TypeError, match="complex"):
        g(np.complex64(1 + 2j))


def test_numpy_arguments_give_numpy_results_of_any_size() -> None:
    """Vectors and matrices computed from NumPy arguments come back as NumPy arrays, small
    or large; from lists they stay lists (Copapy's read_value)."""

    @cp.jit
    def f(a: Any) -> Any:
        return a * 2.0

    for shape in [(3,), (64,), (65,), (2, 3), (9, 9)]:
        x = (np.arange(int(np.prod(shape))).reshape(shape) / 3).astype(np.float64)
        got = f(x)
        assert isinstance(got, np.ndarray) and got.dtype == F32 and got.shape == shape
        assert got.tolist() == (x.astype(F32) * F32(2)).tolist()

    @cp.jit
    def g(a: Any) -> Any:
        return cp.vector(a) * 2.0

    assert g([1.0, 2.5]) == [2.0, 5.0]
    got = g(np.array([1.0, 2.5]))
    assert isinstance(got, np.ndarray) and got.tolist() == [2.0, 5.0]

    @cp.jit
    def parts(a: Any, k: Any) -> Any:
        return a > 1.5, a * k, [a[0], a[1]], cp.vector([a[0], 7, True])

    x = np.array([1.0, 2.0, 3.0], dtype=F32)
    gt, ints, listed, mixed = parts(x, 2)
    assert gt.dtype == np.bool_ and gt.tolist() == (x > F32(1.5)).tolist()
    assert ints.dtype == F32 and ints.tolist() == (x * F32(2)).tolist()
    assert listed == [1.0, 2.0]  # a list the function built stays a list
    # a float, an int and a bool: NumPy's promotion of float32 with int32 is float64
    assert mixed.dtype == np.float64 and mixed.tolist() == [1.0, 7.0, 1.0]

    @cp.jit
    def count(a: Any) -> Any:
        return cp.vector([a[0] > 0.0, a[1] > 0.0]), cp.vector([a[0] > 0.0, 3])

    flags, ints2 = count(np.array([1.0, -1.0]))
    assert flags.dtype == np.bool_ and flags.tolist() == [True, False]
    assert ints2.dtype == I32 and ints2.tolist() == [1, 3]


def test_arrays_inside_lists_and_tuples() -> None:
    @cp.jit
    def f(pair: Any) -> Any:
        a, b = pair
        return a @ b

    u = np.linspace(0.0, 1.0, 90, dtype=F32)
    v = np.linspace(2.0, -1.0, 90, dtype=F32)
    assert f((u, v)) == float(pairwise(u * v))
    assert f([u, v]) == float(pairwise(u * v))
    assert f((v, u)) == float(pairwise(v * u))
    assert f.specialisations == 2  # a list and a tuple


def test_a_result_array_is_the_callers_own_copy() -> None:
    @cp.jit
    def f(a: Any) -> Any:
        return a + 1.0

    x = np.arange(100, dtype=F32)
    first = f(x)
    first[:] = -1.0  # writable, and not the program's memory
    second = f(x)
    assert second.tolist() == (x + F32(1)).tolist()
    assert first is not second and first.flags.writeable and first.flags.c_contiguous


def test_views_subclasses_and_equal_but_distinct_dtype_objects() -> None:
    """Packed arguments are read straight from the array when their dtype object is the
    traced one and their memory contiguous, else through the buffer protocol: views into
    a larger array, ndarray subclasses and a dtype equal to the traced one but another
    object (with metadata) must all give NumPy's result."""
    f = cp.jit(axpy)
    base = np.linspace(-4.0, 4.0, 300)  # float64
    other = np.dtype("f8", metadata={"unit": "m"})
    assert other == base.dtype and other is not base.dtype

    class Sub(np.ndarray):  # type: ignore[type-arg]
        pass

    y = np.full(100, 0.5)
    for x in [base[:100], base[7:107], base[200:], base[:100].astype(other),
              base[50:150].view(Sub), np.ascontiguousarray(base[::3][:100])]:
        assert x.shape == (100,) and x.dtype == np.float64
        for _ in range(2):
            got = f(-2.0, x, y)
            assert got.tolist() == f32_axpy(-2.0, x, y).tolist()
            base[:] *= -1.0  # views see it; the next call must too
    assert f.specialisations == 1


def test_an_object_that_claims_to_be_an_array_is_refused_clearly() -> None:
    """isinstance believes a __class__ that says ndarray; reading it as NumPy's struct
    would read foreign memory, so it must get the buffer protocol's clear error."""

    class Liar:
        @property  # type: ignore[misc]
        def __class__(self) -> type:
            return np.ndarray

    liar = Liar()
    assert isinstance(liar, np.ndarray)
    f = cp.jit(dot)
    u = np.arange(100, dtype=F32)
    assert f(u, u) == float(pairwise(u * u))
    for _ in range(2):
        with pytest.raises(TypeError, match="NumPy array|buffer"):
            f(liar, u)
    assert f(u, u) == float(pairwise(u * u))
