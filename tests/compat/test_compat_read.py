"""Compatibility: ``Target.read_value`` reads what a user can name, as in Copapy.

Copapy's graph has structural identity, so a freshly traced expression equal to a
compiled one reads the compiled value (``tg.compile(a + 1)`` then ``tg.read_value(a +
1)``). Inputs are variables: equal only to themselves. An input reads its initial value
before the first ``run()``; a computed value before the first run stays an error.
Expected numbers are NumPy float32 results.
"""

from __future__ import annotations

import copapy as cp
import numpy as np
import pytest

f32 = np.float32


def test_fresh_equal_expression_reads_the_compiled_value() -> None:
    a = cp.value(2.5)
    b = cp.value(4)
    tg = cp.Target()
    tg.compile(a + 1, cp.sin(a) * b, (b * 3) // 2, cp.iif(a > 1, a, 0.0))
    tg.run()
    assert tg.read_value(a + 1) == float(f32(2.5) + f32(1))
    sin_a = tg.read_value(cp.sin(a) * b)
    assert sin_a == pytest.approx(float(np.sin(f32(2.5)) * f32(4)), rel=2.4e-7)
    assert tg.read_value(b * 3 // 2) == 6
    assert tg.read_value(cp.iif(a > 1, a, 0.0)) == 2.5
    # commutative operands in the other order are the same computation
    assert tg.read_value(1 + a) == tg.read_value(a + 1)
    assert tg.read_value(b * cp.sin(a)) == sin_a
    # after new inputs the fresh expression follows the program
    tg.write_value(a, -3.0)
    tg.run()
    assert tg.read_value(a + 1) == -2.0
    assert tg.read_value(cp.iif(a > 1, a, 0.0)) == 0.0


def test_containers_of_fresh_expressions_read_too() -> None:
    xs = [cp.value(float(i)) for i in range(4)]
    v = cp.vector(xs)
    tg = cp.Target()
    tg.compile(v * 2.0 + 1.0)
    tg.run()
    assert tg.read_value(v * 2.0 + 1.0).tolist() == [1.0, 3.0, 5.0, 7.0]


def test_structurally_different_values_are_not_confused() -> None:
    a, b = cp.value(1.0), cp.value(1.0)  # two variables with the same initial value
    tg = cp.Target()
    tg.compile(a + 1, a - b)
    tg.run()
    for other in (b + 1, a + 2, a + 1.5, b - a, cp.value(1.0) + 1):
        with pytest.raises(ValueError, match="not compiled"):
            tg.read_value(other)
    with pytest.raises(ValueError, match="not compiled"):
        tg.read_value(cp.value(1.0))  # a new variable, not a or b
    assert tg.read_value(a * 1.0 + 1) == 2.0  # x * 1 is x while tracing: this is a + 1


def test_int_and_float_versions_are_different_values() -> None:
    i = cp.value(3)
    tg = cp.Target()
    tg.compile(i + 1)
    tg.run()
    assert tg.read_value(i + 1) == 4
    with pytest.raises(ValueError, match="not compiled"):
        tg.read_value(i + 1.0)


def test_deep_fresh_expression_is_found_without_recursion_limits() -> None:
    a = cp.value(0.5)

    def chain() -> cp.value[float]:
        x = a
        for k in range(20000):
            x = x * 0.999 + float(k % 7)
        return x

    tg = cp.Target()
    tg.compile(chain())
    tg.run()
    want = f32(0.5)
    for k in range(20000):
        want = want * f32(0.999) + f32(k % 7)
    assert tg.read_value(chain()) == float(want)


def test_inputs_read_their_initial_value_before_the_first_run() -> None:
    a = cp.value(0.1)
    n = cp.value(-7)
    flag = cp.value(True)
    out = cp.iif(flag, a * 2, 0.0) + n
    tg = cp.Target()
    tg.compile(out)
    assert tg.read_value(a) == float(f32(0.1))
    assert tg.read_value(n) == -7
    assert tg.read_value(flag) is True
    assert tg.read_value([a, n]) == [float(f32(0.1)), -7]
    tg.write_value(a, 1.5)
    assert tg.read_value(a) == 1.5  # written, still not run
    with pytest.raises(RuntimeError, match="run"):
        tg.read_value(out)
    tg.run()
    assert tg.read_value(out) == float(f32(1.5) * f32(2) + f32(-7))


def test_write_value_finds_inputs_by_identity_only() -> None:
    a = cp.value(1.0)
    tg = cp.Target()
    tg.compile(a + 1)
    with pytest.raises(ValueError, match="only input"):
        tg.write_value(a + 1, 5.0)
    with pytest.raises(ValueError, match="not compiled"):
        tg.write_value(cp.value(1.0), 5.0)
