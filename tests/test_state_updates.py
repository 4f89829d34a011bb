"""State updates: one run() is one loop step, checked step by step against NumPy float32."""

from __future__ import annotations

import math

import copapy as cp
import numpy as np
import pytest

F32 = np.float32
DT, KP, KI, KD = 0.01, 2.0, 5.0, 0.1
U_MIN, U_MAX, GAIN, TAU = -10.0, 10.0, 0.8, 0.5


def test_pid_loop_matches_numpy_every_step() -> None:
    setpoint = cp.value(1.0, name="setpoint")
    y = cp.value(0.0, name="y")
    integral = cp.value(0.0)
    prev_error = cp.value(0.0)
    error = setpoint - y
    new_integral = integral + error * DT
    derivative = (error - prev_error) / DT
    u = cp.clamp(KP * error + KI * new_integral + KD * derivative, U_MIN, U_MAX)
    y_next = y + DT * (GAIN * u - y) / TAU
    tg = cp.Target()
    tg.compile(u, names={"u": u}, updates={y: y_next, integral: new_integral, prev_error: error})

    ry, ri, re = F32(0.0), F32(0.0), F32(0.0)
    for step in range(400):
        if step == 200:  # the host may still change an input between steps
            tg.write_value("setpoint", -0.5)
        sp = F32(1.0) if step < 200 else F32(-0.5)
        e = sp - ry
        ni = ri + e * F32(DT)
        d = (e - re) / F32(DT)
        ru = np.minimum(np.maximum(F32(KP) * e + F32(KI) * ni + F32(KD) * d, F32(U_MIN)), F32(U_MAX))
        ry = ry + F32(DT) * (F32(GAIN) * ru - ry) / F32(TAU)
        ri, re = ni, e
        tg.run()
        assert tg.read_value("u") == float(ru), step
        assert tg.read_value("y") == float(ry), step
        assert tg.read_value(integral) == float(ri), step
        assert tg.read_value(prev_error) == float(re), step
    assert abs(float(ry) + 0.5) < 0.05  # the loop really settles on the new setpoint


def test_state_space_filter_matches_numpy_every_step() -> None:
    a = np.array([[0.98, 0.03], [-0.03, 0.97]], dtype=F32)
    b = np.array([0.01, 0.02], dtype=F32)
    c = np.array([1.0, 0.5], dtype=F32)
    d = F32(0.05)
    x = cp.vector([cp.value(0.0), cp.value(0.0)])
    u = cp.value(0.0, name="u")
    x_next = cp.vector([float(a[i, 0]) * x[0] + float(a[i, 1]) * x[1] + float(b[i]) * u for i in range(2)])
    y = float(c[0]) * x[0] + float(c[1]) * x[1] + float(d) * u
    tg = cp.Target()
    tg.compile(y, names={"y": y, "x": x}, updates=[(x, x_next)])
    assert ("x", "state", "float", [2]) in tg.variables()

    rx = np.zeros(2, dtype=F32)
    for k in range(100):
        uk = F32(math.sin(0.3 * k))
        tg.write_value("u", float(uk))
        tg.run()
        ry = c[0] * rx[0] + c[1] * rx[1] + d * uk
        rx = np.array([a[i, 0] * rx[0] + a[i, 1] * rx[1] + b[i] * uk for i in range(2)], dtype=F32)
        assert tg.read_value("y") == float(ry), k
        assert tg.read_value("x") == [float(rx[0]), float(rx[1])], k


def test_updates_see_the_old_values_so_a_swap_swaps() -> None:
    a, b = cp.value(1.5), cp.value(-2.0)
    tg = cp.Target()
    diff = a - b
    tg.compile(diff, updates={a: b, b: a})
    for k in range(3):
        tg.run()
        want = (1.5, -2.0) if k % 2 == 0 else (-2.0, 1.5)
        assert tg.read_value(diff) == want[0] - want[1]
        assert (tg.read_value(a), tg.read_value(b)) == (want[1], want[0])


def test_int_counter_and_state_only_program() -> None:
    n = cp.value(0, name="n")
    tg = cp.Target()
    tg.compile(updates={n: n + 3})
    for _ in range(5):
        tg.run()
    assert tg.read_value("n") == 15
    tg.write_value(n, -1)
    tg.run()
    assert tg.read_value(n) == 2


def test_bad_updates_are_refused_clearly() -> None:
    x = cp.value(1.0)
    k = cp.value(1)
    tg = cp.Target()
    with pytest.raises(ValueError, match="only variables made with cp.value"):
        tg.compile(x, updates={x * 2.0: x})
    with pytest.raises(ValueError, match="stores a float value into a int variable"):
        tg.compile(x, updates={k: x})
    with pytest.raises(ValueError, match="shape"):
        tg.compile(x, updates=[(cp.vector([x, x]), cp.vector([x]))])
    with pytest.raises(TypeError, match="updates takes a dict"):
        tg.compile(x, updates=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="earlier update"):
        tg.compile(x, updates=[(x, x + 1.0), (x, x + 2.0)])
