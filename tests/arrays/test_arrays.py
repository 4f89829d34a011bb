"""cp.array against NumPy float32/int32: element-wise operations (bit for bit, through
the independent reference semantics of refsem.py), math (ulp bars of docs/math.md),
reductions in their documented order (reproduced here in NumPy float32), select, shapes,
reading and writing, and the error cases.

scripts/test.sh runs this module on every target (COPAPY_TEST_TARGET), so each check
is also a cross-architecture check of the array stencils.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import copapy as cp
import numpy as np
import pytest
import refsem as R
from helpers import F32, floats, ordered_sum, run

EDGE = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-38, -1e-45, 3.4e38, -3.4e38,
        math.inf, -math.inf, math.nan, 7.25, -7.25, 1e10, 123.456, -0.1]


def _ints(n: int, seed: int) -> list[int]:
    rng = np.random.default_rng(seed)
    edge = [0, 1, -1, 7, -7, 31, 32, -32, 2**31 - 1, -(2**31)]
    return edge + [int(x) for x in rng.integers(-1000, 1000, n - len(edge))]


# --- element-wise binary: every operator, every form, against refsem --------------------

FLOAT_OPS = R.ARITH + R.COMPARE
INT_OPS = R.ARITH + R.COMPARE + R.BITWISE


def _check_binary(op: str, xs: list[Any], tx: str, ys: list[Any], ty: str) -> None:
    fn = R.PY_OP[op]
    a, b = cp.array(xs, tx), cp.array(ys, ty)
    sa, sb = cp.value(ys[3], ty), cp.value(xs[5], tx)
    aa, as_, sa_ = fn(a, b), fn(a, sa), fn(sb, b)
    tg = run(aa, as_, sa_)
    bad = []
    for name, got, left, right in (
        ("aa", tg.read_value(aa), xs, ys),
        ("as", tg.read_value(as_), xs, [ys[3]] * len(ys)),
        ("sa", tg.read_value(sa_), [xs[5]] * len(xs), ys),
    ):
        for k, (g, x, y) in enumerate(zip(got, left, right, strict=True)):
            want, rt = R.binop(op, x, tx, y, ty)
            if not R.matches(g, want, rt):
                bad.append(f"{name}[{k}]: {x!r} {R.SYMBOL[op]} {y!r} = {g!r}, want {want!r}")
    assert not bad, R.describe_failures(bad)


@pytest.mark.parametrize("op", FLOAT_OPS)
def test_float_binary_ops_match_numpy(op: str) -> None:
    xs = EDGE + floats(21, 1)
    ys = list(reversed(EDGE)) + floats(21, 2)
    _check_binary(op, xs, "float", ys, "float")


@pytest.mark.parametrize("op", INT_OPS)
def test_int_binary_ops_match_numpy(op: str) -> None:
    xs = _ints(37, 3)
    ys = list(reversed(_ints(37, 4)))
    if op in ("lshift", "rshift"):
        ys = [y % 40 - 4 for y in ys]
    _check_binary(op, xs, "int", ys, "int")


def test_int_array_with_float_scalar_promotes_like_numpy() -> None:
    _check_binary("add", _ints(20, 5), "int", floats(20, 6), "float")
    _check_binary("truediv", _ints(20, 7), "int", _ints(20, 8), "int")


def test_bool_arrays_and_python_numbers() -> None:
    flags = [True, False, True, True]
    a = cp.array(flags)
    assert a.dtype == "bool"
    x = cp.array([1.5, -2.0, 0.0, 4.0])
    r1, r2, r3 = a & cp.array([True, True, False, False]), x * 2, 10 - x
    tg = run(r1, r2, r3)
    assert tg.read_value(r1) == [True, False, False, False]
    assert tg.read_value(r2) == [3.0, -4.0, 0.0, 8.0]
    assert tg.read_value(r3) == [8.5, 12.0, 10.0, 6.0]


# --- unary and math ----------------------------------------------------------------------


def test_neg_abs_sqrt_are_exact() -> None:
    xs = EDGE + floats(13, 9)
    ints = _ints(20, 10)
    a, i = cp.array(xs), cp.array(ints)
    n, ab, sq, ni, ai = -a, abs(a), cp.sqrt(a), -i, abs(i)
    tg = run(n, ab, sq, ni, ai)
    x32 = np.array(xs, F32)
    with np.errstate(invalid="ignore"):
        for got, want in ((n, -x32), (ab, np.abs(x32)), (sq, np.sqrt(x32))):
            for g, w in zip(tg.read_value(got), want, strict=True):
                assert R.same_float(g, w), (g, w)
    assert tg.read_value(ni) == [R.wrap32(-x) for x in ints]
    assert tg.read_value(ai) == [R.wrap32(abs(x)) for x in ints]


MATH: dict[str, tuple[Callable[[Any], Any], Callable[[float], float], float, float, int]] = {
    "sin": (cp.sin, math.sin, -100.0, 100.0, 1),
    "cos": (cp.cos, math.cos, -100.0, 100.0, 1),
    "tan": (cp.tan, math.tan, -1.5, 1.5, 2),
    "asin": (cp.asin, math.asin, -1.0, 1.0, 2),
    "acos": (cp.acos, math.acos, -1.0, 1.0, 2),
    "atan": (cp.atan, math.atan, -50.0, 50.0, 2),
    "exp": (cp.exp, math.exp, -80.0, 80.0, 1),
    "log": (cp.log, math.log, 1e-30, 1e30, 1),
    "tanh": (cp.tanh, math.tanh, -10.0, 10.0, 1),
}


@pytest.mark.parametrize("name", sorted(MATH))
def test_math_functions_within_their_ulp_bars(name: str) -> None:
    fn, ref, lo, hi, bar = MATH[name]
    rng = np.random.default_rng(11)
    if name == "log":
        xs = [float(F32(x)) for x in np.exp(rng.uniform(math.log(lo), math.log(hi), 40))]
    else:
        xs = [float(F32(x)) for x in rng.uniform(lo, hi, 40)]
    y = fn(cp.array(xs))
    got = run(y).read_value(y)
    for g, x in zip(got, xs, strict=True):
        assert R.ulp_distance(g, float(F32(ref(x)))) <= bar, (name, x, g)


def test_atan2_pow_minimum_maximum_clamp() -> None:
    ys, xs = floats(24, 12), floats(24, 13)
    a, b = cp.array(ys), cp.array(xs)
    pos = cp.array([abs(v) + 0.5 for v in xs])
    t, p = cp.atan2(a, b), cp.pow(pos, 1.5)
    lo, hi, c = cp.minimum(a, b), cp.maximum(a, 0.0), cp.clamp(a, -1.0, 1.0)
    tg = run(t, p, lo, hi, c)
    for g, y, x in zip(tg.read_value(t), ys, xs, strict=True):
        assert R.ulp_distance(g, float(F32(math.atan2(y, x)))) <= 2
    for g, x in zip(tg.read_value(p), tg.read_value(pos), strict=True):
        assert R.ulp_distance(g, float(F32(x**1.5))) <= 2
    y32, x32 = np.array(ys, F32), np.array(xs, F32)
    assert tg.read_value(lo) == np.minimum(y32, x32).tolist()
    assert tg.read_value(hi) == np.maximum(y32, F32(0)).tolist()
    assert tg.read_value(c) == np.minimum(np.maximum(y32, F32(-1)), F32(1)).tolist()


def test_iif_never_leaks_the_untaken_side() -> None:
    xs = [-1.0, 4.0, -9.0, 16.0, 0.0, -0.0, math.inf, math.nan, 2.0]
    a = cp.array(xs)
    root = cp.iif(a > 0, cp.sqrt(a), 0.0)
    both = cp.iif(a >= 0, a, -a)
    scal = cp.iif(a < 0, cp.value(5.0), 7.0)
    tg = run(root, both, scal)
    x32 = np.array(xs, F32)
    with np.errstate(invalid="ignore"):
        want_root = np.where(x32 > 0, np.sqrt(x32), F32(0))
        want_both = np.where(x32 >= 0, x32, -x32)
    for g, w in zip(tg.read_value(root), want_root, strict=True):
        assert R.same_float(g, w), (g, w)
    for g, w in zip(tg.read_value(both), want_both, strict=True):
        assert R.same_float(g, w), (g, w)
    assert tg.read_value(scal) == np.where(x32 < 0, F32(5), F32(7)).tolist()


# --- reductions in the documented order ----------------------------------------------------





@pytest.mark.parametrize("n", [1, 3, 7, 8, 9, 16, 23, 100])
def test_sum_and_dot_in_the_documented_order(n: int) -> None:
    xs, ys = floats(n, 20 + n), floats(n, 40 + n)
    a, b = cp.array(xs), cp.array(ys)
    s, d, m = a.sum(), a @ b, a.mean()
    tg = run(s, d, m)
    x32, y32 = np.array(xs, F32), np.array(ys, F32)
    assert R.same_float(tg.read_value(s), ordered_sum(x32))
    assert R.same_float(tg.read_value(d), ordered_sum((x32 * y32).astype(F32)))
    assert R.same_float(tg.read_value(m), F32(ordered_sum(x32) / F32(n)))


def test_the_order_is_not_numpys_so_the_check_above_can_fail() -> None:
    xs = np.array([1e8, 1.0, -1e8, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], F32)
    a = cp.array(xs)
    s = a.sum()
    got = run(s).read_value(s)
    assert R.same_float(got, ordered_sum(xs))
    assert got != float(np.cumsum(xs, dtype=F32)[-1])  # a left-to-right sum differs


def _ordered_fold(x: Any, fn: Any, start: Any) -> Any:
    """min/max in the order of the sums: 8 partials from start, then pairwise."""
    acc = np.full(8, start, dtype=x.dtype)
    for k, t in enumerate(x):
        acc[k % 8] = fn(acc[k % 8], t)
    for half in (4, 2, 1):
        acc = fn(acc[:half], acc[half:2 * half])
    return acc[0]


@pytest.mark.parametrize("n", [1, 5, 8, 13, 40])
def test_min_and_max(n: int) -> None:
    xs = floats(n, 100 + n)
    if n > 5:
        xs[3] = -0.0
        xs[4] = 0.0
    ints = _ints(max(n, 10), 110)[:n]
    a, i = cp.array(xs), cp.array(ints, "int")
    outs = [a.min(), a.max(), i.min(), i.max()]
    tg = run(*outs)
    x32 = np.array(xs, F32)
    assert R.same_float(tg.read_value(outs[0]), _ordered_fold(x32, np.minimum, F32(np.inf)))
    assert R.same_float(tg.read_value(outs[1]), _ordered_fold(x32, np.maximum, F32(-np.inf)))
    assert tg.read_value(outs[2]) == min(ints) and tg.read_value(outs[3]) == max(ints)
    nan = cp.array([1.0, math.nan, -3.0])
    lo = nan.min()
    assert math.isnan(run(lo).read_value(lo))


def test_matmul_2d_in_the_documented_order() -> None:
    rng = np.random.default_rng(120)
    am = rng.standard_normal((3, 13)).astype(F32)
    bm = rng.standard_normal((13, 4)).astype(F32)
    v = rng.standard_normal(13).astype(F32)
    w = rng.standard_normal(3).astype(F32)
    a, b, x, y = cp.array(am), cp.array(bm), cp.array(v), cp.array(w)
    mm, mv, vm = a @ b, a @ x, y @ a
    assert (mm.shape, mv.shape, vm.shape) == ((3, 4), (3,), (13,))
    tg = run(mm, mv, vm)

    def ref(p: Any, q: Any) -> Any:
        out = np.zeros((p.shape[0], q.shape[1]), F32)
        for i in range(p.shape[0]):
            for j in range(q.shape[1]):
                out[i, j] = ordered_sum((p[i, :] * q[:, j]).astype(F32))
        return out

    for got, want in ((mm, ref(am, bm)), (mv, ref(am, v[:, None])[:, 0]),
                      (vm, ref(w[None, :], am)[0])):
        assert np.array_equal(got.to_numpy(tg).view(np.uint32), want.view(np.uint32))
    ia = cp.array([[1, 2], [3, 4]])
    ip = ia @ ia
    assert run(ip).read_value(ip) == [[7, 10], [15, 22]]
    with pytest.raises(ValueError, match="3 columns against 2 rows"):
        _ = cp.array([[1.0, 2.0, 3.0]]) @ cp.array([[1.0], [2.0]])


def test_sum_along_an_axis_transpose_and_broadcast_to() -> None:
    rng = np.random.default_rng(130)
    x = rng.standard_normal((3, 4, 5)).astype(F32)
    a = cp.array(x)
    outs = {ax: a.sum(axis=ax) for ax in (0, 1, 2, -1)}
    kd = a.sum(axis=1, keepdims=True)
    mean0 = a.mean(axis=0)
    t = a.T
    b = cp.array([1.0, 2.0]).broadcast_to((3, 2))
    tg = run(list(outs.values()), kd, mean0, t, b)

    def ref_sum(ax: int) -> Any:
        moved = np.moveaxis(x, ax, -1)
        out = np.zeros(moved.shape[:-1], F32)
        for idx in np.ndindex(out.shape):
            out[idx] = ordered_sum(moved[idx])
        return out

    for ax, got in outs.items():
        assert np.array_equal(got.to_numpy(tg).view(np.uint32), ref_sum(ax).view(np.uint32)), ax
    assert kd.shape == (3, 1, 5)
    assert np.array_equal(kd.to_numpy(tg)[:, 0, :], ref_sum(1))
    assert np.array_equal(mean0.to_numpy(tg), (ref_sum(0) / F32(3)).astype(F32))
    assert t.shape == (5, 4, 3) and np.array_equal(t.to_numpy(tg), x.T)
    assert tg.read_value(b) == [[1.0, 2.0]] * 3
    with pytest.raises(ValueError, match="cannot broadcast"):
        cp.array([1.0, 2.0]).broadcast_to((3,))


def test_slices_are_strided_copies_matching_numpy() -> None:
    x = np.arange(2 * 5 * 6, dtype=np.int32).reshape(2, 5, 6)
    a = cp.array(x)
    cases = [(a[1], x[1]), (a[:, 1:4], x[:, 1:4]), (a[::-1, ::2, 5], x[::-1, ::2, 5]),
             (a[0, :, ::-3], x[0, :, ::-3]), (a[1, 2:3], x[1, 2:3]), (a.T, x.T),
             (cp.array([[1], [2]]).broadcast_to((2, 3)), np.broadcast_to([[1], [2]], (2, 3)))]
    tg = run([c for c, _ in cases])
    for got, want in cases:
        assert got.shape == want.shape
        assert np.array_equal(got.to_numpy(tg), want)
    big = cp.array(np.zeros((300, 300), np.float32))
    tg1, tg2 = cp.Target(), cp.Target()
    tg1.compile(big[::2, 1:].sum())
    tg2.compile(big[::3, 7:].sum())
    assert tg1.stats()[1] == tg2.stats()[1]  # the copy is one stencil, whatever its size


def test_int_sum_and_dot_wrap() -> None:
    xs, ys = _ints(30, 50), _ints(30, 51)
    a, b = cp.array(xs), cp.array(ys)
    s, d, bs = a.sum(), a.dot(b), cp.array([True, False, True]).sum()
    tg = run(s, d, bs)
    assert tg.read_value(s) == R.wrap32(sum(xs))
    assert tg.read_value(d) == R.wrap32(sum(x * y for x, y in zip(xs, ys, strict=True)))
    assert tg.read_value(bs) == 2


def test_readme_benchmark_computation() -> None:
    n = 600
    v1, v2 = floats(n, 60), floats(n, 61)
    a, b = cp.array(v1), cp.array(v2)
    total = sum((a + i) @ b for i in range(10))
    got = run(total).read_value(total)
    x32, y32 = np.array(v1, F32), np.array(v2, F32)
    want: Any = 0
    for i in range(10):
        want = F32(want + ordered_sum(((x32 + F32(i)) * y32).astype(F32)))
    assert R.same_float(got, want)


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_element_wise_operand_of_a_dot_keeps_its_roundings(op: str) -> None:
    """(x op z) @ y, with x op z read by nothing else, is computed in one fused pass:
    still the float32 result of x op z, times y, summed in the documented order."""
    xs, zs, ys = floats(29, 70), floats(29, 71), floats(29, 72)
    x, z, y = cp.array(xs), cp.array(zs), cp.array(ys)
    fn = R.PY_OP[op]
    s = cp.value(F32(0.375).item())
    aa, as_, sa = fn(x, z) @ y, fn(x, s) @ y, fn(2.5, x) @ y
    shared = fn(x, z)
    twice = shared @ y + shared.sum()  # shared has two readers: not fused
    tg = run(aa, as_, sa, twice)
    x32, z32, y32 = np.array(xs, F32), np.array(zs, F32), np.array(ys, F32)
    ref = {"add": np.add, "sub": np.subtract, "mul": np.multiply}[op]
    for got, left in ((aa, ref(x32, z32)), (as_, ref(x32, F32(0.375))), (sa, ref(F32(2.5), x32))):
        want = ordered_sum((left.astype(F32) * y32).astype(F32))
        assert R.same_float(tg.read_value(got), want)
    left = ref(x32, z32).astype(F32)
    want = F32(ordered_sum((left * y32).astype(F32)) + ordered_sum(left))
    assert R.same_float(tg.read_value(twice), want)


# --- shapes, elements, reading and writing ----------------------------------------------------


def test_shape_properties_and_nested_read() -> None:
    m = cp.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert (m.shape, m.dtype, m.ndim, m.size, len(m)) == ((2, 3), "float", 2, 6, 2)
    assert repr(m) == "array(shape=(2, 3), dtype=float)"  # Copapy's repr
    r = m * 2
    e = m[1, 2]
    row = m[1]
    tg = run(r, e, row, m.reshape(3, -1))
    assert tg.read_value(r) == [[2.0, 4.0, 6.0], [8.0, 10.0, 12.0]]
    assert tg.read_value(e) == 6.0
    assert tg.read_value(row) == [4.0, 5.0, 6.0]
    assert tg.read_value(m.reshape(3, -1)) == [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    assert tg.read_value(m.flatten()) == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]


def test_broadcasting_two_shapes() -> None:
    col = cp.array([[1.0], [2.0], [3.0]])
    row = cp.array([10.0, 20.0])
    s = col + row
    assert s.shape == (3, 2)
    assert run(s).read_value(s) == [[11.0, 21.0], [12.0, 22.0], [13.0, 23.0]]


def test_numpy_in_and_out_and_write_value() -> None:
    data = np.arange(12, dtype=np.float32).reshape(3, 4) / 3
    a = cp.array(data)
    b = a * a + 1.0
    tg = run(b)
    out = b.to_numpy(tg)
    assert out.dtype == np.float32 and out.shape == (3, 4)
    assert np.array_equal(out, data * data + F32(1))
    tg.write_value(a, data[::-1] * 2)
    tg.run()
    new = (data[::-1] * 2).astype(F32)
    assert np.array_equal(b.to_numpy(tg), new * new + F32(1))
    tg.write_value(a, [[1.0] * 4] * 3)
    tg.run()
    assert tg.read_value(b) == [[2.0] * 4] * 3
    i = cp.array(np.array([1, 2, 3], dtype=np.int32))
    j = i * 3
    tg = run(j)
    assert j.to_numpy(tg).tolist() == [3, 6, 9]


def test_arrays_of_values_gather_them() -> None:
    x, y = cp.value(1.5), cp.value(2.0)
    a = cp.array([x, y * 2, 3])
    s = a.sum()
    tg = run(s)
    assert tg.read_value(s) == float(ordered_sum(np.array([1.5, 4.0, 3.0], F32)))
    tg.write_value(x, -1.0)
    tg.run()
    assert tg.read_value(s) == float(ordered_sum(np.array([-1.0, 4.0, 3.0], F32)))


def test_code_size_does_not_depend_on_the_length() -> None:
    sizes = []
    for n in (10, 10_000):
        a, b = cp.array([1.0] * n), cp.array([2.0] * n)
        total = sum((a + i) @ b for i in range(10))
        tg = cp.Target()
        tg.compile(total)
        sizes.append(tg.stats()[1])
    assert sizes[0] == sizes[1]


def test_runtime_indices_wrap_once_and_clamp() -> None:
    table = cp.array([10.0, 11.0, 12.0, 13.0, 14.0])
    grid = cp.array([[1, 2, 3], [4, 5, 6]])
    i, r, c = cp.value(0), cp.value(0), cp.value(0)
    e, g = table[i], grid[r, c]
    tg = run(e, g)
    for k in (-7, -5, -1, 0, 3, 4, 5, 100, -(2**31), 2**31 - 1):
        tg.write_value(i, k)
        tg.run()
        want = [10.0, 11.0, 12.0, 13.0, 14.0][min(max(k + 5 if k < 0 else k, 0), 4)]
        assert tg.read_value(e) == want, k
    for rr, cc in ((0, 0), (1, 2), (-1, -1), (5, -9), (-3, 1)):
        tg.write_value(r, rr)
        tg.write_value(c, cc)
        tg.run()
        row = min(max(rr + 2 if rr < 0 else rr, 0), 1)
        col = min(max(cc + 3 if cc < 0 else cc, 0), 2)
        assert tg.read_value(g) == [[1, 2, 3], [4, 5, 6]][row][col], (rr, cc)
    with pytest.raises(TypeError, match="int or bool values"):
        _ = table[cp.value(1.0)]


def test_grad_through_array_operations_matches_the_derivative() -> None:
    xs, ys = [0.3, -1.2, 2.5, 0.7, -0.4, 1.9, 0.05, -2.2, 1.1], floats(9, 90)
    a, b = cp.array(xs), cp.array(ys)
    s = cp.value(0.5)
    y = ((cp.sin(a) * b).sum() + (a - s) @ b + cp.sqrt(a * a + 1.0).sum()
         + cp.exp(a * 0.1).mean() + (a / (b * b + 1.0)).sum() + a[2] * 3.0
         + cp.iif(a > 0, a * a, -a).sum() + s * s)
    ga, gb, gs = cp.grad(y, [a, b, s])
    assert isinstance(ga, cp.array) and ga.shape == a.shape
    tg = run(ga, gb, gs)
    x, w = np.array(xs), np.array(ys)

    def f(x: Any, w: Any, s: float) -> float:
        return float((np.sin(x) * w).sum() + (x - s) @ w + np.sqrt(x * x + 1).sum()
                     + np.exp(x * 0.1).mean() + (x / (w * w + 1)).sum() + x[2] * 3
                     + np.where(x > 0, x * x, -x).sum() + s * s)

    h = 1e-6
    for got, arg in ((tg.read_value(ga), 0), (tg.read_value(gb), 1)):
        for k in range(9):
            args = [x.copy(), w.copy()]
            args[arg][k] += h
            up = f(args[0], args[1], 0.5)
            args[arg][k] -= 2 * h
            down = f(args[0], args[1], 0.5)
            want = (up - down) / (2 * h)
            assert abs(got[k] - want) <= 1e-3 * max(1.0, abs(want)), (arg, k, got[k], want)
    want_s = (f(x, w, 0.5 + h) - f(x, w, 0.5 - h)) / (2 * h)
    assert abs(tg.read_value(gs) - want_s) <= 1e-3 * max(1.0, abs(want_s))


def test_grad_through_a_packed_vector() -> None:
    xs = [cp.value(0.01 * k) for k in range(80)]
    v = cp.vector(xs)
    y = (v * v).sum()
    g = cp.grad(y, xs[5])
    assert run(g).read_value(g) == float(F32(2) * F32(0.05))


# --- errors ------------------------------------------------------------------------------------


def test_bad_input_errors() -> None:
    with pytest.raises(ValueError, match="ragged"):
        cp.array([[1.0, 2.0], [3.0]])
    with pytest.raises(ValueError, match="at least one element"):
        cp.array([])
    with pytest.raises(ValueError, match="unknown dtype"):
        cp.array([1, 2], dtype="complex")
    with pytest.raises(TypeError, match="float elements cannot go into a int array"):
        cp.array([1.5], dtype="int")
    with pytest.raises(ValueError, match="does not fit a byte array"):
        cp.array([300], dtype="byte")
    with pytest.raises(TypeError, match="truth value"):
        bool(cp.array([1.0]))
    with pytest.raises(ValueError, match=r"shapes \(3,\) and \(2,\)"):
        _ = cp.array([1.0, 2.0, 3.0]) + cp.array([1.0, 2.0])
    with pytest.raises(ValueError, match="same length"):
        cp.array([1.0, 2.0]).dot(cp.array([1.0]))
    with pytest.raises(IndexError, match="out of range"):
        _ = cp.array([1.0, 2.0])[2]
    with pytest.raises(ValueError, match="does not fit a int array"):
        cp.array(np.array([1, 2**40], dtype=np.int64))
    with pytest.raises(TypeError, match="needs int or bool operands"):
        _ = cp.array([1.0]) & cp.array([2.0])


def test_target_errors() -> None:
    a = cp.array([1.0, 2.0])
    b = a + 1.0
    tg = cp.Target()
    tg.compile(b)
    with pytest.raises(RuntimeError, match="has not run yet"):
        tg.read_value(b)
    with pytest.raises(ValueError, match="only arrays created from numbers"):
        tg.write_value(b, [0.0, 0.0])
    with pytest.raises(ValueError, match="shape"):
        tg.write_value(a, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="not compiled"):
        tg.read_value(cp.array([1.0]))
    tg.run()
    assert tg.read_value(b) == [2.0, 3.0]  # the failed writes changed nothing


def test_arrays_in_the_symbol_table_and_program_files(tmp_path: Any) -> None:
    x = np.arange(6, dtype=F32).reshape(2, 3) * F32(0.5)
    a = cp.array(x)
    c = cp.array([1.0, 2.0, 3.0] * 30)  # unnamed: a generated in<k> of all its elements
    b = a * 2.0 - 1.0
    tg = cp.Target()
    tg.compile(b, c.sum(), names={"a": a})
    got = {name: (role, dtype, shape) for name, role, dtype, shape in tg.variables()}
    assert got["a"] == ("input", "float", [2, 3])
    assert got["out0"] == ("output", "float", [2, 3])
    assert got["out1"] == ("output", "float", [])
    assert got["in0"] == ("input", "float", [90])
    tg.run()
    assert tg.read_value("out0") == (x * F32(2) - F32(1)).tolist()
    y = np.array([[1.0, -2.0, 3.5], [0.25, 8.0, -1.0]], dtype=F32)
    tg.write_value("a", y.tolist())
    tg.write_value("in0", [2.0] * 90)
    tg.run()
    assert tg.read_value("a") == y.tolist()
    assert tg.read_value("out0") == (y * F32(2) - F32(1)).tolist()
    assert tg.read_value("out1") == 180.0
    path = tmp_path / "arrays.cpy"
    tg.save(path)
    loaded = cp.load(path)
    loaded.write_value("a", x.tolist())
    loaded.run()
    assert loaded.read_value("out0") == (x * F32(2) - F32(1)).tolist()
    assert loaded.read_value("a") == x.tolist()


def test_read_value_finds_a_structurally_equal_array() -> None:
    # as for scalars (Copapy's structural identity): a freshly traced a * 2.0 + 1.0
    # reads what the compiled one computed
    xs = [0.5, -1.0, 3.25, 8.0]
    a = cp.array(xs)
    tg = run(a * 2.0 + 1.0)
    assert tg.read_value(a * 2.0 + 1.0) == [float(F32(x) * F32(2) + F32(1)) for x in xs]
    with pytest.raises(ValueError, match="not compiled for this target"):
        tg.read_value(a * 3.0)


def test_updates_refuse_arrays_with_a_clear_error() -> None:
    a = cp.array([1.0, 2.0, 3.0])
    s = cp.vector([cp.value(0.0) for _ in range(3)])
    tg = cp.Target()
    for updates in ([(s, a + 1.0)], [(a, s + 1.0)]):
        with pytest.raises(ValueError, match="a cp.array cannot be a state or next value"):
            tg.compile(s.sum(), updates=updates)
