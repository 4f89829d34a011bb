"""Target API: compile / run / read_value / write_value, state between runs, several targets,
recompiling, lists, value construction and result types."""

from __future__ import annotations

import math

import copapy as cp
import numpy as np
import pytest
import refsem as R


def test_value_type_from_python_value() -> None:
    f, i, b = cp.value(0.25), cp.value(3), cp.value(True)
    assert (f.dtype, i.dtype, b.dtype) == ("float", "int", "bool")
    tg = cp.Target()
    tg.compile(f, i, b)
    tg.run()
    got = [tg.read_value(f), tg.read_value(i), tg.read_value(b)]
    assert got == [0.25, 3, True]
    assert [type(g) for g in got] == [float, int, bool]


def test_value_explicit_dtype() -> None:
    f, i, b, b0 = cp.value(3, "float"), cp.value(-4, "int"), cp.value(1, "bool"), cp.value(0, "bool")
    assert (f.dtype, i.dtype, b.dtype, b0.dtype) == ("float", "int", "bool", "bool")
    tg = cp.Target()
    tg.compile([f, i, b, b0])
    tg.run()
    got = tg.read_value([f, i, b, b0])
    assert got == [3.0, -4, True, False]
    assert [type(g) for g in got] == [float, int, bool, bool]


def test_input_is_rounded_to_float32() -> None:
    a = cp.value(0.1)
    tg = cp.Target()
    tg.compile(a)
    tg.run()
    assert tg.read_value(a) == float(np.float32(0.1))


def test_write_run_read_round_trip() -> None:
    a, b = cp.value(1.0), cp.value(2)
    c = a * 2.0 + 1.0
    d = b * 3 - 1
    tg = cp.Target()
    tg.compile(c, d)
    tg.run()
    assert (tg.read_value(c), tg.read_value(d)) == (3.0, 5)
    tg.write_value(a, 5.0)
    tg.write_value(b, -7)
    # Written inputs are visible before running; the outputs change only when run.
    assert tg.read_value(a) == 5.0 and tg.read_value(b) == -7
    assert (tg.read_value(c), tg.read_value(d)) == (3.0, 5)
    tg.run()
    assert (tg.read_value(c), tg.read_value(d)) == (11.0, -22)
    tg.run()  # no write in between: same state, same results
    assert (tg.read_value(c), tg.read_value(d)) == (11.0, -22)


def test_write_int_into_float_value_and_bool_into_bool_value() -> None:
    a, flag = cp.value(0.5), cp.value(False)
    c = a + 1.0
    g = flag | cp.value(False)
    tg = cp.Target()
    tg.compile(c, g)
    tg.write_value(a, 3)
    tg.write_value(flag, True)
    tg.run()
    assert tg.read_value(c) == 4.0 and type(tg.read_value(c)) is float
    assert tg.read_value(g) is True


def test_write_and_read_lists() -> None:
    xs = [cp.value(float(i)) for i in range(5)]
    ys = [x * x for x in xs]
    tg = cp.Target()
    tg.compile(ys)
    tg.write_value(xs, [1.5, -2.0, 3.0, 0.0, 10.0])
    tg.run()
    assert tg.read_value(ys) == [2.25, 4.0, 9.0, 0.0, 100.0]
    assert tg.read_value((ys[0], 7, 2.5)) == [2.25, 7, 2.5]
    assert tg.read_value(2.5) == 2.5
    assert tg.read_value(7) == 7


def test_compile_accepts_lists_tuples_and_ignores_numbers() -> None:
    a = cp.value(2.0)
    b, c, d = a + 1.0, a * 3.0, a - 4.0
    tg = cp.Target()
    tg.compile([b, 1.0, 2], (c,), d, 5)
    tg.run()
    assert tg.read_value([b, c, d]) == [3.0, 6.0, -2.0]


def test_two_targets_have_independent_data() -> None:
    a = cp.value(1.0)
    c = a * 10.0
    t1, t2 = cp.Target(), cp.Target()
    t1.compile(c)
    t2.compile(c)
    t1.write_value(a, 2.0)
    t2.write_value(a, 3.0)
    t1.run()
    t2.run()
    assert t1.read_value(c) == 20.0
    assert t2.read_value(c) == 30.0
    t1.write_value(a, 4.0)
    t1.run()
    assert t1.read_value(c) == 40.0
    assert t2.read_value(c) == 30.0


def test_many_targets_coexist() -> None:
    a = cp.value(1)
    targets = []
    for k in range(1, 21):
        e = a * k + k
        tg = cp.Target()
        tg.compile(e)
        tg.write_value(a, k)
        targets.append((tg, e, k))
    for tg, e, k in targets:
        tg.run()
        assert tg.read_value(e) == k * k + k


def test_recompile_runs_the_new_program() -> None:
    a, b = cp.value(3.0), cp.value(4)
    first = a * 2.0
    second = b - 10
    tg = cp.Target()
    tg.compile(first)
    tg.run()
    assert tg.read_value(first) == 6.0
    tg.compile(second)
    tg.run()
    assert tg.read_value(second) == -6
    tg.write_value(b, 100)
    tg.run()
    assert tg.read_value(second) == 90
    with pytest.raises(ValueError, match="(?i)compile"):
        tg.read_value(first)
    tg.compile(first, second)  # and back again, with both
    tg.run()
    assert tg.read_value([first, second]) == [6.0, -6]


def test_target_garbage_collection_does_not_break_others() -> None:
    a = cp.value(1.0)
    e = a + 1.0
    keep = cp.Target()
    keep.compile(e)
    for _ in range(50):
        tmp = cp.Target()
        tmp.compile(e)
        tmp.run()
        del tmp
    keep.run()
    assert keep.read_value(e) == 2.0


def test_deep_chain_and_wide_fan_in() -> None:
    """A long dependency chain (register reuse) and a sum over many inputs (memory operands)."""
    x = cp.value(1.0)
    acc = x
    want = np.float32(1.0)
    for k in range(2000):
        acc = acc * 1.0001 + 0.5 if k % 2 else acc - 0.25
        with np.errstate(all="ignore"):
            want = want * np.float32(1.0001) + np.float32(0.5) if k % 2 else want - np.float32(0.25)
    ins = [cp.value(float(k)) for k in range(300)]
    total = ins[0]
    for v in ins[1:]:
        total = total + v
    want_total = np.float32(0.0)
    for k in range(1, 300):
        want_total = np.float32(want_total + np.float32(k))
    tg = cp.Target()
    tg.compile(acc, total)
    tg.run()
    assert R.same_float(tg.read_value(acc), want)
    assert tg.read_value(total) == float(want_total)


# ---------------------------------------------------------------- errors


def test_read_value_not_compiled() -> None:
    a = cp.value(1.0)
    b = a + 1.0
    other = cp.value(5.0) * 2.0
    tg = cp.Target()
    tg.compile(b)
    tg.run()
    with pytest.raises(ValueError, match="(?i)compile"):
        tg.read_value(other)
    with pytest.raises(ValueError, match="(?i)compile"):
        tg.read_value([b, other])


def test_write_value_not_compiled() -> None:
    a = cp.value(1.0)
    stranger = cp.value(2.0)
    tg = cp.Target()
    tg.compile(a + 1.0)
    with pytest.raises(ValueError, match="(?i)compile"):
        tg.write_value(stranger, 3.0)


def test_write_value_wrong_type() -> None:
    i, f, b = cp.value(1), cp.value(1.0), cp.value(True)
    tg = cp.Target()
    tg.compile(i + 1, f + 1.0, b | b)
    with pytest.raises(TypeError):
        tg.write_value(i, 1.5)
    with pytest.raises(TypeError):
        tg.write_value(i, "1")
    with pytest.raises(TypeError):
        tg.write_value(f, "1.0")
    with pytest.raises(TypeError):
        tg.write_value(b, "yes")
    with pytest.raises(TypeError):
        tg.write_value(f, None)  # type: ignore[arg-type]
    # A failed write changes nothing.
    tg.run()
    assert tg.read_value(i) == 1 and tg.read_value(f) == 1.0


def test_compile_nothing() -> None:
    tg = cp.Target()
    with pytest.raises(ValueError):
        tg.compile()


def test_run_before_compile() -> None:
    tg = cp.Target()
    with pytest.raises(RuntimeError, match="(?i)compile"):
        tg.run()


def test_truth_value_points_to_iif() -> None:
    with pytest.raises(TypeError, match="iif"):
        if cp.value(1) > 0:
            pass
    with pytest.raises(TypeError, match="iif"):
        bool(cp.value(1.0))
    with pytest.raises(TypeError, match="iif"):
        _ = cp.value(2) if cp.value(1.0) else 3


@pytest.mark.parametrize("other", ["a", [1], None, (1.0,), {1: 2}, b"x"])
def test_unsupported_operand_types(other: object) -> None:
    v = cp.value(1.0)
    for make in (lambda: v + other, lambda: other + v, lambda: v * other, lambda: v < other,
                 lambda: v - other, lambda: other / v):
        with pytest.raises(TypeError):
            make()


def test_bitwise_on_floats_is_a_type_error() -> None:
    f, i = cp.value(1.0), cp.value(1)
    for make in (lambda: f & i, lambda: i | f, lambda: f ^ 1, lambda: 1 & f, lambda: f << 1,
                 lambda: 1 >> f, lambda: i & 1.0, lambda: 1.0 | i, lambda: i << 2.0):
        with pytest.raises(TypeError):
            make()


def test_math_on_python_numbers_returns_python_floats() -> None:
    assert cp.sqrt(4) == 2.0 and type(cp.sqrt(4)) is float
    assert cp.sin(0.5) == math.sin(0.5) and type(cp.sin(0.5)) is float
    assert cp.cos(2) == math.cos(2) and type(cp.cos(2)) is float


def test_math_results_are_float_values() -> None:
    for v in (cp.value(2.0), cp.value(2), cp.value(True)):
        for fn in (cp.sqrt, cp.sin, cp.cos):
            assert fn(v).dtype == "float"


def test_write_special_floats_and_int_limits() -> None:
    f, i, flag = cp.value(0.0), cp.value(0), cp.value(False)
    g = f * 2.0  # the written bits also pass through an operation
    tg = cp.Target()
    tg.compile(g, f, i + 0, i, flag | flag, flag)
    for x in (math.inf, -math.inf, math.nan, -0.0, 1.401298464324817e-45, 1e40, 0.1, -3.4e38):
        tg.write_value(f, x)
        tg.run()
        want = R.f32(x)
        assert R.same_float(tg.read_value(f), want), x
        assert R.same_float(tg.read_value(g), R.binop("mul", float(want), "float", 2.0, "float")[0]), x
    for n in (R.INT_MAX, R.INT_MIN, -1, True):
        tg.write_value(i, n)
        tg.run()
        assert tg.read_value(i) == int(n) and type(tg.read_value(i)) is int
    for bv in (True, False, 1, 0):
        tg.write_value(flag, bv)
        tg.run()
        assert tg.read_value(flag) is bool(bv)


def test_inputs_with_equal_initial_values_are_distinct() -> None:
    xs = [cp.value(0.0) for _ in range(4)]
    ks = [cp.value(7) for _ in range(4)]
    s = xs[0] - xs[1] + xs[2] * xs[3]
    t = ks[0] * 1000 + ks[1] * 100 + ks[2] * 10 + ks[3]
    tg = cp.Target()
    tg.compile(s, t)
    tg.write_value(xs, [1.0, 2.0, 3.0, 4.0])
    tg.write_value(ks, [1, 2, 3, 4])
    tg.run()
    assert tg.read_value([s, t]) == [11.0, 1234]


def test_compile_duplicates_and_inputs_as_outputs() -> None:
    x = cp.value(2.0)
    y = x + 1.0
    tg = cp.Target()
    tg.compile(y, y, [y, x])
    tg.run()
    assert tg.read_value([y, y, x]) == [3.0, 3.0, 2.0]


def test_recompile_many_times() -> None:
    a = cp.value(1)
    tg = cp.Target()
    for k in range(300):
        e = a * 2 + k
        tg.compile(e)
        tg.write_value(a, k)
        tg.run()
        assert tg.read_value(e) == 3 * k


def test_intermediate_values_still_held_are_readable_after_compile() -> None:
    """Copapy's README reads an intermediate (the end effector) that was not passed to
    compile; every value the program computes and Python still holds stays readable."""
    a = cp.value(0.5)
    b = cp.sin(a) * 2.0
    c = b * b + 1.0
    tg = cp.Target()
    tg.compile(c)
    tg.run()
    sb = np.float32(2.0) * np.float32(np.sin(np.float32(0.5)))
    assert abs(tg.read_value(b) - float(sb)) <= float(np.spacing(sb))
    tg.write_value(a, 1.5)
    tg.run()
    sb = np.float32(2.0) * np.float32(np.sin(np.float32(1.5)))
    assert abs(tg.read_value(b) - float(sb)) <= float(np.spacing(sb))
    with pytest.raises(ValueError, match="only input variables"):
        tg.write_value(b, 1.0)


def test_compiling_a_dict_is_a_clear_error() -> None:
    with pytest.raises(TypeError, match="cannot compile a dict"):
        cp.Target().compile({"x": cp.value(1.0)})


def test_numpy_scalars_and_big_ints_are_written_with_their_meaning() -> None:
    i, f, b = cp.value(3), cp.value(1.5), cp.value(True)
    tg = cp.Target()
    tg.compile(i, f, b)
    tg.write_value(i, np.int64(-7))
    tg.write_value(f, 10**40)  # an int rounds into a float variable like any other
    tg.write_value(b, np.bool_(False))
    assert tg.read_value([i, f, b]) == [-7, math.inf, False]  # 1e40 rounds to inf in float32
    with pytest.raises(TypeError, match="to an int value"):
        tg.write_value(i, float("nan"))


def test_float_source_for_an_int_value_follows_int() -> None:
    tg = cp.Target()
    v = cp.value(-2.75, "int")
    tg.compile(v)
    assert tg.read_value(v) == -2
    for bad in (float("nan"), float("inf"), 3e9):
        with pytest.raises(ValueError, match="int32 range"):
            cp.value(bad, "int")
