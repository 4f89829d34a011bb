"""cp.fori_loop / cp.scan: loops compiled once, against independent references.

Every result is compared with a NumPy float32 / int32 computation of the same
recurrence, and with the unrolled program (``unroll=True``, today's tracing of a Python
loop), bit for bit. scripts/test.sh runs this module on every target
(COPAPY_TEST_TARGET), so the back-edge is checked on all seven in emulation;
tests/test_loops_targets.py checks sizes and instruction counts per target once.
"""

from __future__ import annotations

import os
from typing import Any

import copapy as cp
import numpy as np
import pytest
from helpers import run
from hypothesis import given, settings
from hypothesis import strategies as st

F = np.float32
_EMULATED = bool(os.environ.get("COPAPY_TEST_TARGET"))


def bits(x: float) -> int:
    return int(np.array(x, dtype=np.float32).view(np.uint32))


def same(got: float, want: float) -> bool:
    return bits(got) == bits(float(want))


def test_fori_loop_runs_the_body_trip_count_times_with_the_counter() -> None:
    x = cp.value(1.5)

    def body(i: Any, c: Any) -> Any:
        return c * 0.5 + cp.to_float(i)

    y = cp.fori_loop(3, 13, body, x)
    tg = run(y)
    want = F(1.5)
    for i in range(3, 13):
        want = F(want * F(0.5)) + F(i)
    assert same(tg.read_value(y), want)
    # the body is in the code once: the program is as long for 1,000 trips
    y2 = cp.fori_loop(3, 1003, body, x)
    tg2 = cp.Target()
    tg2.compile(y2)
    assert tg2.stats() == tg.stats()  # steps, code and data bytes


def test_carry_structures_come_back_rebuilt() -> None:
    v = cp.vector([cp.value(1.0), cp.value(2.0)])
    q = cp.quaternion(1.0, 0.0, 0.0, 0.0)
    init = {"v": v, "n": (cp.value(3), 0.25), "q": q, "l": [cp.value(True)]}

    def body(i: Any, c: Any) -> Any:
        return {"v": c["v"] * 2.0, "n": (c["n"][0] + i, c["n"][1] + 1.0), "q": c["q"],
                "l": [c["l"][0] ^ True]}

    out = cp.fori_loop(0, 5, body, init)
    assert isinstance(out["v"], cp.vector) and isinstance(out["q"], cp.quaternion)
    tg = run(out["v"], out["n"][0], out["n"][1], out["l"][0])
    assert list(tg.read_value(out["v"])) == [32.0, 64.0]
    assert tg.read_value(out["n"][0]) == 3 + sum(range(5))
    assert tg.read_value(out["n"][1]) == 5.25
    assert tg.read_value(out["l"][0]) == 0  # True flipped five times


def test_the_counter_indexes_an_array_at_run_time() -> None:
    data = [0.5, -1.25, 3.0, 7.5, 2.25]
    a = cp.array(data)
    total = cp.fori_loop(0, 5, lambda i, s: s * 0.5 + a[i], cp.value(0.0))
    tg = run(total)
    want = F(0.0)
    for d in data:
        want = F(want * F(0.5)) + F(d)
    assert same(tg.read_value(total), want)


def test_invariants_and_captured_values_are_read_not_recomputed() -> None:
    w = cp.value(0.75)
    k = cp.sqrt(w) * 3.0  # computed before the loop, read by the body
    y = cp.fori_loop(0, 7, lambda i, c: c * k - w * w, cp.value(0.125))
    tg = run(y)
    kk = F(np.sqrt(F(0.75)) * F(3.0))
    want = F(0.125)
    for _ in range(7):
        want = F(want * kk) - F(F(0.75) * F(0.75))
    assert same(tg.read_value(y), want)
    # inputs written between runs reach the body
    tg.write_value(w, 0.5)
    tg.run()
    kk = F(np.sqrt(F(0.5)) * F(3.0))
    want = F(0.125)
    for _ in range(7):
        want = F(want * kk) - F(F(0.5) * F(0.5))
    assert same(tg.read_value(y), want)


def test_nested_loops() -> None:
    def outer(i: Any, c: Any) -> Any:
        inner = cp.fori_loop(0, 4, lambda j, d: d + cp.to_float(i * j), c[1])
        return (c[0] + inner, inner * 0.5)

    a, b = cp.fori_loop(0, 3, outer, (cp.value(0.0), cp.value(1.0)))
    tg = run(a, b)
    x, y = F(0.0), F(1.0)
    for i in range(3):
        d = y
        for j in range(4):
            d = F(d + F(i * j))
        x, y = F(x + d), F(d * F(0.5))
    assert same(tg.read_value(a), x) and same(tg.read_value(b), y)


def test_swapped_carries_use_the_old_values() -> None:
    a, b = cp.fori_loop(0, 3, lambda i, c: (c[1], c[0] + c[1]), (cp.value(0), cp.value(1)))
    tg = run(a, b)
    assert (tg.read_value(a), tg.read_value(b)) == (2, 3)


def test_unroll_gives_the_same_bits() -> None:
    def body(i: Any, c: Any) -> Any:
        return c * 1.0625 + cp.sin(cp.to_float(i))

    outs = [cp.fori_loop(2, 13, body, cp.value(0.3), unroll=u) for u in (1, 2, 3, 4, True)]
    tg = run(*outs)
    got = [bits(tg.read_value(o)) for o in outs]
    assert len(set(got)) == 1, got


def test_scan_stacks_the_outputs_and_reads_xs() -> None:
    xs = [1.0, 2.0, -0.5, 4.0]

    def f(c: Any, x: Any) -> Any:
        c = c * 0.5 + x
        return c, c * 2.0

    last, ys = cp.scan(f, cp.value(0.0), xs)
    tg = run(last, *ys)
    c = F(0.0)
    want = []
    for x in xs:
        c = F(F(c * F(0.5)) + F(x))
        want.append(F(c * F(2.0)))
    assert same(tg.read_value(last), c)
    assert [bits(tg.read_value(y)) for y in ys] == [bits(w) for w in want]
    n, _ = cp.scan(lambda c, x: (c + 1, None), cp.value(0), length=6)
    assert run(n).read_value(n) == 6


def test_grad_inside_the_body_matches_the_unrolled_descent() -> None:
    target = cp.value(2.0)

    def step(i: Any, x: Any) -> Any:
        err = (x * x - target) ** 2
        return x - 0.05 * cp.grad(err, x)

    looped = cp.fori_loop(0, 20, step, cp.value(1.0))
    unrolled = cp.fori_loop(0, 20, step, cp.value(1.0), unroll=True)
    tg = run(looped, unrolled)
    assert same(tg.read_value(looped), tg.read_value(unrolled))
    assert abs(tg.read_value(looped) - 2.0 ** 0.5) < 1e-3


def test_zero_trips_return_the_initial_carry() -> None:
    x = cp.value(1.0)
    assert cp.fori_loop(5, 5, lambda i, c: c + 1.0, x) is x
    assert cp.fori_loop(5, 2, lambda i, c: c + 1.0, x) is x


# -- errors --------------------------------------------------------------------------------


def test_a_traced_trip_count_is_a_type_error() -> None:
    n = cp.value(3)
    with pytest.raises(TypeError, match="trip count must be a Python int"):
        cp.fori_loop(0, n, lambda i, c: c, cp.value(0.0))


def test_bad_bounds_and_unroll_say_what_is_wrong() -> None:
    x = cp.value(0.0)
    with pytest.raises(ValueError, match="int32"):
        cp.fori_loop(0, 2**33, lambda i, c: c + 1.0, x)
    with pytest.raises(TypeError, match="must be a Python int, got float"):
        cp.fori_loop(0, 2.5, lambda i, c: c, x)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unroll must be a positive int"):
        cp.fori_loop(0, 3, lambda i, c: c, x, unroll=0)
    with pytest.raises(ValueError, match="scan needs xs or length"):
        cp.scan(lambda c, x: (c, None), x)


def test_a_changed_carry_names_the_leaf() -> None:
    init = {"a": cp.value(1.0), "b": (cp.value(2.0), cp.value(1))}
    with pytest.raises(ValueError, match=r"carry\['b'\]\[1\].*int.*float"):
        cp.fori_loop(0, 3, lambda i, c: {"a": c["a"], "b": (c["b"][0], c["b"][1] * 0.5)}, init)
    with pytest.raises(ValueError, match=r"carry\['b'\].*tuple of 2.*tuple of 1"):
        cp.fori_loop(0, 3, lambda i, c: {"a": c["a"], "b": (c["b"][0],)}, init)
    with pytest.raises(ValueError, match=r"carry: .*vector.*list"):
        cp.fori_loop(0, 3, lambda i, c: [c[0], c[1]], cp.vector([1.0, 2.0]))


def test_python_control_flow_on_a_traced_value_in_the_body_says_so() -> None:
    def body(i: Any, c: Any) -> Any:
        if c > 1.0:
            return c
        return c * 2.0

    with pytest.raises(TypeError, match="iif"):
        cp.fori_loop(0, 3, body, cp.value(1.0))


def test_an_intermediate_of_the_body_is_not_readable_after_the_loop() -> None:
    seen = []

    def body(i: Any, c: Any) -> Any:
        d = c * 3.0
        seen.append(d)
        return d + 1.0

    y = cp.fori_loop(0, 4, body, cp.value(1.0))
    tg = cp.Target()
    with pytest.raises(ValueError, match="return the value in the carry"):
        tg.compile(y, seen[0])
    tg.compile(y)
    tg.run()
    with pytest.raises(ValueError, match="exists only inside the loop; return it in the carry"):
        tg.read_value(seen[0])


# -- properties: random bodies and trip counts ---------------------------------------------

OPS = ["add", "mul", "sub", "min", "iif", "sin"]


def apply(op: str, a: Any, b: Any, c: float, lib: Any) -> Any:
    if op == "add":
        return a + b
    if op == "mul":
        return a * F(c) if lib is np else a * c
    if op == "sub":
        return a - b
    if op == "min":
        return np.minimum(a, b) if lib is np else cp.minimum(a, b)
    if op == "iif":
        return (a if a > b else b - F(c)) if lib is np else cp.iif(a > b, a, b - c)
    return a  # "sin" stays out of the NumPy reference: compared with the unrolled program


@settings(max_examples=8 if _EMULATED else 40, deadline=None, derandomize=True)
@given(ops=st.lists(st.tuples(st.sampled_from(OPS[:5]), st.integers(0, 2), st.integers(0, 2),
                              st.sampled_from([0.5, -1.25, 0.75])), min_size=1, max_size=6),
       trips=st.integers(1, 9), unroll=st.integers(1, 3),
       init=st.lists(st.sampled_from([0.0, 1.5, -2.0, 0.125]), min_size=3, max_size=3))
def test_random_bodies_match_numpy_and_the_unrolled_program(
        ops: list[tuple[str, int, int, float]], trips: int, unroll: int,
        init: list[float]) -> None:
    def body(lib: Any) -> Any:
        def f(i: Any, c: Any) -> Any:
            c = list(c)
            for op, x, y, k in ops:
                c[x] = apply(op, c[x], c[y], k, lib)
            return tuple(c)
        return f

    leaves = tuple(cp.value(v) for v in init)
    looped = cp.fori_loop(0, trips, body(cp), leaves, unroll=unroll)
    unrolled = cp.fori_loop(0, trips, body(cp), leaves, unroll=True)
    tg = run(*looped, *unrolled)
    ref = tuple(F(v) for v in init)
    with np.errstate(all="ignore"):
        for i in range(trips):
            ref = body(np)(i, ref)
    for a, b, r in zip(looped, unrolled, ref, strict=True):
        assert bits(tg.read_value(a)) == bits(tg.read_value(b))
        assert same(tg.read_value(a), r) or (np.isnan(r) and np.isnan(tg.read_value(a)))


def test_an_array_carry_stays_one_range() -> None:
    a = cp.array([1.0, 2.0, 3.0])
    w = cp.array([0.5, 0.25, 2.0])
    out = cp.fori_loop(0, 4, lambda i, c: c * w + cp.to_float(i), a)
    assert isinstance(out, cp.array) and out.shape == (3,)
    tg = run(out)
    want = np.array([1.0, 2.0, 3.0], F)
    for i in range(4):
        want = want * np.array([0.5, 0.25, 2.0], F) + F(i)
    assert [bits(v) for v in tg.read_value(out)] == [bits(v) for v in want]
    with pytest.raises(ValueError, match=r"carry: .*shape \(3,\).*shape \(2,\)"):
        cp.fori_loop(0, 2, lambda i, c: cp.array([c[0], c[1]]), a)


def test_scan_over_rows_stacks_vectors() -> None:
    xs = np.array([[1.0, 2.0], [0.5, -1.0], [3.0, 0.25]], dtype=np.float32)

    def f(c: Any, x: Any) -> Any:
        c = c * 0.5 + x.sum()
        return c, cp.vector([c, c * x[0]])

    last, ys = cp.scan(f, cp.value(1.0), xs)
    assert all(isinstance(y, cp.vector) for y in ys)
    tg = run(last, *ys)
    c = F(1.0)
    for t, x in enumerate(xs):
        c = F(F(c * F(0.5)) + F(x[0] + x[1]))
        assert [bits(v) for v in tg.read_value(ys[t])] == [bits(c), bits(F(c * x[0]))]
    assert same(tg.read_value(last), c)


# -- gradients through the loop (backpropagation through time) -----------------------------


def rollout_cost(u: list[float], x0: float) -> float:
    """The plant of test_gradient_of_a_100_step_scan in float64, for finite differences."""
    x, v, cost = x0, 0.0, 0.0
    for uk in u:
        x, v = x + 0.05 * v, v + 0.05 * (uk - 0.2 * x)
        cost += x * x + 0.1 * uk * uk
    return cost


def test_gradient_of_a_100_step_scan_equals_the_unrolled_one() -> None:
    u0 = [0.5 * float(np.sin(k)) for k in range(100)]
    u = [cp.value(x) for x in u0]
    x0 = cp.value(1.0)

    def f(c: Any, uk: Any) -> Any:
        x, v, cost = c
        x2 = x + 0.05 * v
        v2 = v + 0.05 * (uk - 0.2 * x)
        return (x2, v2, cost + x2 * x2 + 0.1 * uk * uk), x2

    grads = []
    for unroll in (1, True):
        (_, _, cost), _ = cp.scan(f, (x0, cp.value(0.0), cp.value(0.0)), u, unroll=unroll)
        grads.append([*cp.grad(cost, u), cp.grad(cost, x0)])
    tg = run(*grads[0], *grads[1])
    looped = np.array([tg.read_value(g) for g in grads[0]])
    unrolled = np.array([tg.read_value(g) for g in grads[1]])
    # the same sums, associated differently (the reverse loop's vector-Jacobian product)
    np.testing.assert_allclose(looped, unrolled, rtol=2e-5, atol=1e-6)
    h = 1e-4
    for k in (0, 37, 99):
        up, down = list(u0), list(u0)
        up[k] += h
        down[k] -= h
        fd = (rollout_cost(up, 1.0) - rollout_cost(down, 1.0)) / (2 * h)
        assert looped[k] == pytest.approx(fd, rel=2e-3, abs=1e-4)
    fd = (rollout_cost(u0, 1.0 + h) - rollout_cost(u0, 1.0 - h)) / (2 * h)
    assert looped[100] == pytest.approx(fd, rel=2e-3)


def test_gradient_through_nested_loops_and_captured_values() -> None:
    a, w = cp.value(0.9), cp.value(0.3)

    def inner(j: Any, d: Any) -> Any:
        return d * a + w

    def outer(i: Any, c: Any) -> Any:
        return cp.fori_loop(0, 3, inner, c) * 0.5 + cp.sin(c)

    outs = [cp.fori_loop(0, 4, outer, cp.value(0.2), unroll=u) for u in (1, True)]
    gs = [cp.grad(o, [a, w]) for o in outs]
    tg = run(*gs[0], *gs[1])
    got = [tg.read_value(g) for g in gs[0]]
    want = [tg.read_value(g) for g in gs[1]]
    np.testing.assert_allclose(got, want, rtol=2e-5)


@settings(max_examples=4 if _EMULATED else 25, deadline=None, derandomize=True)
@given(ops=st.lists(st.tuples(st.sampled_from(["add", "mul", "sin", "iif", "param"]),
                              st.integers(0, 1), st.integers(0, 1)), min_size=1, max_size=5),
       trips=st.integers(1, 6))
def test_random_loop_gradients_match_the_unrolled_ones(
        ops: list[tuple[str, int, int]], trips: int) -> None:
    p = cp.value(0.75)

    def body(i: Any, c: Any) -> Any:
        c = list(c)
        for op, x, y in ops:
            if op == "add":
                c[x] = c[x] + c[y] * 0.5
            elif op == "mul":
                c[x] = c[x] * c[y] * 0.5
            elif op == "sin":
                c[x] = cp.sin(c[x]) + cp.to_float(i) * 0.125
            elif op == "iif":
                c[x] = cp.iif(c[x] > c[y], c[x] * p, c[y] - p)
            else:
                c[x] = c[x] * p + 0.25
        return tuple(c)

    inits = (cp.value(0.5), cp.value(-0.25))
    grads = []
    for unroll in (1, True):
        a, b = cp.fori_loop(0, trips, body, inits, unroll=unroll)
        grads.append(cp.grad(a * 2.0 + b, [p, *inits]))
    tg = run(*grads[0], *grads[1])
    looped = [tg.read_value(g) for g in grads[0]]
    unrolled = [tg.read_value(g) for g in grads[1]]
    np.testing.assert_allclose(looped, unrolled, rtol=1e-4, atol=1e-6)


def test_gradient_through_stacked_outputs_and_array_carries() -> None:
    u = [cp.value(0.5 * float(np.sin(k))) for k in range(8)]
    w = cp.value(0.5)

    def f(c: Any, uk: Any) -> Any:
        x, v = c
        return (x + 0.1 * v, v + 0.1 * uk * w), x + 0.1 * v

    grads = []
    for unroll in (1, True):
        _, ys = cp.scan(f, (cp.value(1.0), cp.value(0.0)), u, unroll=unroll)
        cost = sum(((y - 1.0) ** 2 * (t + 1) for t, y in enumerate(ys)), cp.value(0.0))
        arr = cp.fori_loop(0, 5, lambda i, c: c * w + 1.0, cp.array([1.0, 2.0]), unroll=unroll)
        grads.append([*cp.grad(cost, u), cp.grad(cost, w), cp.grad(arr.sum(), w)])
    tg = run(*grads[0], *grads[1])
    looped = [tg.read_value(g) for g in grads[0]]
    unrolled = [tg.read_value(g) for g in grads[1]]
    np.testing.assert_allclose(looped, unrolled, rtol=2e-5, atol=1e-7)
    # d/dw of sum(c) after 5 trips of c = c w + 1 from (1, 2), in float64: 7.4375
    assert looped[-1] == pytest.approx(7.4375, rel=1e-6)


def test_an_imported_call_inside_a_loop_body_is_refused_and_one_before_it_runs_once() -> None:
    def body(i: Any, x: Any) -> Any:
        return x + cp.extern("sensor", returns=float)

    with pytest.raises(ValueError, match="imported function"):
        cp.fori_loop(0, 4, body, cp.value(0.0))

    calls: list[float] = []

    def sensor() -> float:
        calls.append(1.0)
        return 0.5

    s = cp.extern("sensor", returns=float)
    out = cp.fori_loop(0, 4, lambda i, x: x + s, cp.value(1.0))
    tg = cp.Target(imports={"sensor": sensor})
    tg.compile(out)
    tg.run()
    assert calls == [1.0]
    assert tg.read_value(out) == float(np.float32(1.0) + np.float32(0.5) * 4)
