"""The README's basic example, against a float32 reference and Copapy 0.0.7's printed output."""

from __future__ import annotations

from typing import Any

import copapy as cp
import numpy as np
import refsem as R

# Printed by Copapy 0.0.7 for the same program.
COPAPY_OUTPUT = (1.9900000095367432, 4.207503795623779, 0.9327378869056702)


def basic_example() -> tuple[Any, ...]:
    """The README program, compiled: (a, b, c, d, e, target)."""
    a = cp.value(0.25)
    b = cp.value(0.87)
    c = a + b * 2.0
    d = c**2 + cp.sin(a)
    e = cp.sqrt(b)
    tg = cp.Target()
    tg.compile(c, d, e)
    return a, b, c, d, e, tg


def test_basic_example() -> None:
    _, _, c, d, e, tg = basic_example()
    tg.run()
    got_c, got_d, got_e = tg.read_value(c), tg.read_value(d), tg.read_value(e)

    fa, fb = np.float32(0.25), np.float32(0.87)
    want_c = fa + fb * np.float32(2.0)
    want_e = np.sqrt(fb)
    want_d = want_c * want_c + R.sin(fa)
    assert R.same_float(got_c, want_c)
    assert R.same_float(got_e, want_e)
    # sin is allowed 1 ulp; one ulp of sin(0.25) moves d by at most 1 ulp of d.
    assert R.ulp_distance(got_d, float(want_d)) <= 1

    assert got_c == COPAPY_OUTPUT[0]
    assert got_e == COPAPY_OUTPUT[2]
    assert R.ulp_distance(got_d, COPAPY_OUTPUT[1]) <= 1


def test_basic_example_after_writes() -> None:
    a, b, c, d, e, tg = basic_example()
    for xa, xb in [(1.0, 2.0), (-3.5, 0.0), (100.0, 9.0)]:
        tg.write_value([a, b], [xa, xb])
        tg.run()
        fa, fb = np.float32(xa), np.float32(xb)
        want_c = fa + fb * np.float32(2.0)
        assert R.same_float(tg.read_value(c), want_c)
        assert R.same_float(tg.read_value(e), np.sqrt(fb))
        assert R.ulp_distance(tg.read_value(d), float(want_c * want_c + R.sin(fa))) <= 1
