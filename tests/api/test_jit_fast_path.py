"""The planned (fast) path of a repeated `@cp.jit` call and of a repeated `Target` round trip.

A jit specialisation binds a call whose arguments have exactly the built-in types it was
traced with (`float`, `int`, `bool`, `list`, `tuple`, a C-contiguous `numpy.ndarray` with
the traced dtype object) by its argument plan (crates/copapy-python/src/jit_args.rs);
every other argument (a subclass, a NumPy scalar, a strided or byte-swapped array, an
int beyond int32) goes the general way. `Target.write_value` / `read_value` remember the
list of variables last written and read in bulk (src/target/remembered.rs). Each test
warms the fast path up, then calls with its edge cases in between and after, and compares
every result with NumPy float32 / Python floats rounded to float32, never with copapy.
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
EXAMPLES = 15 if os.environ.get("COPAPY_TEST_TARGET") else 120
FLOATS32 = st.floats(width=32, allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6)


def wrap32(n: int) -> int:
    """int32 arithmetic: ``n`` wrapped to 32 bits (two's complement)."""
    return (n + 2**31) % 2**32 - 2**31


def to_f32(x: Any) -> Any:
    """A Python number rounded once to float32 (beyond its range: infinity)."""
    with np.errstate(over="ignore"):
        return f32(float(x))


def bits(x: Any) -> int:
    """The float32 bit pattern of a number (a result of copapy or of NumPy)."""
    return int(np.array(x, dtype=np.float32).view(np.int32))


def pid_like(state: Any, meas: Any) -> Any:
    e = meas[0] - meas[1]
    grown = state[0] + e * 0.01
    return 2.0 * e + 0.5 * grown, grown, e - state[1]


def pid_reference(state: Any, meas: Any) -> tuple[Any, ...]:
    s = [f32(v) for v in state]
    m = [f32(v) for v in meas]
    e = m[0] - m[1]
    grown = s[0] + e * f32(0.01)
    return f32(2.0) * e + f32(0.5) * grown, grown, e - s[1]


def check_pid(fn: Any, state: Any, meas: Any, state_ref: Any = None, meas_ref: Any = None) -> None:
    got = fn(state, meas)
    want = pid_reference(state if state_ref is None else state_ref,
                         meas if meas_ref is None else meas_ref)
    assert isinstance(got, tuple) and len(got) == 3
    assert all(type(g) is float for g in got)
    assert [bits(g) for g in got] == [bits(w) for w in want]


@settings(max_examples=EXAMPLES, deadline=None)
@given(hnp.arrays(np.float32, 2, elements=FLOATS32), hnp.arrays(np.float32, 2, elements=FLOATS32))
def test_float32_arrays_repeated_match_numpy(state: np.ndarray[Any, Any], meas: np.ndarray[Any, Any]) -> None:
    fn = _PID
    check_pid(fn, state, meas)
    # the same arrays changed in place: the plan reads them afresh
    state[0] = f32(state[0]) + f32(1.0)
    check_pid(fn, state, meas)


_PID = cp.jit(pid_like)


def test_array_edge_cases_between_fast_calls_match_numpy() -> None:
    fn = cp.jit(pid_like)
    state, meas = np.array([0.3, 0.1], f32), np.array([1.0, 0.25], f32)
    check_pid(fn, state, meas)
    wide = np.array([0.3, 99.0, 0.1, 99.0], f32)
    swapped = np.array([1.0, 0.25], ">f4")

    class Sub(np.ndarray):
        pass

    cases: list[tuple[Any, Any]] = [
        (wide[::2], meas),  # strided view: same signature, general path
        (state, swapped),  # byte-swapped: another format, its own specialisation
        (state.astype(np.float64) + 1e-9, meas),  # float64, rounded once to float32
        (state.view(Sub), meas.view(Sub)),  # ndarray subclass
        (np.array([0.3, 0.1, 7.0], f32), meas),  # another shape
        (np.asfortranarray(state), meas),
        (state.copy(), meas.copy()),  # equal but distinct arrays
    ]
    for s, m in cases:
        check_pid(fn, s, m, [f32(v) for v in np.asarray(s, np.float64)], [f32(v) for v in np.asarray(m)])
        check_pid(fn, state, meas)  # the fast path again after each


def test_packed_arrays_repeated_and_strided() -> None:
    @cp.jit
    def scale(a: Any) -> Any:
        return a * 3.0 + 1.0

    x = np.linspace(-2.0, 2.0, 100, dtype=f32)
    for k in range(3):
        x[k] = f32(k) * f32(0.5)
        got = scale(x)
        assert got.dtype == np.float32
        assert got.tobytes() == (x * f32(3.0) + f32(1.0)).tobytes()
    big = np.linspace(-1.0, 1.0, 200, dtype=f32)
    for arg in (big[::2], big[1::2].copy(), big[::2].astype(">f4")):
        want = np.asarray(arg, np.float32) * f32(3.0) + f32(1.0)
        assert scale(arg).tobytes() == want.tobytes()


def test_int_arrays_and_their_overflow_error() -> None:
    @cp.jit
    def add(a: Any) -> Any:
        return a[0] + a[1]

    assert add(np.array([3, 4], np.int32)) == 7
    assert add(np.array([-5, 4], np.int32)) == -1
    assert add(np.array([2**31 - 1, -1], np.int64)) == 2**31 - 2
    with pytest.raises(OverflowError, match="does not fit in int32"):
        add(np.array([2**40, 1], np.int64))
    assert add(np.array([10, 20], np.int64)) == 30
    assert add(np.array([10, 20], np.int32)) == 30


def scalar_fn(x: Any, n: Any, b: Any) -> Any:
    return x * 3.0, n * 2, cp.iif(b, x, -x)


def test_python_scalars_and_their_look_alikes() -> None:
    fn = cp.jit(scalar_fn)

    class F(float):
        pass

    class I(int):  # noqa: E742
        pass

    def check(x: Any, n: Any, b: Any) -> None:
        got = fn(x, n, b)
        xf = to_f32(x)
        with np.errstate(over="ignore"):
            assert bits(got[0]) == bits(xf * f32(3.0))
        assert got[1] == wrap32(int(n) * 2) and type(got[1]) is int
        assert bits(got[2]) == bits(xf if b else -xf)

    check(0.1, 3, True)
    cases: list[tuple[Any, Any, Any]] = [
        (F(0.7), 3, False), (np.float32(1.5), 4, True), (np.float64(1 / 3), 5, np.bool_(False)),
        (1e300, I(6), True), (-0.0, np.int64(-7), False), (2.5, 2**31 - 1, True),
        (float("inf"), -(2**31), False)]
    for x, n, b in cases:
        check(x, n, b)
        check(0.1 + int(n) % 3, 3, True)
    with pytest.raises(OverflowError, match="does not fit in int32"):
        fn(0.1, 2**31, True)
    with pytest.raises(OverflowError, match="far outside the int32 range"):
        fn(0.1, 2**200, True)
    # a bool where an int was traced is another signature, not the int plan
    assert fn(0.5, True, True)[1] == 2
    check(0.25, 9, False)


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.floats(width=64, allow_nan=False), st.integers(-(2**30), 2**30 - 1), st.booleans())
def test_python_scalars_round_once_to_float32(x: float, n: int, b: bool) -> None:
    got = _SCALAR(x, n, b)
    xf = to_f32(x)
    with np.errstate(over="ignore"):
        assert bits(got[0]) == bits(xf * f32(3.0))
    assert got[1] == n * 2
    assert bits(got[2]) == bits(xf if b else -xf)


_SCALAR = cp.jit(scalar_fn)


def test_lists_tuples_and_objects() -> None:
    class Gain:
        k = 4.0

    gain = Gain()

    @cp.jit
    def fn(obj: Any, xs: Any, pair: Any) -> Any:
        return [xs[0] * obj.k + pair[1], xs[1] - pair[0]]

    def check(obj: Any, xs: Any, pair: Any) -> None:
        got = fn(obj, xs, pair)
        assert type(got) is list
        want = [f32(xs[0]) * f32(obj.k) + f32(pair[1]), f32(xs[1]) - f32(pair[0])]
        assert [bits(g) for g in got] == [bits(w) for w in want]

    check(gain, [1.5, 2.5], (0.25, 0.75))

    class L(list):  # type: ignore[type-arg]
        pass

    other = Gain()
    other.k = 5.0
    for args in [(gain, L([1.0, 2.0]), (0.5, 0.5)), (gain, [1.0, 2.0], [0.5, 0.5]),
                 (other, [3.0, 4.0], (1.0, 2.0)), (gain, [np.float32(1.25), 2.0], (0.5, 0.5))]:
        check(*args)
        check(gain, [0.1, 0.2], (0.3, 0.4))


def test_arrays_in_a_list_and_a_method() -> None:
    class Filter:
        def __init__(self) -> None:
            self.alpha = 0.25

        @cp.jit
        def step(self, xs: Any) -> Any:
            return xs[0][0] * self.alpha + xs[1][1]

    flt = Filter()
    a, b = np.array([1.0, 2.0], f32), np.array([3.0, 4.0], f32)
    for k in range(3):
        a[0] = f32(k)
        assert bits(flt.step([a, b])) == bits(a[0] * f32(0.25) + b[1])
    assert bits(flt.step([a[::1], b.astype(np.float64)])) == bits(a[0] * f32(0.25) + b[1])


# ---------------------------------------------------------------------- Target round trip


def round_trip_program() -> tuple[Any, list[Any], list[Any]]:
    ins = [cp.value(0.0) for _ in range(4)]
    outs = [ins[0] * ins[1] + ins[2], ins[3] - ins[0], ins[2] * 2.0]
    tg = cp.Target()
    tg.compile(outs)
    return tg, ins, outs


def expected(x: Any) -> list[int]:
    v = [f32(e) for e in np.asarray(x, np.float64)]
    return [bits(w) for w in (v[0] * v[1] + v[2], v[3] - v[0], v[2] * f32(2.0))]


@settings(max_examples=max(EXAMPLES // 8, 5), deadline=None)
@given(hnp.arrays(np.float32, 4, elements=FLOATS32))
def test_target_round_trip_repeated_matches_numpy(x: np.ndarray[Any, Any]) -> None:
    tg, ins, outs = round_trip_program()
    for k in range(3):
        x[3] = f32(k)
        tg.write_value(ins, x)
        tg.run()
        got = tg.read_value(outs)
        assert type(got) is list and [bits(g) for g in got] == expected(x)


def test_target_round_trip_edge_cases_between_remembered_calls() -> None:
    tg, ins, outs = round_trip_program()
    x = np.array([1.5, 2.0, 0.25, 3.0], f32)

    def step(vars_: Any, data: Any, want: Any) -> None:
        tg.write_value(vars_, data)
        tg.run()
        assert [bits(g) for g in tg.read_value(outs)] == expected(want)

    step(ins, x, x)
    step(ins, x, x)  # remembered now
    wide = np.array([9.0, 1.5, 9.0, 2.0, 9.0, 0.25, 9.0, 3.0], f32)

    class Sub(np.ndarray):
        pass

    for data in [wide[1::2], x.astype(np.float64) / 3, x.astype(">f4"), x.view(Sub), [0.5, 1.0, 2.0, 4.0],
                 np.array([1, 2, 3, 4], np.int32)]:
        step(ins, data, data)
        step(ins, x, x)
    # another list of the same values, a tuple, a reordered list
    step(list(ins), x, x)
    step(tuple(ins), x, x)
    step(ins[::-1], x, x[::-1])
    step(ins, x, x)
    # the list itself changed: resolved again
    mine = list(ins)
    step(mine, x, x)
    mine.reverse()
    step(mine, x, x[::-1])
    step(ins, x, x)
    # a failed write changes nothing; the error is the bulk path's
    with pytest.raises(ValueError):
        tg.write_value(ins, np.array([1.0, 2.0, 3.0], f32))
    tg.run()
    assert [bits(g) for g in tg.read_value(outs)] == expected(x)
    with pytest.raises(ValueError, match="only input variables"):
        tg.write_value(outs[:1] + ins[1:], x)


def test_target_remembered_lists_are_forgotten_by_compile() -> None:
    tg, ins, outs = round_trip_program()
    x = np.array([1.0, 2.0, 3.0, 4.0], f32)
    for _ in range(2):
        tg.write_value(ins, x)
        tg.run()
        assert [bits(g) for g in tg.read_value(outs)] == expected(x)
    other = [ins[0] + ins[1]]
    tg.compile(other)
    with pytest.raises(RuntimeError, match="has not run yet"):
        tg.read_value(other)
    tg.write_value(ins[:2], x[:2])
    tg.run()
    assert [bits(g) for g in tg.read_value(other)] == [bits(x[0] + x[1])]
    with pytest.raises(ValueError, match="not compiled"):
        tg.read_value(outs)
