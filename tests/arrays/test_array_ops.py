"""cp.array sorting, reductions over axes, runtime sub-arrays and gradients, against NumPy.

* ``sort``/``argsort`` against ``np.sort``/``np.argsort(kind='stable')`` bit for bit
  (ties, NaN, +-0.0, +-inf; every size from 1 to 70; int and float).
* ``sum``/``mean``/``min``/``max`` over an int or a tuple of axes against NumPy float32 in
  the documented order (terms of each result in row-major order of the reduced axes, 8
  interleaved partials combined pairwise), reproduced here independently.
* Runtime indices in every position of arrays, tensors and vectors against NumPy indexing
  with the documented rule applied first (wrap once if negative, then clamp).
* ``cp.grad`` through matmul, min/max, strided copies, gathers and reductions over axes
  against central finite differences in float64 (and the first-extreme rule on ties).

scripts/test.sh runs this module on every target (COPAPY_TEST_TARGET).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import copapy as cp
import numpy as np
import pytest
from helpers import F32, run


def _bits(xs: Any) -> list[int]:
    """float32 bit patterns, every NaN the same (its sign and payload are unspecified)."""
    a = np.asarray(xs, dtype=F32)
    out = a.view(np.uint32).astype(np.int64)
    out[np.isnan(a)] = 0x7FC00000
    return [int(x) for x in out]


# --- sort / argsort -----------------------------------------------------------------------

SPECIAL = [np.nan, 0.0, -0.0, np.inf, -np.inf, 1.0, -1.0, 1.0, 0.0, -0.0, np.nan, 2.5]


def _float_data(n: int, rng: np.random.Generator) -> np.ndarray:
    # few distinct values, so ties are common; specials at random places
    xs = rng.integers(-4, 5, n).astype(F32) * F32(0.75)
    for k in rng.choice(n, size=min(n, n // 3 + 1), replace=False):
        xs[k] = SPECIAL[int(rng.integers(len(SPECIAL)))]
    return xs


def _int_data(n: int, rng: np.random.Generator) -> np.ndarray:
    xs = rng.integers(-3, 4, n).astype(np.int32)
    edges = [2**31 - 1, -(2**31), 0, -1]
    for k in rng.choice(n, size=min(n, 2), replace=False):
        xs[k] = edges[int(rng.integers(len(edges)))]
    return xs


@pytest.mark.parametrize("dtype", ["float", "int"])
def test_sort_and_argsort_match_numpy_stable(dtype: str) -> None:
    rng = np.random.default_rng(11 if dtype == "float" else 12)
    make = _float_data if dtype == "float" else _int_data
    sizes = list(range(1, 71))
    inputs = [cp.array(make(n, rng), dtype) for n in sizes]
    sorted_ = [cp.sort(a) for a in inputs]
    orders = [cp.argsort(a) for a in inputs]
    assert all(isinstance(s, cp.array) and s.dtype == dtype for s in sorted_)
    assert all(isinstance(o, cp.array) and o.dtype == "int" for o in orders)
    tg = run(*sorted_, *orders)
    for _ in range(2):  # the compiled network again on new data
        data = [make(n, rng) for n in sizes]
        for a, x in zip(inputs, data, strict=True):
            tg.write_value(a, x)
        tg.run()
        for n, x, s, o in zip(sizes, data, sorted_, orders, strict=True):
            want_order = np.argsort(x, kind="stable")
            assert tg.read_value(o) == want_order.tolist(), (n, x)
            got = tg.read_value(s)
            want = np.sort(x, kind="stable")
            if dtype == "float":
                # -0.0 and +0.0 are equal keys: they keep their input order, as NumPy's
                # stable sort does, so the bits match too
                assert _bits(got) == _bits(want), (n, x)
            else:
                assert got == want.tolist(), (n, x)


def test_sort_of_a_vector_stays_a_vector_and_bad_shapes_are_errors() -> None:
    v = cp.vector([cp.value(3.0), cp.value(-1.0), cp.value(2.0)])
    s = cp.sort(v)
    assert isinstance(s, cp.vector)
    assert [float(e) for e in run(s).read_value(s)] == [-1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="1-D array"):
        cp.sort(cp.array([[1.0, 2.0], [3.0, 4.0]]))
    with pytest.raises(ValueError, match="1-D array"):
        cp.argsort(cp.array([[1, 2], [3, 4]]))


# --- reductions over axes -----------------------------------------------------------------


def _ordered(terms: np.ndarray, op: str) -> Any:
    """One reduction in the documented order: term k into partial k % 8, then the
    partials combined l + 4, l + 2, l + 1."""
    if op == "sum" and terms.dtype == np.int64:
        return int(terms.sum()) % 2**32 - (2**32 if int(terms.sum()) % 2**32 >= 2**31 else 0)
    if op == "sum":
        acc = [F32(-0.0)] * 8
        for k, t in enumerate(terms):
            acc[k % 8] = F32(acc[k % 8] + t)
    else:
        fold: Callable[[Any, Any], Any] = np.minimum if op == "min" else np.maximum
        if terms.dtype == np.int64:
            start: Any = 2**31 - 1 if op == "min" else -(2**31)
        else:
            start = F32(np.inf) if op == "min" else F32(-np.inf)
        acc = [start] * 8
        for k, t in enumerate(terms):
            acc[k % 8] = fold(acc[k % 8], t)
    for h in (4, 2, 1):
        for lane in range(h):
            acc[lane] = F32(acc[lane] + acc[lane + h]) if op == "sum" else fold(acc[lane], acc[lane + h])
    return acc[0]


def _reference(x: np.ndarray, op: str, axis: Any, keepdims: bool) -> Any:
    """NumPy reduction with the documented term order, element by element."""
    nd = x.ndim
    if axis is None:
        axes = tuple(range(nd))
    else:
        axes = tuple(sorted(a % nd for a in (axis if isinstance(axis, tuple) else (axis,))))
    if not axes:
        return x
    kept = [d for d in range(nd) if d not in axes]
    rows = np.transpose(x, kept + list(axes)).reshape(-1, int(np.prod([x.shape[d] for d in axes])))
    base = "sum" if op == "mean" else op
    wide = rows.astype(np.int64) if x.dtype == np.int32 else rows
    if op == "mean":  # in floating point, as NumPy: int terms rounded to float32 first
        wide = rows.astype(F32)
    out = np.array([_ordered(r, base) for r in wide])
    if op == "mean":
        out = (out.astype(F32) / F32(rows.shape[1])).astype(F32)
    shape = tuple(1 if d in axes else x.shape[d] for d in range(nd)) if keepdims else \
        tuple(x.shape[d] for d in kept)
    return out.reshape(shape)


AXES: list[Any] = [None, 0, 1, 2, -1, -3, (0, 2), (2, 0), (0, 1), (1, 2), (-1, -3), (0, 1, 2), ()]


@pytest.mark.parametrize("dtype", ["float", "int"])
def test_reductions_over_axes_match_numpy_in_the_documented_order(dtype: str) -> None:
    rng = np.random.default_rng(21)
    if dtype == "float":
        x = (rng.standard_normal((3, 5, 11)) * 10.0 ** rng.integers(-4, 5, (3, 5, 11))).astype(F32)
        x[1, 2, 3] = np.nan  # propagates through min and max of every result it is in
        x[2, 0, 0] = -0.0
    else:
        x = rng.integers(-(2**31), 2**31 - 1, (3, 5, 11), dtype=np.int64).astype(np.int32)
    a = cp.array(x, dtype)
    cases = [(op, axis, keep) for op in ("sum", "mean", "min", "max") for axis in AXES
             for keep in (False, True)]
    outs = [getattr(a, op)(axis=axis, keepdims=keep) for op, axis, keep in cases]
    compiled = [o for o in outs if not isinstance(o, cp.array) or o is not a]
    tg = run(*compiled)
    for (op, axis, keep), out in zip(cases, outs, strict=True):
        want = _reference(x, op, axis, keep)
        got = tg.read_value(out)
        if isinstance(out, cp.array):
            assert out.shape == np.shape(want), (op, axis, keep)
        if dtype == "int" and op in ("sum", "min", "max"):
            assert np.array_equal(np.asarray(got), np.asarray(want)), (op, axis, keep)
        else:
            assert _bits(np.ravel(got)) == _bits(np.ravel(want)), (op, axis, keep)
    # NumPy's own min and max agree (their order cannot change the result here)
    for op in ("min", "max"):
        for axis in AXES[:-1]:
            got = np.ravel(tg.read_value(getattr(a, op)(axis=axis)))
            np_want = np.ravel(getattr(np, op)(x, axis=axis))
            if dtype == "float":
                assert _bits(got) == _bits(np_want), (op, axis)
            else:
                assert np.array_equal(got, np_want), (op, axis)


def test_bad_axes_are_clear_errors() -> None:
    a = cp.array(np.zeros((2, 3), dtype=F32))
    for op in ("sum", "mean", "min", "max"):
        with pytest.raises(ValueError, match="given twice"):
            getattr(a, op)(axis=(0, -2))
        with pytest.raises(ValueError, match="out of range"):
            getattr(a, op)(axis=2)
        with pytest.raises(ValueError, match="out of range"):
            getattr(a, op)(axis=(0, -3))
        with pytest.raises(TypeError, match="axis must be"):
            getattr(a, op)(axis=1.0)


# --- runtime indices ------------------------------------------------------------------------


def _clamp(k: int, n: int) -> int:
    """The documented rule: wrap once if negative, then clamp to the dimension."""
    k = k + n if k < 0 else k
    return min(max(k, 0), n - 1)


INDEX_VALUES = [-(2**31), -13, -5, -4, -1, 0, 1, 2, 3, 4, 5, 9, 2**31 - 1]


def test_runtime_subarrays_of_arrays_match_numpy_with_clamped_indices() -> None:
    x = np.arange(4 * 5, dtype=F32).reshape(4, 5) * F32(1.5) - F32(7)
    y = np.arange(3 * 4 * 6, dtype=np.int32).reshape(3, 4, 6) - 30
    a, b = cp.array(x), cp.array(y)
    i, j = cp.value(0), cp.value(0)
    views: list[tuple[Any, Callable[[int, int], Any]]] = [
        (a[i], lambda p, q: x[_clamp(p, 4)]),
        (a[i, :], lambda p, q: x[_clamp(p, 4), :]),
        (a[:, j], lambda p, q: x[:, _clamp(q, 5)]),
        (a[i, 1:4], lambda p, q: x[_clamp(p, 4), 1:4]),
        (a[::-2, j], lambda p, q: x[::-2, _clamp(q, 5)]),
        (a[i, j], lambda p, q: x[_clamp(p, 4), _clamp(q, 5)]),
        (b[i], lambda p, q: y[_clamp(p, 3)]),
        (b[:, j], lambda p, q: y[:, _clamp(q, 4)]),
        (b[i, :, j], lambda p, q: y[_clamp(p, 3), :, _clamp(q, 6)]),
        (b[1, j, 2:], lambda p, q: y[1, _clamp(q, 4), 2:]),
        (b[::2, i, ::-1], lambda p, q: y[::2, _clamp(p, 4), ::-1]),
    ]
    tg = run(*(v for v, _ in views))
    for p, q in itertools.product(INDEX_VALUES, INDEX_VALUES[::3]):
        tg.write_value(i, p)
        tg.write_value(j, q)
        tg.run()
        for k, (v, ref) in enumerate(views):
            want = ref(p, q)
            got = tg.read_value(v)
            assert np.array_equal(np.asarray(got), want), (k, p, q)
            if isinstance(v, cp.array):
                assert v.shape == want.shape


def test_runtime_indices_on_tensors_and_vectors() -> None:
    x = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    t = cp.tensor(x)
    ti = cp.tensor([[1, -2], [3, -4], [5, -6]])
    v = cp.vector([10, 20, 30, 40])
    i, j = cp.value(0), cp.value(0)
    row, col, elem, irow, vel = t[i], t[:, j], t[i, j], ti[j], v[i]
    assert isinstance(row, cp.tensor) and row.shape == (3,)
    assert isinstance(col, cp.tensor) and col.shape == (2,)
    assert isinstance(elem, cp.tensor) and elem.shape == ()
    tg = run(row, col, elem, irow, vel)
    nx, nti = np.array(x, dtype=F32), np.array([[1, -2], [3, -4], [5, -6]])
    for p, q in itertools.product(INDEX_VALUES, INDEX_VALUES[::2]):
        tg.write_value(i, p)
        tg.write_value(j, q)
        tg.run()
        assert tg.read_value(row).tolist() == nx[_clamp(p, 2)].tolist()
        assert tg.read_value(col).tolist() == nx[:, _clamp(q, 3)].tolist()
        assert tg.read_value(elem).tolist() == nx[_clamp(p, 2), _clamp(q, 3)]
        assert tg.read_value(irow).tolist() == nti[_clamp(q, 3)].tolist()
        assert tg.read_value(vel) == [10, 20, 30, 40][_clamp(p, 4)]
    with pytest.raises(TypeError, match="int or bool values"):
        _ = t[cp.value(1.0)]
    with pytest.raises(TypeError, match="int or bool values"):
        _ = cp.array(nx)[cp.value(0.5), :]
    with pytest.raises(TypeError, match="slice bounds must be plain integers"):
        _ = cp.array(nx)[cp.value(1):]


def test_a_bool_value_indexes_as_0_or_1() -> None:
    a = cp.array([[1, 2], [3, 4]])
    f = cp.value(1.0)
    r = a[f > 0.0]
    tg = run(r)
    assert tg.read_value(r) == [3, 4]
    tg.write_value(f, -1.0)
    tg.run()
    assert tg.read_value(r) == [1, 2]


# --- gradients --------------------------------------------------------------------------------


def _numeric_grad(f: Callable[..., float], args: list[np.ndarray], which: int) -> np.ndarray:
    h = 1e-6
    base = [np.asarray(a, dtype=np.float64) for a in args]
    out = np.zeros_like(base[which])
    for k in np.ndindex(base[which].shape):
        up = [b.copy() for b in base]
        up[which][k] += h
        down = [b.copy() for b in base]
        down[which][k] -= h
        out[k] = (f(*up) - f(*down)) / (2 * h)
    return out


def _close(got: Any, want: np.ndarray) -> bool:
    return bool(np.allclose(np.asarray(got, dtype=np.float64), want, rtol=2e-3, atol=2e-3))


def test_grad_through_matmul_in_every_1d_2d_case() -> None:
    rng = np.random.default_rng(31)
    A = rng.standard_normal((3, 4)).astype(F32)
    B = rng.standard_normal((4, 2)).astype(F32)
    u = rng.standard_normal(3).astype(F32)
    w = rng.standard_normal(4).astype(F32)
    W = rng.standard_normal((3, 2)).astype(F32)
    a, b, cu, cw = cp.array(A), cp.array(B), cp.array(u), cp.array(w)

    def f(A: Any, B: Any, u: Any, w: Any) -> float:
        return float(((A @ B) * W).sum() + (u @ A).sum() * 0.5 + (A @ w) @ u + (w @ B).sum())

    y = ((a @ b) * cp.array(W)).sum() + (cu @ a).sum() * 0.5 + (a @ cw) @ cu + (cw @ b).sum()
    grads = cp.grad(y, [a, b, cu, cw])
    tg = run(*grads)
    for k, g in enumerate(grads):
        assert isinstance(g, cp.array)
        assert _close(tg.read_value(g), _numeric_grad(f, [A, B, u, w], k)), k


def test_grad_through_strided_copies_broadcasts_reshapes_and_gathers() -> None:
    rng = np.random.default_rng(32)
    X = rng.standard_normal((4, 6)).astype(F32)
    V = rng.standard_normal(6).astype(F32)
    x, v = cp.array(X), cp.array(V)
    i = cp.value(-3)
    y = ((x.T * cp.array(np.arange(24, dtype=F32).reshape(6, 4))).sum()
         + (x[1:, ::2] ** 2).sum()
         + (v.broadcast_to((3, 6)) * x[:3]).sum()
         + x.reshape(3, 8)[2].sum() * 3.0
         + (x[i] * v).sum()
         + (x[:, i] * x[:, 0]).sum()
         + x.transpose()[::-1].flatten()[5] * 7.0)

    def f(X: Any, V: Any) -> float:
        return float((X.T * np.arange(24).reshape(6, 4)).sum() + (X[1:, ::2] ** 2).sum()
                     + (np.broadcast_to(V, (3, 6)) * X[:3]).sum() + X.reshape(3, 8)[2].sum() * 3
                     + (X[1] * V).sum() + (X[:, 3] * X[:, 0]).sum() + X.T[::-1].flatten()[5] * 7)

    gx, gv = cp.grad(y, [x, v])
    tg = run(gx, gv)
    assert _close(tg.read_value(gx), _numeric_grad(f, [X, V], 0))
    assert _close(tg.read_value(gv), _numeric_grad(f, [X, V], 1))


def test_grad_through_reductions_over_axes() -> None:
    rng = np.random.default_rng(33)
    X = rng.standard_normal((3, 4, 5)).astype(F32)
    x = cp.array(X)
    y = (x.sum(axis=(0, 2)) * cp.array([1.0, -2.0, 3.0, 0.5])).sum() + x.mean(axis=(1, 2)).sum() \
        + (x.max(axis=1) * x.min(axis=(0, 1), keepdims=True)).sum() + x.max() * 2.0 - x.min(axis=2).sum()

    def f(X: Any) -> float:
        return float((X.sum(axis=(0, 2)) * np.array([1.0, -2.0, 3.0, 0.5])).sum() + X.mean(axis=(1, 2)).sum()
                     + (X.max(axis=1) * X.min(axis=(0, 1), keepdims=True)).sum() + X.max() * 2
                     - X.min(axis=2).sum())

    g = cp.grad(y, x)
    assert _close(run(g).read_value(g), _numeric_grad(f, [X], 0))


def test_min_max_ties_send_the_gradient_to_the_first_extreme() -> None:
    X = np.array([[1.0, 3.0, 3.0, -2.0], [-2.0, 0.0, -2.0, 3.0], [np.nan, 1.0, np.nan, 0.0]], dtype=F32)
    x = cp.array(X)
    gmax, gmin = cp.grad(x[:2].max(), x), cp.grad(x.min(axis=1).sum(), x)
    gcol = cp.grad(x[:2].max(axis=0).sum(), x)
    tg = run(gmax, gmin, gcol)
    want_max = np.zeros_like(X)
    want_max[np.unravel_index(np.argmax(X[:2]), (2, 4))] = 1  # the first 3.0
    want_min = np.zeros_like(X)
    for r in range(3):
        want_min[r, np.argmin(X[r])] = 1  # the first -2.0, the first NaN
    want_col = np.zeros_like(X)
    for c in range(4):
        want_col[np.argmax(X[:2, c]), c] = 1
    assert np.array_equal(np.asarray(tg.read_value(gmax)), want_max)
    assert np.array_equal(np.asarray(tg.read_value(gmin)), want_min)
    assert np.array_equal(np.asarray(tg.read_value(gcol)), want_col)


def test_grad_through_sort() -> None:
    # x * x - x has no ties here (0.3 and 0.7 would tie: a kink for finite differences)
    X = np.array([0.3, -1.2, 2.5, 0.8, -0.4, 1.9, 0.05], dtype=F32)
    W = np.arange(1, 8, dtype=F32)
    x = cp.array(X)
    y = (cp.sort(x * x - x) * cp.array(W)).sum() + cp.sort(x)[0] * 5.0

    def f(X: Any) -> float:
        return float((np.sort(X * X - X) * W).sum() + np.sort(X)[0] * 5)

    g = cp.grad(y, x)
    assert _close(run(g).read_value(g), _numeric_grad(f, [X], 0))


def test_subnormals_survive_every_float_array_kernel() -> None:
    """Subnormal floats are numbers on every target: a vector unit that flushes them to
    zero (ARMv7 NEON) must not run any float array kernel. Compared with NumPy float32."""
    tiny = np.array([1e-45, -1e-45, 3e-45, 0.0, -0.0, 1.1754942e-38, -2e-45, 0.0, 5e-45, 0.0],
                    dtype=F32)
    other = np.array([0.0, 0.0, 1e-45, -1e-45, 1e-45, 0.0, -3e-45, 2e-45, 0.0, 1e-45], dtype=F32)
    a, b = cp.array(tiny.tolist()), cp.array(other.tolist())
    grid = tiny.reshape(2, 5)
    outs = {
        "max": a.max(), "min": a.min(), "sum": a.sum(),
        "rows_max": cp.array(grid.tolist()).max(axis=1),
        "rows_min": cp.array(grid.tolist()).min(axis=1),
        "sort": cp.sort(a), "argsort": cp.argsort(a),
        "add": a + b, "sub": a - b, "ne": a != b, "lt": a < b,
        "maximum": cp.maximum(a, b), "minimum": cp.minimum(a, b),
        "iif": cp.iif(a > b, a, b), "neg": -a, "abs": abs(a),
    }
    tg = run(*outs.values())
    with np.errstate(all="ignore"):
        want = {
            "max": tiny.max(), "min": tiny.min(),
            "rows_max": grid.max(axis=1), "rows_min": grid.min(axis=1),
            "sort": np.sort(tiny, kind="stable"), "argsort": np.argsort(tiny, kind="stable"),
            "add": tiny + other, "sub": tiny - other, "ne": tiny != other, "lt": tiny < other,
            "maximum": np.maximum(tiny, other), "minimum": np.minimum(tiny, other),
            "iif": np.where(tiny > other, tiny, other), "neg": -tiny, "abs": np.abs(tiny),
        }
    for name, out in outs.items():
        got = tg.read_value(out)
        if name == "sum":
            # any order of these terms is exact (all multiples of the smallest subnormal)
            assert _bits([got]) == _bits([tiny.sum(dtype=np.float64)]), name
        elif name in ("ne", "lt", "argsort"):
            assert list(got) == list(want[name]), name
        else:
            assert _bits(np.ravel(got)) == _bits(np.ravel(want[name])), name
