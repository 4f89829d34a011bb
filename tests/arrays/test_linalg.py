"""cp.solve and cp.inv against NumPy float32: the documented elimination order
(python/copapy/_linalg.py) written out step by step here in NumPy float32 must give the
same bits, and np.linalg.solve (float64) the same numbers within a tolerance. Gradients
against central finite differences in float64 NumPy.

Run on foreign targets with COPAPY_TEST_TARGET=<arch> (scripts/test.sh does for several):
the bits must match the same reference there too.
"""

from __future__ import annotations

from typing import Any

import copapy as cp
import numpy as np
import pytest
from helpers import F32, run


def reference_solve(a: Any, b: Any) -> np.ndarray:
    """The elimination order of the solve stencil, one float32 operation at a time."""
    w = np.array(a, dtype=F32).copy()
    x = np.array(b, dtype=F32).reshape(w.shape[0], -1).copy()
    n = w.shape[0]
    with np.errstate(all="ignore"):
        for k in range(n):
            for i in range(k + 1, n):
                if abs(w[i, k]) > abs(w[k, k]):
                    w[[k, i], k:] = w[[i, k], k:]
                    x[[k, i]] = x[[i, k]]
            inv = F32(1.0) / w[k, k]
            for i in range(k + 1, n):
                f = F32(w[i, k] * inv)
                for j in range(k + 1, n):
                    w[i, j] = F32(w[i, j] - F32(f * w[k, j]))
                for c in range(x.shape[1]):
                    x[i, c] = F32(x[i, c] - F32(f * x[k, c]))
            w[k, k] = inv
        for i in reversed(range(n)):
            for c in range(x.shape[1]):
                s = x[i, c]
                for q in range(i + 1, n):
                    s = F32(s - F32(w[i, q] * x[q, c]))
                x[i, c] = F32(s * w[i, i])
    return x


def sample(n: int, r: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n)).astype(F32)
    b = rng.standard_normal((n, r)).astype(F32)
    return a, b


def _bits(x: Any) -> np.ndarray:
    return np.asarray(x, dtype=F32).reshape(-1).view(np.uint32)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 13])
@pytest.mark.parametrize("r", [1, 3])
def test_solve_matches_the_documented_order_bit_for_bit(n: int, r: int) -> None:
    a, b = sample(n, r, seed=n * 10 + r)
    x = cp.solve(cp.array(a.tolist()), cp.array(b.tolist()))
    assert isinstance(x, cp.array) and x.shape == (n, r) and x.dtype == "float"
    got = np.array(run(x).read_value(x), dtype=F32)
    ref = reference_solve(a, b)
    assert np.array_equal(_bits(got), _bits(ref)), (got, ref)
    np.testing.assert_allclose(got, np.linalg.solve(a.astype(float), b.astype(float)),
                               rtol=2e-3, atol=2e-3)


def test_pivoting_a_zero_diagonal_and_1d_right_hand_side() -> None:
    a = [[0.0, 2.0, 1.0], [1.0, 1.0, 0.5], [4.0, -1.0, 3.0]]
    b = [1.0, -2.0, 0.5]
    x = cp.solve(cp.array(a), cp.array(b))
    assert x.shape == (3,)
    got = np.array(run(x).read_value(x), dtype=F32)
    assert np.array_equal(_bits(got), _bits(reference_solve(a, b)))
    np.testing.assert_allclose(got, np.linalg.solve(a, b), rtol=1e-5)


def test_ties_keep_the_upper_row() -> None:
    # |a[1][0]| == |a[0][0]|: no swap; a swap would change the rounding of the result
    a = [[-3.0, 1.1, 0.7], [3.0, 0.3, -2.9], [1.0, 5.0, 0.1]]
    b = [0.1, 0.2, 0.3]
    x = cp.solve(cp.array(a), cp.array(b))
    got = np.array(run(x).read_value(x), dtype=F32)
    assert np.array_equal(_bits(got), _bits(reference_solve(a, b)))


def test_runtime_inputs_int_operands_and_operands_unchanged() -> None:
    a = cp.array([[2, 1, 0], [1, 3, 1], [0, 1, 4]])
    b = cp.array([1, 2, 3])
    x = cp.solve(a, b)
    tg = run(x, a, b)
    ref = reference_solve([[2, 1, 0], [1, 3, 1], [0, 1, 4]], [1, 2, 3])
    assert np.array_equal(_bits(tg.read_value(x)), _bits(ref))
    assert tg.read_value(a) == [[2, 1, 0], [1, 3, 1], [0, 1, 4]]
    assert tg.read_value(b) == [1, 2, 3]
    # new data, same program: the elimination runs on what the arrays hold now
    a2, b2 = sample(3, 1, seed=7)
    tg.write_value(a, np.rint(a2 * 4).astype(np.int32))
    tg.write_value(b, np.rint(b2[:, 0] * 4).astype(np.int32))
    tg.run()
    ref2 = reference_solve(np.rint(a2 * 4), np.rint(b2[:, 0] * 4))
    assert np.array_equal(_bits(tg.read_value(x)), _bits(ref2))


def test_singular_matrix_gives_inf_or_nan() -> None:
    a = [[1.0, 2.0], [2.0, 4.0]]
    x = cp.solve(cp.array(a), cp.array([1.0, 1.0]))
    got = np.array(run(x).read_value(x), dtype=F32)
    assert not np.all(np.isfinite(got))
    assert np.array_equal(_bits(got)[~np.isnan(got)],
                          _bits(reference_solve(a, [1.0, 1.0]))[~np.isnan(got)])


def test_tensor_and_vector_operands_keep_their_container() -> None:
    a, b = sample(4, 1, seed=3)
    ta = cp.tensor([[cp.value(float(v)) for v in row] for row in a])
    vb = cp.vector([cp.value(float(v)) for v in b[:, 0]])
    x = cp.solve(ta, vb)
    assert isinstance(x, cp.vector) and len(x) == 4
    tg = run(*x.values)
    got = np.array([tg.read_value(v) for v in x.values], dtype=F32)
    assert np.array_equal(_bits(got), _bits(reference_solve(a, b)))
    xt = cp.solve(ta, cp.tensor(b.tolist()))
    assert isinstance(xt, cp.tensor) and xt.shape == (4, 1)


def test_tensor_of_numbers_is_solved_while_tracing() -> None:
    a = [[0.0, 2.0, 1.0], [1.0, 1.0, 0.5], [4.0, -1.0, 3.0]]
    x = cp.solve(cp.tensor(a), cp.vector([1.0, 2.0, 3.0]))
    assert isinstance(x, cp.vector)
    assert all(isinstance(v, float) for v in x.values)
    np.testing.assert_allclose(list(x.values), np.linalg.solve(a, [1.0, 2.0, 3.0]), rtol=1e-12)
    with pytest.raises(ValueError, match="singular"):
        cp.solve(cp.tensor([[1.0, 2.0], [2.0, 4.0]]), cp.vector([1.0, 1.0]))


@pytest.mark.parametrize("n", [1, 3, 6])
def test_inv(n: int) -> None:
    a, _ = sample(n, 1, seed=40 + n)
    x = cp.inv(cp.array(a.tolist()))
    assert isinstance(x, cp.array) and x.shape == (n, n)
    got = np.array(run(x).read_value(x), dtype=F32)
    assert np.array_equal(_bits(got), _bits(reference_solve(a, np.eye(n))))
    np.testing.assert_allclose(got, np.linalg.inv(a.astype(float)), rtol=5e-3, atol=5e-3)


@pytest.mark.parametrize(
    ("a", "b", "match"),
    [
        ([[1.0, 2.0, 3.0]], [1.0], "square matrix"),
        ([1.0, 2.0], [1.0, 2.0], "square matrix"),
        ([[1.0, 0.0], [0.0, 1.0]], [1.0, 2.0, 3.0], "Shape mismatch"),
        ([[1.0, 0.0], [0.0, 1.0]], [[[1.0]], [[2.0]]], "Shape mismatch"),
    ],
)
def test_bad_shapes_are_value_errors(a: Any, b: Any, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        cp.solve(cp.array(a), cp.array(b))


def test_inv_of_a_non_square_matrix() -> None:
    with pytest.raises(ValueError, match="square matrix"):
        cp.inv(cp.array([[1.0, 2.0]]))


def _loss(a: np.ndarray, b: np.ndarray, wts: np.ndarray) -> float:
    return float(np.sum(np.linalg.solve(a, b) * wts))


def test_grad_through_solve_against_finite_differences() -> None:
    n, r = 3, 2
    a, b = sample(n, r, seed=11)
    a = a + 3 * np.eye(n, dtype=F32)  # well conditioned: float32 gradients are accurate
    wts = np.random.default_rng(5).standard_normal((n, r))
    ca, cb = cp.array(a.tolist()), cp.array(b.tolist())
    y = (cp.solve(ca, cb) * cp.array(wts.tolist())).sum()
    ga, gb = cp.grad(y, [ca, cb])
    tg = run(y, ga, gb)
    a64, b64, eps = a.astype(float), b.astype(float), 1e-6
    fd_a = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            d = np.zeros((n, n))
            d[i, j] = eps
            fd_a[i, j] = (_loss(a64 + d, b64, wts) - _loss(a64 - d, b64, wts)) / (2 * eps)
    fd_b = np.zeros((n, r))
    for i in range(n):
        for j in range(r):
            d = np.zeros((n, r))
            d[i, j] = eps
            fd_b[i, j] = (_loss(a64, b64 + d, wts) - _loss(a64, b64 - d, wts)) / (2 * eps)
    np.testing.assert_allclose(np.array(tg.read_value(ga)), fd_a, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(np.array(tg.read_value(gb)), fd_b, rtol=1e-3, atol=1e-4)


# --- det ----------------------------------------------------------------------------------

def reference_det(a: Any) -> np.float32:
    """The det stencil's order in NumPy float32 (python/copapy/_linalg.py)."""
    w = np.array(a, dtype=F32).copy()
    n = w.shape[0]
    d, swaps = F32(1.0), 0
    with np.errstate(all="ignore"):
        for k in range(n):
            for i in range(k + 1, n):
                if abs(w[i, k]) > abs(w[k, k]):
                    w[[k, i], k:] = w[[i, k], k:]
                    swaps += 1
            p = w[k, k]
            d = F32(d * p)
            inv = F32(0.0) if p == 0 else F32(F32(1.0) / p)
            for i in range(k + 1, n):
                f = F32(w[i, k] * inv)
                for j in range(k + 1, n):
                    w[i, j] = F32(w[i, j] - F32(f * w[k, j]))
    return F32(-d) if swaps % 2 else d


def reference_cofactors(a: Any) -> np.float32:
    """Cofactor expansion along the rows in float32, terms left to right from the first
    non-zero element (zeros left out), as documented for small traced tensors."""
    w = np.array(a, dtype=F32)
    n = w.shape[0]

    def minor(row: int, cols: tuple[int, ...]) -> Any:
        if row == n:
            return F32(1.0)
        acc = None
        for p, col in enumerate(cols):
            if w[row, col] == 0:
                continue
            term = F32(w[row, col] * minor(row + 1, cols[:p] + cols[p + 1:]))
            if acc is None:
                acc = F32(-term) if p % 2 else term
            else:
                acc = F32(acc - term) if p % 2 else F32(acc + term)
        return F32(0.0) if acc is None else acc

    return minor(0, tuple(range(n)))


@pytest.mark.parametrize("n", [1, 2, 3, 5, 9])
def test_det_of_an_array_matches_the_documented_order(n: int) -> None:
    a, _ = sample(n, 1, seed=60 + n)
    d = cp.det(cp.array(a.tolist()))
    assert isinstance(d, cp.value)
    got = F32(run(d).read_value(d))
    assert got.view(np.uint32) == reference_det(a).view(np.uint32)
    assert got == pytest.approx(np.linalg.det(a.astype(float)), rel=1e-3, abs=1e-4)


def test_det_of_a_singular_array_is_zero_and_swaps_flip_the_sign() -> None:
    d0 = cp.det(cp.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 1.0]]))
    d1 = cp.det(cp.array([[0.0, 1.0], [1.0, 0.0]]))
    d2 = cp.det(cp.array([[0.0, 0.0], [0.0, 0.0]]))
    tg = run(d0, d1, d2)
    assert tg.read_value(d0) == 0.0
    assert tg.read_value(d1) == -1.0
    assert tg.read_value(d2) == 0.0


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_det_of_a_small_traced_tensor_expands_cofactors(n: int) -> None:
    a, _ = sample(n, 1, seed=80 + n)
    a[0, -1] = 0.0  # a constant zero: its term is left out
    t = cp.tensor([[cp.value(float(v)) if v != 0 else 0.0 for v in row] for row in a])
    d = cp.det(t)
    got = F32(run(d).read_value(d)) if isinstance(d, cp.value) else F32(d)
    assert got.view(np.uint32) == reference_cofactors(a).view(np.uint32)
    assert got == pytest.approx(np.linalg.det(a.astype(float)), rel=1e-3, abs=1e-4)


def test_det_of_a_large_traced_tensor_and_of_numbers() -> None:
    a, _ = sample(6, 1, seed=99)
    d = cp.det(cp.tensor([[cp.value(float(v)) for v in row] for row in a]))
    assert F32(run(d).read_value(d)).view(np.uint32) == reference_det(a).view(np.uint32)
    dn = cp.det(cp.tensor(a.tolist()))
    assert isinstance(dn, float)
    assert dn == pytest.approx(np.linalg.det(a.astype(float)), rel=1e-12)
    assert cp.det(cp.tensor([[1.0, 2.0], [2.0, 4.0]])) == 0.0


def test_grad_of_det_against_finite_differences() -> None:
    n = 3
    a, _ = sample(n, 1, seed=21)
    ca = cp.array(a.tolist())
    d = cp.det(ca)
    (ga,) = cp.grad(d, [ca])
    tg = run(d, ga)
    a64, eps = a.astype(float), 1e-6
    fd = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            e = np.zeros((n, n))
            e[i, j] = eps
            fd[i, j] = (np.linalg.det(a64 + e) - np.linalg.det(a64 - e)) / (2 * eps)
    np.testing.assert_allclose(np.array(tg.read_value(ga)), fd, rtol=1e-3, atol=1e-4)


def test_det_of_a_non_square_matrix() -> None:
    with pytest.raises(ValueError, match="square matrix"):
        cp.det(cp.array([[1.0, 2.0, 3.0]]))


def test_jit_with_numpy_arguments() -> None:
    a, b = sample(3, 1, seed=5)
    a = a + 2 * np.eye(3, dtype=F32)

    @cp.jit
    def solve_and_det(m: Any, v: Any) -> Any:
        return cp.solve(m, v), cp.det(m)

    x, d = solve_and_det(a, b[:, 0])
    assert np.array_equal(_bits(x), _bits(reference_solve(a, b[:, 0])))
    assert F32(d).view(np.uint32) == reference_cofactors(a).view(np.uint32)


def test_grad_through_a_traced_tensor_solve() -> None:
    a, b = np.array([[4.0, 1.0], [1.0, 3.0]]), np.array([1.0, 2.0])
    av = [[cp.value(float(v)) for v in row] for row in a]
    bv = [cp.value(float(v)) for v in b]
    x = cp.solve(cp.tensor(av), cp.vector(bv))
    y = x[0] * 2.0 + x[1]
    g = cp.grad(y, [av[0][0], av[1][0], bv[1]])
    tg = run(y, *g)
    w, eps = np.array([2.0, 1.0]), 1e-6

    def loss(m: np.ndarray, v: np.ndarray) -> float:
        return float(np.linalg.solve(m, v) @ w)

    fd = []
    for i, j in ((0, 0), (1, 0)):
        e = np.zeros((2, 2))
        e[i, j] = eps
        fd.append((loss(a + e, b) - loss(a - e, b)) / (2 * eps))
    fd.append((loss(a, b + [0, eps]) - loss(a, b - [0, eps])) / (2 * eps))
    np.testing.assert_allclose([tg.read_value(v) for v in g], fd, rtol=1e-4, atol=1e-6)
