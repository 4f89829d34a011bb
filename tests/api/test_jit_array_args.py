"""Small NumPy array arguments of `@cp.jit` are placed in one piece of data memory.

A specialisation compiles, beside its results, one gathered array per NumPy array argument
of 2 to 64 elements, so the compiler places the array's input values one after another and a
call copies the argument in one piece (`gather_arrays`, crates/copapy-python/src/jit.rs).
What must hold: every element the function reads arrives, whatever the dtype (each accepted
kind), shape (1-D, 2-D), the elements read (all, some, none, out of order, repeated) and
where the array sits (alone, in a list or tuple, next to scalars); arrays of other layouts
(strided, Fortran order, byte-swapped, subclasses) still bind. Every result is compared with
NumPy (float32 / int32 / bool arithmetic), never with copapy.
"""

from __future__ import annotations

from typing import Any

import copapy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

f32 = np.float32


def bits(xs: Any) -> list[int]:
    """The float32 bit patterns of numbers (copapy's results or NumPy's), flattened."""
    return [int(v) for v in np.asarray(xs, dtype=np.float32).reshape(-1).view(np.int32)]


def picked(a: Any, b: Any, s: Any) -> Any:
    """Reads some elements of `a` out of order and twice, all of `b`, none of a third."""
    total = b[0]
    for k in range(1, len(b)):
        total = total + b[k]
    return [a[3] * s, a[0] - a[3], a[1] + total], total


def picked_reference(a: Any, b: Any, s: Any) -> Any:
    a, b = np.asarray(a, f32).reshape(-1), np.asarray(b, f32).reshape(-1)
    s = f32(s)
    total = b[0]
    for k in range(1, len(b)):
        total = total + b[k]
    return [a[3] * s, a[0] - a[3], a[1] + total], total


def check_picked(fn: Any, a: Any, b: Any, s: Any) -> None:
    got_list, got_total = fn(a, b, s)
    want_list, want_total = picked_reference(a, b, s)
    assert type(got_list) is list and bits(got_list) == bits(want_list)
    assert bits(got_total) == bits(want_total)


FLOATS32 = st.floats(width=32, allow_nan=False, allow_infinity=False, min_value=-1e4, max_value=1e4)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 16).flatmap(lambda n: st.tuples(
    hnp.arrays(np.float32, 6, elements=FLOATS32), hnp.arrays(np.float32, n, elements=FLOATS32),
    FLOATS32)))
def test_partly_read_float32_vectors_match_numpy(abs_: tuple[Any, Any, float]) -> None:
    a, b, s = abs_
    for _ in range(2):  # the first call compiles, the second takes the planned path
        check_picked(_PICKED, a, b, s)
    a[3], b[-1] = f32(0.5), f32(-2.0)  # changed in place: read again
    check_picked(_PICKED, a, b, s)


_PICKED = cp.jit(picked)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int8", "int16", "int32",
                                   "int64", "uint8", "uint16", "uint32", "uint64", ">f4", ">i4"])
def test_every_accepted_dtype_arrives_whole(dtype: str) -> None:
    @cp.jit
    def first_last(v: Any) -> Any:
        return v[0] + v[len(v) - 1], v[1] * v[2], v[len(v) - 1]

    v = np.array([3, 1, 4, 1, 5, 9, 2, 6], dtype=dtype)
    for _ in range(2):
        got = first_last(v)
        if np.dtype(dtype).kind == "f":
            w = v.astype(f32)
            assert bits(got) == bits([w[0] + w[-1], w[1] * w[2], w[-1]])
        else:
            w32 = v.astype(np.int32)
            assert list(got) == [int(w32[0] + w32[-1]), int(w32[1] * w32[2]), int(w32[-1])]
            assert all(type(x) is int for x in got)
        v = v[::-1].copy()


def test_bool_and_int_arrays_beside_floats_in_a_list() -> None:
    @cp.jit
    def choose(parts: Any, x: Any) -> Any:
        flags, counts = parts
        return [cp.iif(flags[0], x[0], x[1]), cp.iif(flags[1], x[1], x[0]), counts[0] + counts[2],
                flags[2]]

    x = np.array([1.5, -2.25], f32)
    for flags in ([True, False, True], [False, True, False]):
        f = np.array(flags)
        c = np.array([7, -3, 11], np.int32)
        got = choose([f, c], x)
        assert bits(got[:2]) == bits([x[0] if flags[0] else x[1], x[1] if flags[1] else x[0]])
        assert got[2] == 18 and type(got[2]) is int and got[3] is flags[2]


def test_matrices_and_layouts_other_than_the_traced_one() -> None:
    @cp.jit
    def trace_and_corner(m: Any) -> Any:
        return m[0][0] + m[1][1] + m[2][2], m[2][0] * m[0][2]

    def want(m: Any) -> list[Any]:
        m = np.asarray(m, f32)
        return [m[0, 0] + m[1, 1] + m[2, 2], m[2, 0] * m[0, 2]]

    m = (np.arange(9, dtype=f32).reshape(3, 3) - f32(4.0)) * f32(0.75)
    big = np.arange(36, dtype=f32).reshape(6, 6) * f32(0.5)

    class Sub(np.ndarray):
        pass

    for arg in [m, np.asfortranarray(m), big[::2, ::2], m.astype(">f4"), m.view(Sub), m.T, m]:
        assert bits(trace_and_corner(arg)) == bits(want(arg))


def test_an_array_of_one_element_and_an_unread_array() -> None:
    @cp.jit
    def scaled(one: Any, unread: Any, v: Any) -> Any:
        return [one[0] * v[0], one[0] * v[1]]

    one, v = np.array([2.5], f32), np.array([1.0, -4.0], f32)
    for unread in (np.zeros(5, f32), np.ones(5, f32)):
        assert bits(scaled(one, unread, v)) == bits([one[0] * v[0], one[0] * v[1]])


def test_wrong_argument_counts_and_keywords_are_clear_errors() -> None:
    fn: Any = cp.jit(picked)
    a, b = np.arange(6, dtype=f32), np.arange(3, dtype=f32)
    check_picked(fn, a, b, 2.0)
    with pytest.raises(TypeError, match="positional arguments only"):
        fn(a, b, s=2.0)
    with pytest.raises(TypeError, match="argument"):
        fn(a, b)  # the function itself takes three: Python's own error while tracing
    check_picked(fn, a, b, 0.5)  # nothing left behind


@pytest.mark.parametrize("order", ["same", "reversed", "part"])
def test_arrays_the_function_packs_itself(order: str) -> None:
    # the function's own array holds the argument's inputs: they stay where it put them
    @cp.jit
    def doubled(x: Any, y: Any) -> Any:
        picked = {"same": [x[k] for k in range(8)], "reversed": [x[k] for k in range(7, -1, -1)],
                  "part": [x[1], x[5], x[2]]}[order]
        v = cp.vector(picked, packed=True) * 2.0
        return [v[k] for k in range(len(picked))], y[0] * y[1]

    def want(x: Any, y: Any) -> Any:
        x, y = np.asarray(x, f32), np.asarray(y, f32)
        picked = {"same": x, "reversed": x[::-1], "part": x[[1, 5, 2]]}[order]
        return list(picked * f32(2.0)), y[0] * y[1]

    y = np.array([1.5, -3.0], f32)
    for x in (np.arange(8, dtype=f32) - f32(2.5), np.linspace(-1, 1, 8, dtype=f32)):
        for _ in range(2):
            got, prod = doubled(x, y)
            ref, ref_prod = want(x, y)
            assert bits(got) == bits(ref) and bits(prod) == bits(ref_prod)
