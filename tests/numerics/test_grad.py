"""cp.grad: every derivative rule against central finite differences of the same expression
evaluated in float64 NumPy, shapes of the result, errors, gradients inside traced loops and
the inverse-kinematics example against an independent float64 gradient descent."""

from __future__ import annotations

import math
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any

import copapy as cp
import numpy as np
import pytest
from helpers import ROOT

# The same expression is written once and evaluated with `m = cp` (traced, float32) or
# `m = NP` (float64 NumPy scalars).
NP = SimpleNamespace(
    sin=np.sin, cos=np.cos, tan=np.tan, asin=np.arcsin, acos=np.arccos, atan=np.arctan,
    atan2=np.arctan2, exp=np.exp, log=np.log, sqrt=np.sqrt, pow=np.power,
    minimum=np.minimum, maximum=np.maximum, abs=np.abs,
    clamp=lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi),
    iif=lambda c, a, b: a if c else b,
)

Expr = Callable[..., Any]


def _fd(f: Expr, point: Sequence[float], i: int) -> float:
    """Central difference of the float64 expression in variable i."""
    h = 1e-6 * max(1.0, abs(point[i]))
    up = [np.float64(p) for p in point]
    down = list(up)
    up[i] += h
    down[i] -= h
    return float((f(*up, m=NP) - f(*down, m=NP)) / (2 * h))


def _points(n_vars: int, domains: Sequence[tuple[float, float]], n: int, seed: int,
            away: Callable[..., float] | None) -> list[list[float]]:
    """Random float32 points in the domains, at least 1e-2 from any kink (`away` gives the
    distance to the nearest one)."""
    rng = np.random.default_rng(seed)
    out: list[list[float]] = []
    while len(out) < n:
        p = [float(np.float32(rng.uniform(*domains[i % len(domains)]))) for i in range(n_vars)]
        if away is None or away(*p) > 1e-2:
            out.append(p)
    return out


def _compiled_grads(f: Expr, points: list[list[float]]) -> list[list[float]]:
    """Gradient of f at every point, traced with cp.grad and compiled once."""
    grads = []
    for p in points:
        xs = [cp.value(v) for v in p]
        grads.append(cp.grad(f(*xs, m=cp), xs))
    tg = cp.Target()
    tg.compile(grads)
    tg.run()
    return [[float(tg.read_value(g)) if isinstance(g, cp.value) else g for g in row] for row in grads]


def check_gradient(f: Expr, n_vars: int, domains: Sequence[tuple[float, float]], *, seed: int = 0,
                   n: int = 12, away: Callable[..., float] | None = None, rtol: float = 2e-4) -> None:
    points = _points(n_vars, domains, n, seed, away)
    got = _compiled_grads(f, points)
    bad = []
    for p, row in zip(points, got, strict=True):
        for i, g in enumerate(row):
            want = _fd(f, p, i)
            # float32 evaluation: a few ulp of each term, relative to the larger of the result
            # and 1 (terms of size ~1 cancel in some derivatives)
            if not abs(g - want) <= rtol * max(1.0, abs(want)):
                bad.append(f"d/dx{i} at {p}: got {g!r}, finite difference {want!r}")
    assert not bad, "\n".join(bad[:10])


def _frac_distance(q: float) -> float:
    return abs(q - round(q))


# name, expression, number of variables, domains, distance to kinks
RULES: list[tuple[str, Expr, int, list[tuple[float, float]], Callable[..., float] | None]] = [
    ("add", lambda x, y, m: x + y, 2, [(-3, 3)], None),
    ("sub", lambda x, y, m: x - y, 2, [(-3, 3)], None),
    ("mul", lambda x, y, m: x * y, 2, [(-3, 3)], None),
    ("mul_self", lambda x, m: x * x, 1, [(-3, 3)], None),
    ("div", lambda x, y, m: x / y, 2, [(0.3, 3)], None),
    ("div_negative", lambda x, y, m: y / x, 2, [(-3, -0.3)], None),
    ("neg", lambda x, y, m: -x * y, 2, [(-3, 3)], None),
    ("neg_of_function", lambda x, m: -m.sin(x), 1, [(-3, 3)], None),
    ("double_neg", lambda x, y, m: -(2.0 - (-(x * y))), 2, [(-3, 3)], None),
    ("abs", lambda x, y, m: m.abs(x) * y, 2, [(-3, 3)], lambda x, y: abs(x)),
    ("sqrt", lambda x, m: m.sqrt(x), 1, [(0.1, 10)], None),
    ("sin", lambda x, m: m.sin(x), 1, [(-6, 6)], None),
    ("cos", lambda x, m: m.cos(x), 1, [(-6, 6)], None),
    ("tan", lambda x, m: m.tan(x), 1, [(-1.3, 1.3)], None),
    ("asin", lambda x, m: m.asin(x), 1, [(-0.9, 0.9)], None),
    ("acos", lambda x, m: m.acos(x), 1, [(-0.9, 0.9)], None),
    ("atan", lambda x, m: m.atan(x), 1, [(-5, 5)], None),
    ("exp", lambda x, m: m.exp(x), 1, [(-4, 4)], None),
    ("log", lambda x, m: m.log(x), 1, [(0.1, 10)], None),
    ("atan2", lambda y, x, m: m.atan2(y, x), 2, [(-3, 3)], lambda y, x: math.hypot(x, y)),
    ("atan2_left_half", lambda y, x, m: m.atan2(y, x), 2, [(-3, 3), (-3, -0.2)], lambda y, x: abs(y)),
    ("pow", lambda x, y, m: m.pow(x, y), 2, [(0.2, 4), (-2, 3)], None),
    ("pow_const_exponent", lambda x, m: m.pow(x, 2.5), 1, [(0.2, 4)], None),
    ("pow_const_base", lambda x, m: m.pow(1.7, x), 1, [(-3, 3)], None),
    ("powi", lambda x, m: x**3 + x**9, 1, [(-1.5, 1.5)], None),
    ("powi_negative", lambda x, m: x**-2, 1, [(0.5, 3)], None),
    ("floordiv", lambda x, y, m: x // y + x * y, 2, [(0.5, 5)], lambda x, y: _frac_distance(x / y)),
    ("mod", lambda x, y, m: x % y, 2, [(-5, 5), (0.5, 3)], lambda x, y: _frac_distance(x / y)),
    ("mod_negative_divisor", lambda x, y, m: x % y, 2, [(-5, 5), (-3, -0.5)],
     lambda x, y: _frac_distance(x / y)),
    ("minimum", lambda x, y, m: m.minimum(x, y) * y, 2, [(-3, 3)], lambda x, y: abs(x - y)),
    ("maximum", lambda x, y, m: m.maximum(x, y) * x, 2, [(-3, 3)], lambda x, y: abs(x - y)),
    ("clamp", lambda x, y, m: m.clamp(x * y, -1.0, 2.0), 2, [(-3, 3)],
     lambda x, y: min(abs(x * y + 1), abs(x * y - 2))),
    ("iif", lambda x, y, m: m.iif(x > y, x * x, y * 3.0), 2, [(-3, 3)], lambda x, y: abs(x - y)),
    ("iif_constant_branch", lambda x, y, m: m.iif(x < 0.5, m.sin(y), 2.0) + x, 2, [(-3, 3)],
     lambda x, y: abs(x - 0.5)),
    ("int_paths", lambda x, y, m: x * y + (x < y), 2, [(-3, 3)], lambda x, y: abs(x - y)),
]


@pytest.mark.parametrize(("name", "f", "n_vars", "domains", "away"), RULES, ids=[r[0] for r in RULES])
def test_rule(name: str, f: Expr, n_vars: int, domains: list[tuple[float, float]],
              away: Callable[..., float] | None) -> None:
    check_gradient(f, n_vars, domains, seed=sum(map(ord, name)), away=away)


COMPOUND: list[tuple[str, Expr, int, list[tuple[float, float]]]] = [
    ("norm", lambda x, y, z, m: m.sqrt(x * x + y * y + z * z), 3, [(-3, 3)]),
    ("trig_mix", lambda x, y, z, m: m.sin(x * y) + m.cos(z) * x - y / (1.0 + z * z), 3, [(-2, 2)]),
    ("shared_subexpression", lambda x, y, z, m: (x * y + z) * m.sin(x * y + z) / (x * y + z + 5.0),
     3, [(-1.5, 1.5)]),
    ("polynomial", lambda x, y, z, m: 3.0 * x**3 - 2.0 * x * y * z + z**2 / 4.0 - 7.0, 3, [(-2, 2)]),
    ("rotation_angle", lambda x, y, z, m: m.sin(x) * y - m.cos(x) * z, 3, [(-3, 3)]),
    ("deep_chain", lambda x, y, z, m: _chain(x, y, z, m), 3, [(-1, 1)]),
    ("softplus_logistic", lambda x, y, z, m: m.log(1.0 + m.exp(x * y)) + 1.0 / (1.0 + m.exp(-z)),
     3, [(-2, 2)]),
    ("atan2_of_functions", lambda x, y, z, m: m.atan2(m.sin(x) + 2.0, m.cos(y) * z + 3.0), 3, [(-2, 2)]),
    ("pow_chain", lambda x, y, z, m: m.pow(x * x + 1.0, m.sin(y)) * m.exp(z / 4.0), 3, [(-1.5, 1.5)]),
]


def _chain(x: Any, y: Any, z: Any, m: Any) -> Any:
    acc = x
    for _ in range(30):
        acc = m.sin(acc * y + z) * 0.9 + acc * 0.1
    return acc


@pytest.mark.parametrize(("name", "f", "n_vars", "domains"), COMPOUND, ids=[c[0] for c in COMPOUND])
def test_compound(name: str, f: Expr, n_vars: int, domains: list[tuple[float, float]]) -> None:
    check_gradient(f, n_vars, domains, seed=sum(map(ord, name)), n=8, rtol=5e-4)


def test_second_derivative() -> None:
    def f(x: Any, m: Any) -> Any:
        return m.sin(x * x) * x

    def d2_reference(x: float) -> float:  # d²/dx² of x sin(x²)
        return 6 * x * math.cos(x * x) - 4 * x**3 * math.sin(x * x)

    xs = [cp.value(v) for v in (-1.2, 0.3, 0.9)]
    d2 = [cp.grad(cp.grad(f(x, cp), x), x) for x in xs]
    tg = cp.Target()
    tg.compile(d2)
    tg.run()
    for x, g in zip((-1.2, 0.3, 0.9), tg.read_value(d2), strict=True):
        assert g == pytest.approx(d2_reference(float(np.float32(x))), rel=1e-4, abs=1e-4)


def test_subgradients_at_kinks() -> None:
    """Ties in minimum/maximum send the gradient to the second operand (the one NumPy
    returns); abs has derivative 0 at 0; clamp passes it only strictly inside."""
    a, b, z = cp.value(1.0), cp.value(1.0), cp.value(0.0)
    lo, hi, mid = cp.value(-1.0), cp.value(2.0), cp.value(0.5)
    grads = [
        cp.grad(cp.minimum(a, b), [a, b]),
        cp.grad(cp.maximum(a, b), [a, b]),
        cp.grad(cp.abs(z) + cp.abs(-z), [z]),
        cp.grad(cp.clamp(lo, -1.0, 2.0) + cp.clamp(hi, -1.0, 2.0), [lo, hi]),
        cp.grad(cp.clamp(mid, -1.0, 2.0), [mid]),
    ]
    tg = cp.Target()
    tg.compile(grads)
    tg.run()
    assert [[_read(tg, g) for g in row] for row in grads] == [
        [0.0, 1.0], [0.0, 1.0], [0.0], [0.0, 0.0], [1.0]]


# ---- shapes -------------------------------------------------------------------------------

def _read(tg: cp.Target, g: Any) -> Any:
    return tg.read_value(g) if isinstance(g, cp.value) else g


def test_value_list_tuple_and_plain_numbers() -> None:
    x, y, z = cp.value(2.0), cp.value(3.0), cp.value(5.0)
    f = x * y + cp.sin(y)
    g_scalar = cp.grad(f, x)
    g_list = cp.grad(f, [x, y, z, 4.0])
    g_tuple = cp.grad(f, (y, [x, 1]))
    assert isinstance(g_scalar, cp.value)
    assert isinstance(g_list, list) and len(g_list) == 4
    assert g_list[3] == 0.0 and type(g_list[3]) is float
    assert isinstance(g_tuple, list) and isinstance(g_tuple[1], list)
    tg = cp.Target()
    tg.compile(g_scalar, g_list, g_tuple)
    tg.run()
    want_y = float(np.float32(2.0) + np.cos(np.float32(3.0)))
    assert tg.read_value(g_scalar) == 3.0
    assert [_read(tg, g) for g in g_list] == [3.0, pytest.approx(want_y, rel=1e-6), 0.0, 0.0]
    assert _read(tg, g_tuple[0]) == pytest.approx(want_y, rel=1e-6)
    assert [_read(tg, g) for g in g_tuple[1]] == [3.0, 0.0]


def test_constant_gradients_fold() -> None:
    x, z = cp.value(1.5), cp.value(0.0)
    assert "constant 3.0" in repr(cp.grad(x * 3.0 - 1.0, x))
    assert "constant 0.0" in repr(cp.grad(x * 3.0, z))
    assert "constant 1.0" in repr(cp.grad(x, x))
    assert cp.grad(2.5, x) == 0.0  # a plain number is a constant


def test_vector_gives_vector() -> None:
    a, b, c = cp.value(1.0), cp.value(-2.0), cp.value(0.5)
    v = cp.vector([a, b, c])
    f = (v * v).sum() + a * c
    g = cp.grad(f, v)
    assert isinstance(g, cp.vector) and len(g) == 3
    tg = cp.Target()
    tg.compile(g)
    tg.run()
    assert [_read(tg, e) for e in g.values] == [2.0 + 0.5, -4.0, 1.0 + 1.0]


def test_matrix_gives_matrix_of_the_same_shape() -> None:
    vals = [[cp.value(float(i * 3 + j + 1)) for j in range(3)] for i in range(2)]
    m = cp.matrix(vals)
    w = cp.vector([1.0, -2.0, 0.5])
    f = (m @ w).sum() + vals[1][2] * vals[0][0]
    g = cp.grad(f, m)
    assert type(g) is type(m) and g.shape == (2, 3)
    tg = cp.Target()
    tg.compile(g)
    tg.run()
    got = [_read(tg, e) for e in g.values]
    assert got == [1.0 + 6.0, -2.0, 0.5, 1.0, -2.0, 0.5 + 1.0]


def test_quaternion_gives_quaternion() -> None:
    w, x, y, z = (cp.value(v) for v in (0.9, 0.1, -0.3, 0.2))
    q = cp.quaternion(w, x, y, z)
    f = q.norm()
    g = cp.grad(f, q)
    assert isinstance(g, cp.quaternion)
    tg = cp.Target()
    tg.compile(g)
    tg.run()
    n = math.sqrt(0.9**2 + 0.1**2 + 0.3**2 + 0.2**2)
    got = [_read(tg, e) for e in g.values]
    assert got == pytest.approx([0.9 / n, 0.1 / n, -0.3 / n, 0.2 / n], rel=1e-5)


def test_jacobian_of_a_vector() -> None:
    x, y = cp.value(0.5), cp.value(2.0)
    out: Any = cp.vector([x * y, cp.sin(x), 3.0])
    jac = cp.grad(out, cp.vector([x, y]))
    assert jac.shape == (3, 2)
    rows = cp.grad(out, [x, y])
    assert isinstance(rows, list) and len(rows) == 3 and rows[2] == [0.0, 0.0]
    tg = cp.Target()
    tg.compile(jac, rows)
    tg.run()
    want = [2.0, 0.5, float(np.cos(np.float32(0.5))), 0.0, 0.0, 0.0]
    assert [_read(tg, e) for e in jac.values] == pytest.approx(want, rel=1e-6)
    assert [_read(tg, e) for r in rows for e in r] == pytest.approx(want, rel=1e-6)


# ---- errors -------------------------------------------------------------------------------

def test_int_or_bool_y_is_an_error() -> None:
    x = cp.value(1.0)
    with pytest.raises(TypeError, match="needs a float value to differentiate, got int"):
        cp.grad(cp.value(3) * 2, x)
    with pytest.raises(TypeError, match="needs a float value to differentiate, got bool"):
        cp.grad(x < 2.0, x)
    with pytest.raises(TypeError, match="differentiates a copapy value"):
        cp.grad("x", x)


def test_int_or_bool_wrt_is_an_error() -> None:
    x, n, b = cp.value(1.0), cp.value(3), cp.value(True)
    f = x * n + b
    with pytest.raises(TypeError, match="with respect to an int value"):
        cp.grad(f, n)
    with pytest.raises(TypeError, match="with respect to a bool value"):
        cp.grad(f, [x, b])
    with pytest.raises(TypeError, match="with respect to values"):
        cp.grad(f, "x")


def test_dependence_through_int_conversion_is_zero() -> None:
    x = cp.value(2.7)
    i = cp.value(4)
    f = x * 2.0 + (x // 1.0) + (x > 1.0) * x + i
    g = cp.grad(f, x)
    tg = cp.Target()
    tg.compile(g)
    tg.run()
    assert tg.read_value(g) == 3.0  # 2 from x*2, 1 from (x > 1) * x, nothing from x // 1


# ---- traced loops -------------------------------------------------------------------------

def test_gradient_descent_unrolled_in_a_traced_loop() -> None:
    # minimum of (x - 1)^2 + 2 (y + 0.5)^2 + x y / 4 by 60 unrolled steps
    x, y = cp.value(3.0), cp.value(2.0)
    px, py = x, y
    for _ in range(60):
        f = (px - 1.0) ** 2 + 2.0 * (py + 0.5) ** 2 + px * py / 4.0
        gx, gy = cp.grad(f, [px, py])
        px, py = px - 0.2 * gx, py - 0.2 * gy
    tg = cp.Target()
    tg.compile(px, py, f)
    tg.run()
    # stationary point: 2(x-1) + y/4 = 0, 4(y+0.5) + x/4 = 0
    a = np.array([[2.0, 0.25], [0.25, 4.0]])
    want = np.linalg.solve(a, [2.0, -2.0])
    assert tg.read_value([px, py]) == pytest.approx(list(want), abs=1e-5)
    # inputs stay inputs: run again from another start
    tg.write_value(x, -4.0)
    tg.write_value(y, 7.0)
    tg.run()
    assert tg.read_value([px, py]) == pytest.approx(list(want), abs=1e-4)


def test_deep_traced_graph() -> None:
    x = cp.value(0.5)
    acc = x
    for _ in range(20000):
        acc = acc * 0.9999 + cp.sin(acc) * 1e-4
    g = cp.grad(acc, x)
    tg = cp.Target()
    tg.compile(g, acc)
    tg.run()
    # float64 reference of the same recursion and its derivative
    a, d = 0.5, 1.0
    for _ in range(20000):
        a, d = a * 0.9999 + math.sin(a) * 1e-4, d * (0.9999 + math.cos(a) * 1e-4)
    assert tg.read_value(g) == pytest.approx(d, rel=1e-3)


# ---- inverse kinematics -------------------------------------------------------------------

L1, L2, TARGET, ALPHA, STEPS = 1.8, 2.0, (0.7, 0.7), 0.1, 48


def ik_reference() -> tuple[np.ndarray, float, list[float]]:
    """The example's 48 gradient-descent steps in float64 with the analytic gradient; the
    error and joint position are those of the last step (before its update), as traced."""
    t = np.zeros(2)
    for _ in range(STEPS):
        s1, c1 = np.sin(t[0]), np.cos(t[0])
        joint = [L1 * c1, L1 * s1]
        s12, c12 = np.sin(t[0] + t[1]), np.cos(t[0] + t[1])
        ex, ey = L1 * c1 + L2 * c12, L1 * s1 + L2 * s12
        rx, ry = TARGET[0] - ex, TARGET[1] - ey
        error = rx * rx + ry * ry
        # d error / d effector = -2 r; d effector / d theta
        d_t2 = -2 * (rx * -L2 * s12 + ry * L2 * c12)
        d_t1 = -2 * (rx * (-L1 * s1) + ry * (L1 * c1)) + d_t2
        t = t - ALPHA * np.array([d_t1, d_t2])
    return t, float(error), joint


def ik_copapy() -> tuple[list[float], float, list[float]]:
    target = cp.vector([0.7, 0.7])

    def forward_kinematics(theta1: Any, theta2: Any) -> tuple[Any, Any]:
        joint = cp.vector([L1 * cp.cos(theta1), L1 * cp.sin(theta1)])
        end_effector = joint + cp.vector([L2 * cp.cos(theta1 + theta2), L2 * cp.sin(theta1 + theta2)])
        return joint, end_effector

    theta = cp.vector([cp.value(0.0), cp.value(0.0)])
    for _ in range(STEPS):
        joint, effector = forward_kinematics(theta[0], theta[1])
        error = ((target - effector) ** 2).sum()
        theta -= ALPHA * cp.grad(error, theta)
    tg = cp.Target()
    tg.compile(error, theta, joint)
    tg.run()
    return tg.read_value(theta), tg.read_value(error), tg.read_value(joint)


def test_inverse_kinematics_matches_float64_gradient_descent() -> None:
    theta, error, joint = ik_copapy()
    ref_theta, ref_error, ref_joint = ik_reference()
    assert theta == pytest.approx(list(ref_theta), abs=1e-5)
    # the bar: within 2e-3 rad of Copapy's solution, error below 1e-5
    assert theta == pytest.approx([-0.72295, 2.62469], abs=2e-3)
    assert error < 1e-5 and ref_error < 1e-5
    assert error == pytest.approx(ref_error, rel=1e-2)
    assert joint == pytest.approx(ref_joint, abs=1e-5)


def test_inverse_kinematics_example_script() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "inverse_kinematics.py")],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    lines = {line.split(":")[0].split("=")[0].strip(): line for line in proc.stdout.splitlines()}
    number = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?")
    angles = [float(t) for t in number.findall(lines["Joint angles"].split(":")[1])]
    error = float(lines["quadratic error"].split("=")[1])
    assert angles == pytest.approx([-0.72295, 2.62469], abs=2e-3)
    assert error < 1e-5
