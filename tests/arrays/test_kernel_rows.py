"""Every structural array operation the front end may build (the rows of
``crates/copapy-compiler/src/array_kernels.rs``, listed for Python in
``copapy/_array_kernels.py``), through ``_core.array_kernel``: its result against NumPy, its
gradient (the row's adjoint rule) against central finite differences of the NumPy
reference, and bad operands or parameters refused with a message naming the operation.

A row added to the table without a case here fails ``test_every_row_has_a_case``, so the
declarative shape and adjoint rules are each checked once by an independent reference.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, get_args

import copapy as cp
import numpy as np
import pytest
from copapy import _core
from copapy._array_kernels import ArrayKernel, ScalarKernel
from helpers import F32, run
from hypothesis import given, settings
from hypothesis import strategies as st
from test_conv import ref_conv2d, ref_pool2d

ROWS = [*get_args(ScalarKernel), *get_args(ArrayKernel)]


@dataclass
class Case:
    """Float operands (differentiated), the runtime int operand if any (inserted at
    ``int_at``), the parameters, the result shape and the NumPy reference of the result
    from the float operands."""

    floats: list[np.ndarray[Any, Any]]
    params: list[int]
    shape: tuple[int, ...]
    ref: Callable[..., Any]
    index: int | None = None
    int_at: int = 1


def _data(shape: tuple[int, ...], seed: int) -> np.ndarray[Any, Any]:
    """Distinct float32 values (no ties, so extremes and sort orders are unique)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    return (rng.permutation(n) * 0.37 - n * 0.15 + rng.uniform(0, 0.1, n)).astype(F32).reshape(shape)


def _well_conditioned(n: int, seed: int) -> np.ndarray[Any, Any]:
    return (_data((n, n), seed) * 0.2 + np.eye(n, dtype=F32) * 3).astype(F32)


def _strided(x: Any) -> Any:
    # offset 1, dims (3, stride 4), (2, stride 1)
    return np.array([x[1 + 4 * a + b] for a in range(3) for b in range(2)])


def _gather(x: Any) -> Any:
    # runtime offset 9 clamped to [0, 6], then 3 elements of stride 2
    return np.array([x[6 + 2 * k] for k in range(3)])


def _narrow(x: Any) -> Any:
    # the tobyte rule: toward 0, clamped to 0..255, NaN 0
    return np.clip(np.trunc(np.nan_to_num(x, nan=0.0)), 0, 255).astype(np.int32)


CONV = [1, 2, 5, 5, 3, 3, 3, 3, 3, 2, 2, 1, 1, 1, 1]
POOL = [2, 5, 5, 2, 2, 3, 3, 2, 2, 1, 1]

CASES: dict[str, Case] = {
    "sum": Case([_data((6,), 1)], [], (), lambda x: x.sum()),
    "dot": Case([_data((6,), 2), _data((6,), 3)], [], (), lambda x, y: x @ y),
    "index": Case([_data((6,), 4)], [], (), lambda x: x[-2], index=-2),
    "strided": Case([_data((12,), 5)], [1, 3, 4, 2, 1], (6,), _strided),
    "matmul": Case([_data((2, 3), 6), _data((3, 4), 7)], [2, 3, 4], (2, 4), lambda a, b: a @ b),
    "min": Case([_data((7,), 8)], [], (), lambda x: x.min()),
    "max": Case([_data((7,), 9)], [], (), lambda x: x.max()),
    "sort": Case([_data((7,), 10)], [], (7,), lambda x: np.sort(x, kind="stable")),
    "argsort": Case([_data((7,), 11)], [], (7,), lambda x: np.argsort(x, kind="stable")),
    "rows_min": Case([_data((3, 4), 12)], [3, 4], (3,), lambda x: x.min(axis=1)),
    "rows_max": Case([_data((3, 4), 13)], [3, 4], (3,), lambda x: x.max(axis=1)),
    "gather": Case([_data((12,), 14)], [0, 6, 3, 2], (3,), _gather, index=9),
    "solve": Case([_well_conditioned(3, 15), _data((3, 2), 16)], [3, 2], (3, 2), np.linalg.solve),
    "det": Case([_well_conditioned(3, 17)], [3], (), np.linalg.det),
    "conv2d": Case([_data((1, 2, 5, 5), 18) * 0.1, _data((3, 2, 3, 3), 19) * 0.1, _data((3,), 20)],
                   CONV, (1, 3, 3, 3), lambda x, w, b: ref_conv2d(x, w, b, stride=2, padding=1)),
    "maxpool2d": Case([_data((2, 5, 5), 21)], POOL, (2, 3, 3),
                      lambda x: ref_pool2d(x, "max", 2, 2, 1)),
    "avgpool2d": Case([_data((2, 5, 5), 22)], POOL, (2, 3, 3),
                      lambda x: ref_pool2d(x, "avg", 2, 2, 1)),
    "narrow": Case([np.array([-3.5, 0.0, 0.9, 1.5, 254.9, 300.0, np.nan, 77.0], F32)], [], (8,), _narrow),
}

INT_RESULTS = ("argsort", "narrow")
"""Rows whose result is ints: no gradient flows through them."""


def _build(name: str, case: Case, xs: list[cp.array[Any]]) -> Any:
    """The row applied to the copapy arrays ``xs``: a value or a cp.array of the case's shape."""
    operands: list[Any] = [x.flatten()._cp_node for x in xs]
    if case.index is not None:
        operands.insert(case.int_at, cp.value(case.index))
    r = _core.array_kernel(name, operands, case.params)  # type: ignore[call-overload]
    return r if not case.shape else cp.array._of(r, case.shape)


def _finite_differences(f: Callable[..., float], args: list[Any], which: int) -> Any:
    """Central differences in float64; the step is large enough for float32 references
    (exact for the linear and quadratic rows, within the tolerance for the others)."""
    h = 1e-2
    base = [np.asarray(a, dtype=np.float64) for a in args]
    out = np.zeros_like(base[which])
    for k in np.ndindex(base[which].shape):
        up, down = [b.copy() for b in base], [b.copy() for b in base]
        up[which][k] += h
        down[which][k] -= h
        out[k] = (f(*up) - f(*down)) / (2 * h)
    return out


def test_every_row_has_a_case() -> None:
    assert sorted(CASES) == sorted(ROWS)


@pytest.mark.parametrize("name", sorted(CASES))
def test_result_matches_numpy(name: str) -> None:
    case = CASES[name]
    r = _build(name, case, [cp.array(x) for x in case.floats])
    got = np.asarray(run(r).read_value(r))
    want = case.ref(*case.floats)
    assert got.shape == np.shape(want)
    assert np.allclose(got, want, rtol=1e-4, atol=1e-4), f"\n got {got}\n want {want}"


@pytest.mark.parametrize("name", sorted(n for n in CASES if n not in INT_RESULTS))
def test_gradient_matches_finite_differences(name: str) -> None:
    case = CASES[name]
    xs = [cp.array(x) for x in case.floats]
    weights = _data(case.shape, 99) * 0.1 + 0.5
    r = _build(name, case, xs)
    loss = (r * cp.array(weights)).sum() if case.shape else r * float(weights)

    def f(*args: Any) -> float:
        return float((np.asarray(case.ref(*args), dtype=np.float64) * weights).sum())

    grads = cp.grad(loss, xs)
    tg = run(*grads)
    for k, g in enumerate(grads):
        got = np.asarray(tg.read_value(g), dtype=np.float64)
        want = _finite_differences(f, case.floats, k)
        assert np.allclose(got, want, rtol=3e-3, atol=3e-3), f"operand {k}\n got {got}\n want {want}"


def _floats(n: int) -> Any:
    return cp.array(np.arange(n, dtype=F32))._cp_node


@pytest.mark.parametrize(("name", "operands", "params", "message"), [
    ("matmul", [6, 6], [2, 3], "matmul takes 3 parameters, got 2"),
    ("matmul", [6, 5], [2, 3, 2], "matmul with parameters"),
    ("matmul", [6, 6], [2, -3, 2], "not a size"),
    ("rows_min", [6], [0, 6], "rows_min with parameters"),
    ("dot", [3, 4], [], "lengths must match"),
    ("dot", [3], [], "dot takes 2 operands"),
    ("sum", [3], [1], "sum takes 0 parameters"),
    ("det", [8], [3], "det with parameters"),
    ("solve", [9, 5], [3, 2], "solve with parameters"),
    ("take", [3, 3], [], "made by the compiler only"),
    ("scatter_add", [3, 3], [0, 0, 1, 1, 1, 3, 0, 0, 0, 1, 3], "made by the compiler only"),
    ("widen_b", [3], [], "made by the compiler only"),
    ("strided", [6], [], "offset"),
    ("strided", [6], [0, 3], "pairs"),
    ("strided", [6], [0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], "pairs"),
    ("strided", [6], [0, 0, 1], "at least one element"),
    ("strided", [6], [0, -2, 1], "at least one element"),
    ("strided", [6], [4, 3, 1], "would read elements 4..=6 of an array of 6"),
    ("strided", [6], [1, 3, -1], "would read elements -1..=1"),
    ("strided", [6], [0, 2, 1 << 40], "stride"),
    ("strided", [6], [1 << 40], "out of range"),
    ("gather", [6], [0, 2, 2, 1], "gather takes 2 operands"),
    ("narrow", [6], [1], "narrow takes 0 parameters"),
    ("conv2d", [50, 54, 3], [1, 2, 5, 5, 3, 3, 3, 3, 3, 2, 2, 1, 1], "conv2d takes 15 parameters"),
    ("conv2d", [50, 54, 3], [1, 2, 5, 5, 3, 3, 3, 4, 4, 2, 2, 1, 1, 1, 1], "gives no 4x4 output"),
    ("conv2d", [50, 54, 3], [1, 2, 5, 5, 3, 3, 3, 3, 3, 0, 2, 1, 1, 1, 1], "out of range"),
    ("conv2d", [50, 54, 2], CONV, "needs operand 2 of 3 elements, got 2"),
    ("maxpool2d", [50], [2, 5, 5, 2, 2, 3, 3, 2, 2, 2, 1], "at most half the kernel"),
    ("avgpool2d", [49], POOL, "needs operand 0 of 50 elements"),
    ("avgpool2d", [50], POOL[:10], "pool2d takes 11 parameters"),
    ("transpose", [3], [], "unknown array operation"),
])
def test_bad_operands_and_parameters_are_refused(name: str, operands: list[int], params: list[int],
                                                  message: str) -> None:
    with pytest.raises(TypeError, match=message):
        _core.array_kernel(name, [_floats(n) for n in operands], params)  # type: ignore[call-overload]


def test_bad_gathers_are_refused() -> None:
    i = cp.value(0)
    with pytest.raises(TypeError, match="offset range 3..=2 is empty"):
        _core.array_kernel("gather", [_floats(6), i], [3, 2, 2, 1])
    with pytest.raises(TypeError, match="would read elements 0..=6 of an array of 6"):
        _core.array_kernel("gather", [_floats(6), i], [0, 5, 2, 1])
    with pytest.raises(TypeError, match="1 to 4"):
        _core.array_kernel("gather", [_floats(6), i], [0, 2])
    with pytest.raises(TypeError, match="int or bool value"):
        _core.array_kernel("gather", [_floats(6), cp.value(1.5)], [0, 2, 2, 1])


def test_windows_need_float_arrays() -> None:
    ints = cp.array(np.arange(50, dtype=np.int32))._cp_node
    with pytest.raises(TypeError, match="float arrays"):
        _core.array_kernel("maxpool2d", [ints], POOL)
    with pytest.raises(TypeError, match="float arrays"):
        _core.array_kernel("conv2d", [ints, _floats(54), _floats(3)], CONV)


def test_narrow_stores_bytes_and_reads_them_back_widened() -> None:
    x = np.array([-1.0, 2.7, 255.5, 1000.0, 3.0], F32)
    node = _core.array_kernel("narrow", [cp.array(x)._cp_node], [])
    assert node.itemsize == 1
    b = cp.array._of(node, (5,), "byte")
    r = b + cp.array(np.arange(5, dtype=np.int32))
    got = np.asarray(run(r).read_value(r))
    assert np.array_equal(got, _narrow(x) + np.arange(5))


_EMULATED = bool(os.environ.get("COPAPY_TEST_TARGET"))


Walks = tuple[int, list[tuple[int, list[tuple[int, int]]]]]
"""An array length and walks of it: (offset, [(size, stride), ...])."""


@st.composite
def _walks(draw: st.DrawFn) -> Walks:
    """An array length and up to five walks of it (an offset and 0-4 (size, stride)
    dimensions), some reading outside it."""
    n = draw(st.integers(1, 30))
    dims = st.lists(st.tuples(st.integers(1, 4), st.integers(-7, 7)), max_size=4)
    walks = draw(st.lists(st.tuples(st.integers(-3, n + 2), dims), min_size=1, max_size=5))
    return n, walks


def _walk_indices(offset: int, dims: list[tuple[int, int]]) -> Any:
    """The flat indices a walk reads, in row-major order: NumPy's own walk over them."""
    idx = np.array(offset)
    for size, stride in dims:
        idx = idx[..., None] + np.arange(size) * stride
    return idx.reshape(-1)


@settings(max_examples=4 if _EMULATED else 12, deadline=None, derandomize=True)
@given(_walks())
def test_strided_walks_match_numpy_or_are_refused(case: Walks) -> None:
    n, walks = case
    x = _data((n,), n)
    node = cp.array(x)._cp_node
    built, wants = [], []
    for offset, dims in walks:
        idx = _walk_indices(offset, dims)
        params = [offset, *(v for d in dims for v in d)]
        if idx.min() < 0 or idx.max() >= n:
            with pytest.raises(TypeError, match="would read elements"):
                _core.array_kernel("strided", [node], params)
            continue
        built.append(cp.array._of(_core.array_kernel("strided", [node], params), (len(idx),)))
        wants.append(x[idx])
    if built:
        tg = run(*built)
        for r, want in zip(built, wants, strict=True):
            assert np.array_equal(np.asarray(tg.read_value(r)), want)


def test_an_index_operand_must_be_an_int_value() -> None:
    with pytest.raises(TypeError, match="int or bool value"):
        _core.array_kernel("index", [_floats(4), cp.value(1.5)], [])
    ints = cp.array(np.arange(4, dtype=np.int32))._cp_node
    with pytest.raises(TypeError, match="float arrays"):
        _core.array_kernel("det", [ints], [2])
