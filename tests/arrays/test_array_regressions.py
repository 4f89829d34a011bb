"""Focused regression tests for array bugs that tests/arrays/test_array_properties.py found, each
against NumPy (float32 / int32) and run on every target by scripts/test.sh.
"""

from __future__ import annotations

import copapy as cp
import numpy as np
import refsem as R
from helpers import F32, floats, run


def test_an_array_read_twice_by_one_operation_keeps_its_memory_to_itself() -> None:
    # q * q released q's range twice: the two arrays computed next shared one range
    xs = floats(11, 501)
    q = cp.array(xs) * 2.0
    p = q * q
    c = p < 1.0
    f = p + 0.5
    tg = run(p, c, f)
    q32 = np.array(xs, F32) * F32(2)
    p32 = (q32 * q32).astype(F32)
    assert [R.f32_bits(v) for v in tg.read_value(p)] == [R.f32_bits(v) for v in p32]
    assert tg.read_value(c) == (p32 < F32(1)).tolist()
    assert [R.f32_bits(v) for v in tg.read_value(f)] == [R.f32_bits(v) for v in (p32 + F32(0.5))]


def test_int_and_bool_powers_stay_int_and_wrap() -> None:
    ints = [16777217, -3, 46341, 0, 7, -(2**31)]
    a, b = cp.array(ints), cp.array([True, False, True, True, False, False])
    outs = [a**2, a**3, a**9, a**0, a**-2, b**2, b**1]
    tg = run(*outs)
    for o, n in zip(outs[:5], (2, 3, 9, 0, -2), strict=True):
        want = [R.power(x, "int", n) for x in ints]
        assert o.dtype == want[0][1]
        assert all(R.matches(g, w, t) for g, (w, t) in zip(tg.read_value(o), want, strict=True)), n
    assert outs[5].dtype == outs[6].dtype == "int"
    assert tg.read_value(outs[5]) == tg.read_value(outs[6]) == [1, 0, 1, 1, 0, 0]


def test_float_powers_are_the_scalar_multiplications_not_powf() -> None:
    xs = floats(9, 502) + [1.1, -0.3, 3.0]
    a = cp.array(xs)
    outs = [a**3, a**7, a**12, a**-3]
    tg = run(*outs)
    for o, n in zip(outs, (3, 7, 12, -3), strict=True):
        want = [R.power(x, "float", n)[0] for x in xs]
        assert all(R.same_float(g, w) for g, w in zip(tg.read_value(o), want, strict=True)), n


def test_iif_of_int_and_bool_arrays_keeps_their_type_and_bits() -> None:
    cond = cp.array([True, False, True, False])
    ia, ib = cp.array([16777217, -1, R.INT_MIN, 5]), cp.array([1, 2, 3, R.INT_MAX])
    ba, bb = cp.array([True, True, False, False]), cp.array([False, True, False, True])
    outs = [cp.iif(cond, ia, ib), cp.iif(cond, ba, bb), cp.iif(cond, ia, 2.5), cp.iif(cond, 7, ib)]
    assert [o.dtype for o in outs] == ["int", "bool", "float", "int"]
    tg = run(*outs)
    assert tg.read_value(outs[0]) == [16777217, 2, R.INT_MIN, R.INT_MAX]
    assert tg.read_value(outs[1]) == [True, True, False, True]
    assert tg.read_value(outs[2]) == [float(F32(16777217)), 2.5, float(F32(R.INT_MIN)), 2.5]
    assert tg.read_value(outs[3]) == [7, 2, 7, R.INT_MAX]


def test_iif_broadcasts_its_operands_and_takes_a_scalar_condition() -> None:
    m = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    a = cp.array(m)
    row = cp.array([10.0, 20.0, 30.0, 40.0])
    flag = cp.value(True)
    outs = [cp.iif(a > 0, row, a), cp.iif(flag, a, row), cp.iif(a.sum(axis=1, keepdims=True) > 0, a, 0.0)]
    tg = run(*outs)
    assert tg.read_value(outs[0]) == np.where(m > 0, np.array([10, 20, 30, 40], F32), m).tolist()
    assert tg.read_value(outs[1]) == m.tolist()
    tg.write_value(flag, False)
    tg.run()
    assert tg.read_value(outs[1]) == np.broadcast_to(np.array([10, 20, 30, 40], F32), (3, 4)).tolist()
    assert tg.read_value(outs[2]) == np.where(m.sum(axis=1, keepdims=True) > 0, m, F32(0)).tolist()


def test_a_gathered_array_with_constant_elements_keeps_them_in_every_run() -> None:
    # the constants of a gathered array are written once into the initial data image; its
    # range was taken from a dead array, whose step overwrote them during the run
    v = cp.value(3)
    dead = cp.array([v * 2, v * 3]) + 1  # computed, dead after its sum
    total = dead.sum()
    packed = cp.array([v - v, v * 5])  # v - v is the constant 0
    out = packed * 10
    tg = run(total, out)
    assert (tg.read_value(total), tg.read_value(out)) == (17, [0, 150])
    tg.write_value(v, -4)
    tg.run()
    assert (tg.read_value(total), tg.read_value(out)) == (-18, [0, -200])


def test_a_scalar_condition_chain_of_iifs_on_arrays() -> None:
    # found as iif(v <= abs(v), iif(v < v, b, v), v): v < v folds to a constant condition
    v = cp.value(True)
    b = cp.array([False, False, False])
    out = cp.iif(v <= abs(v), cp.iif(v < v, b, v), v)
    tg = run(out)
    assert tg.read_value(out) == [True, True, True]
    tg.write_value(v, False)
    tg.run()
    # v <= abs(v) is 0 <= 0: the inner iif, whose condition 0 < 0 is false: v
    assert tg.read_value(out) == [False, False, False]


def test_subnormals_compare_as_numpy_in_vectorised_loops() -> None:
    # ARMv7's NEON flushes subnormals to zero in comparisons: min(0, 1e-45) gave 1e-45
    tiny = [1e-45, -1e-45, 1.1754942e-38, -5e-39, 0.0, -0.0, 3e-40, -1e-44] * 2
    zeros = [0.0, 0.0, -0.0, 0.0, 1e-45, -1e-45, 0.0, -0.0] * 2
    a, b = cp.array(tiny), cp.array(zeros)
    outs = [cp.minimum(a, b), cp.maximum(a, b), a < b, a <= b, a > b, a >= b, a == b, a != b,
            a.min(), a.max(), cp.sort(a)]
    tg = run(*outs)
    x, y = np.array(tiny, F32), np.array(zeros, F32)
    wants = [np.minimum(x, y), np.maximum(x, y), x < y, x <= y, x > y, x >= y, x == y, x != y]
    for o, w in zip(outs[:8], wants, strict=True):
        got = tg.read_value(o)
        if w.dtype == np.bool_:
            assert got == w.tolist()
        else:
            assert [R.f32_bits(g) for g in got] == [R.f32_bits(v) for v in w]
    assert R.f32_bits(tg.read_value(outs[8])) == R.f32_bits(np.min(x))
    assert R.f32_bits(tg.read_value(outs[9])) == R.f32_bits(np.max(x))
    want_sorted = np.sort(x, kind="stable")
    assert [R.f32_bits(g) for g in tg.read_value(outs[10])] == [R.f32_bits(v) for v in want_sorted]
