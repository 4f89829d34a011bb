"""The shapes of a repeated `@cp.jit` call that its fast path takes, and the calls around it.

A float32/int32 NumPy argument of the traced dtype object, shape and C order is checked
against what its specialisation worked out once (`ExactArray`, numpy_buffer.rs) and copied
as it is; a list or tuple of computed numbers in the result is read in one loop
(`Output::Numbers`, jit.rs), a result of such lists built in place. Each test calls the fast
path, then the forms it must not take (other dtype, shape, memory layout, type), then the
fast path again, and compares every result with NumPy float32 (or int32), never with
copapy; the errors of the general path must be raised unchanged, and a failed call must
leave the next call's result as it would be.
"""

from __future__ import annotations

import os
from typing import Any

import copapy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

f32 = np.float32
EXAMPLES = 10 if os.environ.get("COPAPY_TEST_TARGET") else 60
FLOATS32 = st.floats(width=32, allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6)


def bits(xs: Any) -> list[int]:
    """The float32 bit patterns of numbers (copapy's results or NumPy's)."""
    return [int(v) for v in np.asarray(xs, dtype=np.float32).reshape(-1).view(np.int32)]


def rows_and_total(m: Any, v: Any) -> Any:
    """A matrix times a vector as (list of row sums, (first row sum + v[0], count))."""
    out = []
    for i in range(len(m)):
        s = m[i][0] * v[0]
        for k in range(1, len(v)):
            s = s + m[i][k] * v[k]
        out.append(s)
    return out, (out[0] + v[0], len(out))


def reference(m: Any, v: Any) -> tuple[list[Any], Any]:
    m, v = np.asarray(m, np.float32), np.asarray(v, np.float32)
    out = []
    for i in range(m.shape[0]):
        s = m[i, 0] * v[0]
        for k in range(1, v.shape[0]):
            s = s + m[i, k] * v[k]
        out.append(s)
    return out, out[0] + v[0]


def check(fn: Any, m: Any, v: Any) -> None:
    got_rows, (got_first, count) = fn(m, v)
    want_rows, want_first = reference(m, v)
    # (a matrix's element comes back as a 0-d NumPy array, a list's as a float)
    assert type(got_rows) is list and len(got_rows) == len(want_rows)
    assert bits(got_rows) == bits(want_rows)
    assert bits(got_first) == bits(want_first)
    assert count == len(want_rows) and type(count) is int


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.integers(1, 4).flatmap(lambda n: st.tuples(
    hnp.arrays(np.float32, (n, 4), elements=FLOATS32), hnp.arrays(np.float32, 4, elements=FLOATS32))))
def test_matrix_and_vector_arguments_repeated_match_numpy(mv: tuple[Any, Any]) -> None:
    m, v = mv
    check(_ROWS, m, v)
    v[0] = f32(0.5)  # the same arrays changed in place: read again on the next call
    check(_ROWS, m, v)


_ROWS = cp.jit(rows_and_total)


def test_layouts_and_dtypes_between_fast_calls() -> None:
    fn = cp.jit(rows_and_total)
    m = np.arange(8, dtype=f32).reshape(2, 4) * f32(0.25)
    v = np.array([1.0, -2.0, 0.5, 3.0], f32)
    check(fn, m, v)
    wide = np.arange(16, dtype=f32).reshape(2, 8)
    column = np.arange(4, dtype=f32).reshape(4, 1)
    cases: list[tuple[Any, Any]] = [
        (np.asfortranarray(m), v),  # same shape, other memory order
        (wide[:, ::2], v),  # strided rows
        (m, wide[0, ::2]),  # strided vector
        (m[:1], v),  # one row: a view of the first
        (m, column[:, 0]),  # a vector viewed from a column (stride of 4 elements)
        (m.astype(np.float64), v),  # float64, rounded once to float32
        (m, v.astype(">f4")),  # byte-swapped
        (m.astype(np.int32), v),  # int32 matrix: its own specialisation
        (m.tolist(), v.tolist()),  # lists
        (tuple(map(tuple, m.tolist())), tuple(v.tolist())),  # tuples
    ]
    for mm, vv in cases:
        check(fn, mm, vv)
        check(fn, m, v)  # the fast path again after each


def test_errors_after_fast_calls_are_the_general_paths() -> None:
    fn = cp.jit(rows_and_total)
    m = np.ones((2, 4), f32)
    v = np.array([1.0, 2.0, 3.0, 4.0], f32)
    check(fn, m, v)
    with pytest.raises(TypeError, match="got a str"):
        fn(m, "abcd")
    check(fn, m, v)
    with pytest.raises(TypeError, match="1-D or 2-D NumPy arrays, got a 3-D array"):
        fn(m.reshape(2, 2, 2), v)
    check(fn, m, v)
    with pytest.raises(TypeError, match="positional arguments only"):
        fn(m, v=v)
    with pytest.raises(OverflowError, match="does not fit in int32"):
        int_fn = cp.jit(lambda a: a[0] + a[1])
        assert int_fn(np.array([1, 2], np.int32)) == 3
        int_fn(np.array([2**40, 1], np.int64))
    v2 = np.array([-1.0, 0.5, 0.25, 8.0], f32)
    check(fn, m, v2)  # a failed call left nothing behind


def test_result_forms_read_in_one_loop() -> None:
    @cp.jit
    def forms(a: Any, n: Any) -> Any:
        x, y = a[0] * 2.0, a[1] - a[0]
        return {"pair": [x, y], "mixed": (x, 1.5, n + 1, x > y), "nested": ([x], (y, x), []), "n": n * 3}

    def want(a: Any, n: int) -> dict[str, Any]:
        x, y = f32(a[0]) * f32(2.0), f32(a[1]) - f32(a[0])
        return {"pair": [x, y], "mixed": (x, 1.5, n + 1, bool(x > y)), "nested": ([x], (y, x), []),
                "n": n * 3}

    for a, n in [((0.25, 3.5), 2), ((-1.0, 0.1), -7), (np.array([3.0, 1.0], f32), 5)]:
        got, ref = forms(a, n), want(a, n)
        assert bits(got["pair"]) == bits(ref["pair"]) and type(got["pair"]) is list
        assert type(got["mixed"]) is tuple and bits(got["mixed"][0]) == bits(ref["mixed"][0])
        assert got["mixed"][1:] == ref["mixed"][1:]
        assert type(got["mixed"][2]) is int and type(got["mixed"][3]) is bool
        assert bits(got["nested"][0]) == bits(ref["nested"][0]) and type(got["nested"][1]) is tuple
        assert bits(got["nested"][1]) == bits(ref["nested"][1]) and got["nested"][2] == []
        assert got["n"] == ref["n"]


def scaled_pairs(a: Any, b: Any) -> Any:
    """Vectors of any length in, a tuple of floats and a list of floats out."""
    s = a[0] * b[0]
    for k in range(1, len(a)):
        s = s + a[k] * b[k]
    return s, [a[k] - b[k] for k in range(len(a))]


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.integers(2, 16).flatmap(lambda n: st.tuples(
    hnp.arrays(np.float32, n, elements=FLOATS32), hnp.arrays(np.float32, n, elements=FLOATS32))))
def test_vectors_of_2_to_16_repeated_match_numpy(ab: tuple[Any, Any]) -> None:
    a, b = ab
    for _ in range(2):
        dot, diff = _PAIRS(a, b)
        want = a[0] * b[0]
        for k in range(1, len(a)):
            want = want + a[k] * b[k]
        assert type(dot) is float and bits(dot) == bits(want)
        assert type(diff) is list and all(type(x) is float for x in diff)
        assert bits(diff) == bits(a - b)
        a = a[::-1].copy()


_PAIRS = cp.jit(scaled_pairs)
