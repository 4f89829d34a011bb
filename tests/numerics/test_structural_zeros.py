"""Sums with structural zeros: the zero a folded `0 * x` or a constant zero entry leaves
behind is dropped from the sum (README, "x*0 → 0"), and the result is still NumPy's.

Reference: NumPy float32 in the same order of operations, dense (every zero product
added). With finite inputs the two agree exactly, up to the sign of a zero result (the one
documented difference); a non-zero result must have NumPy's bits. The compiled program
must also be smaller: as many additions as there are non-zero products beyond the first of
each sum (counted in the step count against the dense program's).
"""

from __future__ import annotations

import os
from typing import Any

import copapy as cp
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

F = np.float32
# a few compiles per example: fewer examples in the emulated passes
EXAMPLES = 10 if os.environ.get("COPAPY_TEST_TARGET") else 60
finite = st.floats(width=32, allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6)


def dense_reference(a: np.ndarray[Any, Any], x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """a @ x in float32, each row summed left to right from 0 with every product added."""
    out = np.zeros(a.shape[0], F)
    for i in range(a.shape[0]):
        s = F(0.0)
        for k in range(a.shape[1]):
            s = F(s + F(a[i, k] * x[k]))
        out[i] = s
    return out


def traced_rows(a: np.ndarray[Any, Any], xs: list[Any]) -> list[Any]:
    """The same sums traced the way user code writes them: `sum` of the row's products."""
    return [sum(float(a[i, k]) * xs[k] for k in range(a.shape[1])) for i in range(a.shape[0])]


def agrees(got: float, want: np.float32) -> bool:
    if want == 0:
        return got == 0
    return np.array(got, F).view(np.int32) == np.array(want, F).view(np.int32)


sparse_matrices = st.integers(1, 5).flatmap(lambda rows: st.integers(1, 6).flatmap(
    lambda cols: st.tuples(
        hnp.arrays(F, (rows, cols), elements=finite),
        hnp.arrays(np.bool_, (rows, cols)),
        hnp.arrays(F, cols, elements=finite))))


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(sparse_matrices)
def test_sparse_constant_matrix_times_vector_matches_numpy(case: Any) -> None:
    values, keep, x = case
    a = np.where(keep, values, F(0.0))
    xs = [cp.value(float(v)) for v in x]
    rows = traced_rows(a, xs)
    tg = cp.Target()
    tg.compile(rows)
    tg.run()
    got = tg.read_value(rows)
    want = dense_reference(a, x)
    bad = [(i, g, w) for i, (g, w) in enumerate(zip(got, want, strict=True)) if not agrees(g, w)]
    assert not bad, f"a={a.tolist()} x={x.tolist()}: rows (index, got, NumPy) {bad}"


@settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(sparse_matrices)
def test_products_with_a_folded_zero_leave_no_addition(case: Any) -> None:
    """`0 * x` folded, then added: the program computes only the non-zero products, so it is
    as large as the program of the same sums written without the zero terms."""
    values, keep, x = case
    a = np.where(keep, values, F(0.0))
    xs = [cp.value(float(v)) for v in x]
    with_zeros = cp.Target()
    with_zeros.compile(traced_rows(a, xs))
    zero = xs[0] * 0.0  # a traced constant: a row of zeros compiles to it in both programs
    nonzero_only = [sum((float(a[i, k]) * xs[k] for k in range(a.shape[1]) if a[i, k] != 0), zero)
                    for i in range(a.shape[0])]
    plain = cp.Target()
    plain.compile(nonzero_only)
    assert with_zeros.stats() == plain.stats()


def test_zero_terms_of_sums_with_signed_zeros_and_infinities() -> None:
    """The documented rule on edge values: `x + 0.0` is x itself (its own zero, -0.0 stays
    -0.0), `0.0 - x` is -x; for every other x both are IEEE's (NumPy)."""
    xs = [2.5, -2.5, 0.0, -0.0, 1e-45, float("inf"), float("-inf"), 3.4028235e38]
    vals = [cp.value(x) for x in xs]
    exprs = [(v + 0.0, F(x), F(x) + F(0.0)) for x, v in zip(xs, vals, strict=True)]
    exprs += [(0.0 - v, -F(x), F(0.0) - F(x)) for x, v in zip(xs, vals, strict=True)]
    tg = cp.Target()
    tg.compile([e for e, _, _ in exprs])
    tg.run()
    for (e, documented, ieee), got in zip(exprs, tg.read_value([e for e, _, _ in exprs]), strict=True):
        bits = np.array(got, F).view(np.int32)
        assert bits == np.array(documented, F).view(np.int32), (e, got, documented)
        if ieee != 0:
            assert bits == np.array(ieee, F).view(np.int32), (e, got, ieee)
