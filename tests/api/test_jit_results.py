"""A repeated `@cp.jit` call refills the list or tuple it returned last, when nobody holds it.

A result of numbers (or of numbers, constants and lists or tuples of numbers) is kept by its
specialisation; the next call sets its items instead of building a new container when the
caller let go of it (crates/copapy-python/src/jit_output.rs). What must never happen: a
result the caller still holds (itself, or a list inside it) changes, a list the caller changed
before letting it go comes back with the wrong length or items, or a failed call disturbs the
next. Every result is compared with NumPy float32 (or Python ints and bools), never with
copapy, and every result still held is compared again after later calls.
"""

from __future__ import annotations

import gc
from typing import Any

import copapy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

f32 = np.float32
FLOATS32 = st.floats(width=32, allow_nan=False, allow_infinity=False, min_value=-1e6, max_value=1e6)


def wrap32(n: int) -> int:
    """int32 arithmetic: ``n`` wrapped to 32 bits (two's complement)."""
    return (n + 2**31) % 2**32 - 2**31


def bits(xs: Any) -> list[int]:
    """The float32 bit patterns of numbers (copapy's results or NumPy's), flattened."""
    return [int(v) for v in np.asarray(xs, dtype=np.float32).reshape(-1).view(np.int32)]


def step(a: Any, b: Any) -> Any:
    """A tuple of three numbers (PID-like), a list of two, a nested tuple of lists."""
    s = a[0] * b[0] + a[1]
    d = a[1] - b[1]
    return (s, d, s * d), [d, s], ([s, d, a[0]], [b[1] * 2.0])


def step_reference(a: Any, b: Any) -> Any:
    a, b = np.asarray(a, f32), np.asarray(b, f32)
    s = a[0] * b[0] + a[1]
    d = a[1] - b[1]
    return (s, d, s * d), [d, s], ([s, d, a[0]], [b[1] * f32(2.0)])


def check_step(got: Any, a: Any, b: Any) -> None:
    want = step_reference(a, b)
    assert type(got) is tuple and len(got) == 3
    triple, pair, nested = got
    assert type(triple) is tuple and len(triple) == 3 and all(type(x) is float for x in triple)
    assert type(pair) is list and len(pair) == 2 and all(type(x) is float for x in pair)
    assert type(nested) is tuple and [type(p) for p in nested] == [list, list]
    assert [len(p) for p in nested] == [3, 1]
    assert bits(triple) == bits(want[0]) and bits(pair) == bits(want[1])
    assert bits(nested[0]) == bits(want[2][0]) and bits(nested[1]) == bits(want[2][1])


def test_a_dropped_result_is_refilled_and_a_held_one_never_changes() -> None:
    fn = cp.jit(step)
    a, b = np.array([0.5, -1.25], f32), np.array([3.0, 0.75], f32)
    check_step(fn(a, b), a, b)  # the first result is dropped: refilled by the next call
    first = fn(a, b)
    check_step(first, a, b)
    # held (the whole result): the next call builds a new one
    a2, b2 = np.array([2.0, 7.5], f32), np.array([-1.0, 0.125], f32)
    second = fn(a2, b2)
    assert second is not first
    check_step(first, a, b)
    check_step(second, a2, b2)
    # parts held, the tuple around them dropped: the parts stay as they were
    triple, pair, nested = fn(a, b)
    inner = nested[0]
    del nested
    for k in range(3):
        x = np.array([k * 0.5 - 1.0, 3.0 + k], f32)
        check_step(fn(x, b2), x, b2)
    assert bits(triple) == bits(step_reference(a, b)[0])
    assert bits(pair) == bits(step_reference(a, b)[1])
    assert bits(inner) == bits(step_reference(a, b)[2][0])
    check_step(first, a, b)
    check_step(second, a2, b2)


def test_a_refilled_result_is_the_same_object_when_nobody_held_it() -> None:
    # the refill is what this module is about: make sure the calls above took it
    fn = cp.jit(step)
    a, b = np.array([0.5, -1.25], f32), np.array([3.0, 0.75], f32)
    first_id = id(fn(a, b))
    x = np.array([4.0, -2.5], f32)
    again = fn(x, b)
    assert id(again) == first_id
    check_step(again, x, b)


@pytest.mark.parametrize("change", ["append", "pop", "replace", "clear", "self", "sort"])
def test_a_list_changed_by_its_holder_comes_back_right(change: str) -> None:
    @cp.jit
    def pair(a: Any) -> Any:
        return [a[0] + a[1], a[0] * a[1], a[1]]

    def want(a: Any) -> list[Any]:
        a = np.asarray(a, f32)
        return [a[0] + a[1], a[0] * a[1], a[1]]

    a = np.array([1.5, -0.25], f32)
    got = pair(a)
    if change == "append":
        got.append(9.0)
    elif change == "pop":
        got.pop()
    elif change == "replace":
        got[1] = "not a number"
    elif change == "clear":
        got.clear()
    elif change == "self":
        got.append(got)  # a cycle: freed by the collector, never refilled
    else:
        got.sort()
    del got
    gc.collect()
    for x in ([2.0, 3.0], [-4.5, 0.5], [1e6, -1e-6]):
        arr = np.array(x, f32)
        res = pair(arr)
        assert type(res) is list and len(res) == 3 and all(type(v) is float for v in res)
        assert bits(res) == bits(want(arr))


def test_results_of_every_form_with_constants_and_ints() -> None:
    @cp.jit
    def forms(a: Any, n: Any) -> Any:
        x = a[0] * 3.0
        return (x, n + 1, x > a[1], None, "tag", 2.5), [[x], (n * 2, x)], {"x": x}, x

    def want(a: Any, n: int) -> Any:
        x = f32(a[0]) * f32(3.0)
        return ((x, wrap32(n + 1), bool(x > f32(a[1])), None, "tag", 2.5), [[x], (wrap32(n * 2), x)],
                {"x": x}, x)

    held = []
    for k, (a, n) in enumerate([((0.5, 1.0), 3), ((2.0, -1.0), -8), ((-1.5, -9.0), 2**30)]):
        got = forms(list(a), n)
        ref = want(a, n)
        assert type(got[0]) is tuple and bits(got[0][0]) == bits(ref[0][0])
        assert got[0][1:] == ref[0][1:] and type(got[0][1]) is int and type(got[0][2]) is bool
        assert type(got[1]) is list and type(got[1][0]) is list and type(got[1][1]) is tuple
        assert bits(got[1][0]) == bits(ref[1][0]) and got[1][1][0] == ref[1][1][0]
        assert bits(got[1][1][1]) == bits(ref[1][1][1])
        assert bits(got[2]["x"]) == bits(ref[2]["x"]) and bits(got[3]) == bits(ref[3])
        if k == 1:
            held.append((got, ref))
    got, ref = held[0]
    assert got[0][1:] == ref[0][1:] and bits(got[1][0]) == bits(ref[1][0])


def test_a_list_of_a_list_and_a_tuple_is_refilled_level_by_level() -> None:
    @cp.jit
    def rows(a: Any, n: Any) -> Any:
        return [[a[0] * 2.0, a[1], None], (n * 2, a[0] - a[1], n > 0, "tag", 2.5)]

    def check(got: Any, a: Any, n: int) -> None:
        x, y = f32(a[0]), f32(a[1])
        assert type(got) is list and [type(r) for r in got] == [list, tuple]
        assert bits(got[0][:2]) == bits([x * f32(2.0), y]) and got[0][2] is None
        assert got[1][0] == n * 2 and type(got[1][0]) is int and got[1][2] is (n > 0)
        assert bits(got[1][1]) == bits(x - y) and got[1][3:] == ("tag", 2.5)

    check(rows([1.0, 2.0], 4), [1.0, 2.0], 4)
    inner = rows([0.5, 0.25], -3)[1]  # the tuple inside held, the list around it dropped
    outer = rows([8.0, 1.0], 7)
    check(outer, [8.0, 1.0], 7)
    assert inner[0] == -6 and inner[2] is False and bits(inner[1]) == bits(f32(0.5) - f32(0.25))
    del outer
    for k in range(3):
        check(rows([k * 1.5, -k], k - 1), [k * 1.5, -k], k - 1)
    assert inner[0] == -6 and inner[2] is False


def test_a_failed_call_between_refills_changes_nothing() -> None:
    fn = cp.jit(step)
    a, b = np.array([0.5, -1.25], f32), np.array([3.0, 0.75], f32)
    check_step(fn(a, b), a, b)
    kept = fn(a, b)
    with pytest.raises(TypeError, match="got a str"):
        fn(a, "ab")
    with pytest.raises(TypeError, match="1-D or 2-D NumPy arrays, got a 3-D array"):
        fn(np.ones((2, 1, 1), f32), b)
    check_step(kept, a, b)
    x = np.array([-3.0, 8.0], f32)
    check_step(fn(x, b), x, b)
    check_step(kept, a, b)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(hnp.arrays(np.float32, 2, elements=FLOATS32),
                          hnp.arrays(np.float32, 2, elements=FLOATS32),
                          st.sampled_from(["drop", "hold", "hold_part", "collect"])),
                min_size=1, max_size=8))
def test_any_sequence_of_held_and_dropped_results_matches_numpy(
        calls: list[tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], str]]) -> None:
    held: list[tuple[Any, Any, Any]] = []
    for a, b, what in calls:
        got = _STEP(a, b)
        check_step(got, a, b)
        if what == "hold":
            held.append((got, a.copy(), b.copy()))
        elif what == "hold_part":
            held.append(((got[0], got[1], got[2]), a.copy(), b.copy()))
        elif what == "collect":
            gc.collect()
        del got
    for got, a, b in held:
        check_step(got, a, b)


_STEP = cp.jit(step)
