"""@cp.jit: specialisation per signature, argument and result structures, errors.

References are computed with NumPy float32/int32, independently of copapy."""

from __future__ import annotations

from typing import Any

import copapy as cp
import numpy as np
import pytest

f32 = np.float32


def bits(x: float) -> int:
    return int(np.array(x, dtype=np.float32).view(np.int32))


def test_scalar_function_matches_float32_and_reuses_its_compilation() -> None:
    @cp.jit
    def f(a: Any, b: Any) -> Any:
        return a * b + a

    for a, b in [(2.0, 3.0), (0.1, 0.7), (-1.5, 1e30), (3.25, -0.0)]:
        got = f(a, b)
        assert isinstance(got, float)
        assert bits(got) == bits(f32(a) * f32(b) + f32(a))
    assert f.specialisations == 1  # type: ignore[attr-defined]


def test_other_scalar_types_compile_a_new_specialisation() -> None:
    @cp.jit
    def f(a: Any, b: Any) -> Any:
        return a // b

    assert f(7.5, 2.0) == 3.0
    assert f(-7, 2) == -4 and isinstance(f(-7, 2), int)
    assert f(True, 1) == 1
    assert f(7.5, 2.0) == 3.0
    assert f.specialisations == 3  # type: ignore[attr-defined]


def test_lists_tuples_and_lengths_are_part_of_the_signature() -> None:
    @cp.jit
    def total(v: Any) -> Any:
        s = 0.0
        for x in v:
            s = s + x * x
        return s

    xs = [0.5, 1.5, -2.0]
    want = f32(0.0)
    for x in xs:
        want = want + f32(x) * f32(x)
    assert bits(total(xs)) == bits(want)
    assert bits(total(tuple(xs))) == bits(want)
    assert total([1.0, 2.0]) == 5.0
    assert total.specialisations == 3  # type: ignore[attr-defined]


def test_numpy_arrays_of_each_dtype() -> None:
    @cp.jit
    def dot(v: Any, w: Any) -> Any:
        s = 0.0
        for x, y in zip(v, w, strict=True):
            s = s + x * y
        return s

    rng = np.random.default_rng(1)
    for dtype in (np.float64, np.float32):
        v = rng.standard_normal(17).astype(dtype)
        w = rng.standard_normal(17).astype(dtype)
        want = f32(0.0)
        for x, y in zip(v.astype(np.float32), w.astype(np.float32), strict=True):
            want = want + x * y
        assert bits(dot(v, w)) == bits(want)
    ints = np.arange(5, dtype=np.int64)
    assert dot(ints, ints) == 30.0


def test_results_keep_their_structure() -> None:
    @cp.jit
    def f(a: Any, b: Any) -> Any:
        return (a + b, [a - b, a * 2, 7], a > b)

    got = f(1.0, 2.0)
    assert got == (3.0, [-1.0, 2.0, 7], False)
    assert isinstance(got[2], bool)


def test_constant_result_needs_no_code() -> None:
    @cp.jit
    def f(a: Any) -> Any:
        return a * 0 + 4

    assert f(3) == 4


def test_changing_inputs_between_calls_updates_the_result() -> None:
    @cp.jit
    def f(a: Any) -> Any:
        return cp.sqrt(a)

    for x in np.linspace(0.0, 9.0, 7):
        assert bits(f(float(x))) == bits(np.sqrt(f32(x)))


def test_python_branching_on_traced_values_points_to_iif() -> None:
    @cp.jit
    def f(a: Any) -> Any:
        if a > 0:
            return a
        return -a

    with pytest.raises(TypeError, match="cp.iif"):
        f(1.0)


def test_bad_arguments_are_clear_errors() -> None:
    @cp.jit
    def f(a: Any) -> Any:
        return a + 1

    with pytest.raises(TypeError, match="numbers, lists, tuples or NumPy arrays"):
        f("x")
    with pytest.raises(TypeError, match="positional"):
        f(a=1.0)
    with pytest.raises(OverflowError, match="int32"):
        f(2**40)


def test_dict_results_and_unsupported_results() -> None:
    @cp.jit
    def named(a: Any, b: Any) -> Any:
        return {"sum": a + b, "diff": a - b, "label": "pair"}

    assert named(1.5, 0.25) == {"sum": 1.75, "diff": 1.25, "label": "pair"}

    @cp.jit
    def odd(a: Any) -> Any:
        return {a}  # a set of traced values: no structure to read back into

    with pytest.raises(TypeError, match="must return"):
        odd(1.0)


def test_a_jit_function_in_a_reference_cycle_is_collected() -> None:
    import gc
    import weakref

    class Holder:
        jf: Any = None

    def make_cycle() -> weakref.ref[Holder]:
        holder = Holder()

        def f(a: Any) -> Any:
            return a * 2.0 + (0 if holder.jf is None else 0)  # f -> holder

        holder.jf = cp.jit(f)  # holder -> jit function -> f
        assert holder.jf(1.5) == 3.0
        return weakref.ref(holder)

    ref = make_cycle()
    gc.collect()
    assert ref() is None
