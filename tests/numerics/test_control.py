"""copapy.control against SciPy's ``dlsim`` and python-control: state-space steps from
matrices, python-control ``StateSpace`` and SciPy ``dlti``, compiled step programs with
named variables, observer-based state feedback (dlqr gains), and bad input.

References: a NumPy float32 loop in copapy.control's documented order (the same bits), and
scipy.signal.dlsim / python-control in float64 (tolerances stated per case). Under
COPAPY_TEST_TARGET the programs run in that target's emulator.
"""

from __future__ import annotations

from typing import Any

import control
import copapy as cp
import numpy as np
import pytest
import scipy.signal as ss

f32 = np.float32
RNG = np.random.default_rng(7)


def row_sum32(coefs: np.ndarray, xs: np.ndarray) -> Any:
    """Left-to-right float32 sum of coef * x, number-0 coefficients left out."""
    total = None
    for c, x in zip(coefs, xs, strict=True):
        if c == 0.0:
            continue
        term = f32(f32(c) * f32(x))
        total = term if total is None else f32(total + term)
    return f32(0.0) if total is None else total


def ss_reference32(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray, x0: np.ndarray,
                   us: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = x0.astype(f32)
    ys = []
    for u in us:
        y = [row_sum32(np.concatenate([c[i], d[i]]), np.concatenate([x, u])) for i in range(len(c))]
        xu = np.concatenate([x, u])
        x = np.array([row_sum32(np.concatenate([a[i], b[i]]), xu) for i in range(len(a))], f32)
        ys.append(y)
    return np.array(ys, f32), x


def random_stable(n: int, m: int, p: int) -> tuple[np.ndarray, ...]:
    a = RNG.normal(size=(n, n))
    a *= 0.9 / max(abs(np.linalg.eigvals(a)))
    return a, RNG.normal(size=(n, m)), RNG.normal(size=(p, n)), RNG.normal(size=(p, m)) * (n % 2)


@pytest.mark.parametrize("n,m,p,steps", [(1, 1, 1, 20), (2, 1, 1, 12), (3, 2, 1, 8), (4, 1, 2, 8),
                                         (5, 2, 2, 6), (6, 1, 1, 6), (8, 2, 3, 5)])
def test_step_program_matches_dlsim(n: int, m: int, p: int, steps: int) -> None:
    a, b, c, d = random_stable(n, m, p)
    sys = ss.dlti(a, b, c, d, dt=0.01)
    x0 = RNG.normal(size=n)
    prog = cp.control.step_program(sys, x0, target=cp.Target())
    assert prog.inputs == [f"u[{k}]" for k in range(m)] and prog.outputs == [f"y[{i}]" for i in range(p)]
    us = RNG.normal(size=(steps, m)).astype(f32)
    got = np.array([prog.step(u.tolist()) for u in us])
    want, x_end = ss_reference32(a, b, c, d, x0, us)
    assert got.tolist() == want.tolist()  # same order, same bits
    assert [prog.target.read_value(s) for s in prog.states] == x_end.tolist()
    _, y_ref, _ = ss.dlsim(sys, us.astype(np.float64), x0=x0)
    # float32 against float64 for a stable system with O(1) signals: measured < 1e-5
    assert np.max(np.abs(got - y_ref)) < 1e-4


def test_python_control_statespace_and_c2d() -> None:
    plant = control.ss([[0.0, 1.0], [-2.0, -0.5]], [[0.0], [1.0]], [[1.0, 0.0]], [[0.0]])
    with pytest.raises(ValueError, match=r"continuous-time system \(dt=0\): discretise.*control.c2d"):
        cp.control.ss_step(plant, [0.0, 0.0], 0.0)
    sysd = control.c2d(plant, 0.05)
    x = [cp.value(0.0), cp.value(0.0)]
    u = cp.value(0.0)
    x_next, y = cp.control.ss_step(sysd, x, u)
    tg = cp.Target()
    tg.compile([*x_next, *y])
    xs = np.array([0.3, -0.2])
    tg.write_value([*x, u], [0.3, -0.2, 1.5])
    tg.run()
    got = tg.read_value([*x_next, *y])
    a, b, c, d = (np.asarray(m) for m in (sysd.A, sysd.B, sysd.C, sysd.D))
    want = [row_sum32(np.concatenate([a[i], b[i]]), np.array([0.3, -0.2, 1.5])) for i in range(2)]
    want.append(row_sum32(np.concatenate([c[0], d[0]]), np.array([0.3, -0.2, 1.5])))
    assert got == [float(w) for w in want]
    # python-control's own simulation of that one step, in float64
    resp = control.forced_response(sysd, T=[0.0, 0.05], U=[1.5, 0.0], X0=xs)
    assert np.allclose(got[:2], resp.states[:, 1], rtol=1e-6, atol=1e-7)


def test_scipy_continuous_lti_refused_and_transfer_function_converted() -> None:
    with pytest.raises(ValueError, match=r"continuous-time system \(dt=None\): discretise.*cont2discrete"):
        cp.control.system_matrices(ss.lti([1.0], [1.0, 2.0]).to_ss())
    tf = ss.dlti([0.5], [1.0, -0.5], dt=0.1)  # a discrete transfer function
    a, b, c, d = cp.control.system_matrices(tf)
    assert len(a) == 1 and len(b[0]) == 1


def test_observer_based_lqr_controller_matches_numpy() -> None:
    """K from dlqr, L from dlqr on the dual system; the compiled controller against a NumPy
    float32 loop in the documented order, and the closed loop against float64."""
    cont = control.ss([[0.0, 1.0], [0.0, -0.1]], [[0.0], [1.0]], [[1.0, 0.0]], [[0.0]])
    plant = control.c2d(cont, 0.1)
    a, b, c, d = (np.asarray(m) for m in (plant.A, plant.B, plant.C, plant.D))
    k, _, _ = control.dlqr(a, b, np.eye(2), np.eye(1))
    lt, _, _ = control.dlqr(a.T, c.T, np.eye(2) * 10, np.eye(1))
    gain_l = lt.T
    prog = cp.control.step_program(plant, inputs="y", outputs="u", state="xhat", K=k, L=gain_l,
                                   target=cp.Target())
    x = np.array([1.0, 0.0])  # true plant state (float64 simulation)
    xhat32 = np.zeros(2, f32)
    for _ in range(150):
        y = float(f32((c @ x)[0]))
        (u,) = prog.step([y])
        # reference controller step in float32
        u_ref = -row_sum32(k[0], xhat32)
        e = f32(f32(y) - row_sum32(np.concatenate([c[0], d[0]]), np.concatenate([xhat32, [u_ref]])))
        xhat32 = np.array([row_sum32(np.concatenate([a[i], b[i], gain_l[i]]),
                                     np.concatenate([xhat32, [u_ref], [e]])) for i in range(2)], f32)
        assert u == float(u_ref)
        x = a @ x + b[:, 0] * u
    assert [prog.target.read_value(s) for s in prog.states] == xhat32.tolist()
    assert np.max(np.abs(x)) < 0.05  # the loop settles


def test_feedback_with_reference_and_plain_numbers() -> None:
    k = np.array([[2.0, 0.5]])
    assert cp.control.feedback(k, [1.0, 2.0]) == [-3.0]
    assert cp.control.feedback(k, [1.0, 2.0], r=[4.0]) == [1.0]


def test_bad_shapes_name_the_argument() -> None:
    with pytest.raises(ValueError, match=r"A must be square \(n, n\), got shape \(2, 3\)"):
        cp.control.ss_step((np.ones((2, 3)), np.ones((2, 1)), np.ones((1, 2)), np.ones((1, 1))), [0, 0], 0)
    with pytest.raises(ValueError, match=r"B must have shape \(n, m\) = \(2, m\), got shape \(3, 1\)"):
        cp.control.ss_step((np.eye(2), np.ones((3, 1)), np.ones((1, 2)), np.ones((1, 1))), [0, 0], 0)
    with pytest.raises(ValueError, match=r"D must have shape \(p, m\) = \(1, 1\), got shape \(1, 2\)"):
        cp.control.ss_step((np.eye(2), np.ones((2, 1)), np.ones((1, 2)), np.ones((1, 2))), [0, 0], 0)
    with pytest.raises(ValueError, match=r"x must have shape \(2,\), got shape \(3,\)"):
        cp.control.ss_step((np.eye(2), np.ones((2, 1)), np.ones((1, 2)), np.zeros((1, 1))), [0, 0, 0], 0)
    with pytest.raises(ValueError, match=r"L must have shape \(n, p\) = \(2, 1\)"):
        cp.control.observer_step((np.eye(2), np.ones((2, 1)), np.ones((1, 2)), np.zeros((1, 1))),
                                 np.ones((1, 2)), [0, 0], [0], [0])
    with pytest.raises(TypeError, match="control.ss"):
        cp.control.ss_step(object(), [0], 0)


def test_outputs_that_are_a_state_or_an_input_show_this_step() -> None:
    """C = I (y is the state) and D = I, C = 0 (y is the input): ``1.0 * x`` folds to ``x``,
    and the step program must still report y[k] = x[k], not the updated state."""
    a = np.array([[0.5, 0.25], [0.0, 0.75]])
    b = np.array([[1.0], [0.5]])
    prog = cp.control.step_program((a, b, np.eye(2), np.zeros((2, 1))), [1.0, -2.0], target=cp.Target())
    us = np.array([[3.0], [-1.0], [0.5]], f32)
    want, _ = ss_reference32(a, b, np.eye(2), np.zeros((2, 1)), np.array([1.0, -2.0]), us)
    assert [prog.step(u.tolist()) for u in us] == want.tolist()
    through = cp.control.step_program((a, b, np.zeros((1, 2)), np.ones((1, 1))), target=cp.Target())
    assert [through.step([v]) for v in (3.0, -1.0)] == [[3.0], [-1.0]]
