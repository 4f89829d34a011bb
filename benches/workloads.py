"""The four control workloads of issue 23, written once and bound to copapy or numba.

Each workload is one plain Python function over flat float32 sequences (scalar indexing
only, so a NumPy array and a ``cp.vector`` both work). The few names that differ between
backends are globals the function looks up: ``f`` (a float32 constant), ``zeros(n)``
(a scratch buffer), ``sin``, ``cos``, ``tanh``, ``clamp``, ``iif``, ``ik_grad`` and the
MLP's weights. :func:`bind` gives a copy of a workload with those globals replaced, so
copapy traces exactly the code numba compiles:

- ``pid``: PID with anti-windup (the integral only grows while the output is not clamped);
- ``kalman``: one predict + update step of a 4-state constant-velocity Kalman filter over
  constant sparse matrices (F, H, Q, R; the 2x2 innovation inverted in closed form);
- ``ik``: the inverse-kinematics example (``examples/inverse_kinematics.py``), 48
  gradient-descent steps; copapy differentiates with ``cp.grad``, numba and C use the
  gradient written out by hand;
- ``mlp``: a 16 -> 32 -> 32 -> 4 perceptron with tanh (fixed random float32 weights).

The hand-written C versions (``C_SOURCE``) follow the same loops and operation order.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

import numpy as np

DT = 0.01
# Kalman: state (px, py, vx, vy), position measured
KF_F = [1.0, 0.0, DT, 0.0,
        0.0, 1.0, 0.0, DT,
        0.0, 0.0, 1.0, 0.0,
        0.0, 0.0, 0.0, 1.0]
KF_H = [1.0, 0.0, 0.0, 0.0,
        0.0, 1.0, 0.0, 0.0]
KF_Q = [1e-4, 0.0, 0.0, 0.0,
        0.0, 1e-4, 0.0, 0.0,
        0.0, 0.0, 1e-2, 0.0,
        0.0, 0.0, 0.0, 1e-2]
KF_R = [0.05, 0.0,
        0.0, 0.05]
IK_L1, IK_L2, IK_ALPHA, IK_STEPS = 1.8, 2.0, 0.1, 48
MLP_SIZES = (16, 32, 32, 4)


def _mlp_weights() -> dict[str, np.ndarray[Any, Any]]:
    rng = np.random.default_rng(23)
    out: dict[str, np.ndarray[Any, Any]] = {}
    for k, (n_in, n_out) in enumerate(zip(MLP_SIZES, MLP_SIZES[1:], strict=False)):
        scale = 1.0 / np.sqrt(n_in)
        out[f"W{k + 1}"] = (rng.standard_normal(n_in * n_out) * scale).astype(np.float32)
        out[f"B{k + 1}"] = (rng.standard_normal(n_out) * 0.1).astype(np.float32)
    return out


MLP_WEIGHTS = _mlp_weights()


# -- the workloads, written once --------------------------------------------------------------
# Globals looked up at call or trace time (bound by `bind`).
f: Any = float
zeros: Any = None
sin: Any = None
cos: Any = None
tanh: Any = None
clamp: Any = None
iif: Any = None
ik_grad: Any = None
kf_F: Any = KF_F
kf_H: Any = KF_H
kf_Q: Any = KF_Q
kf_R: Any = KF_R
W1: Any = None
B1: Any = None
W2: Any = None
B2: Any = None
W3: Any = None
B3: Any = None


def pid(state: Any, meas: Any) -> Any:
    """state = (integral, previous error), meas = (setpoint, measurement) -> (u, integral, error)."""
    kp, ki, kd, dt, umax = f(2.0), f(0.5), f(0.1), f(DT), f(10.0)
    integral, previous = state[0], state[1]
    e = meas[0] - meas[1]
    grown = integral + e * dt
    u_raw = kp * e + ki * grown + kd * (e - previous) / dt
    u = clamp(u_raw, -umax, umax)
    return u, iif(u_raw == u, grown, integral), e


def _matmul(a: Any, b: Any, n: int, k: int, m: int, b_transposed: bool) -> Any:
    """n x k times k x m (b given as m x k when b_transposed), row-major, left to right sums."""
    out = zeros(n * m)
    for i in range(n):
        for j in range(m):
            s = a[i * k] * (b[j * k] if b_transposed else b[j])
            for q in range(1, k):
                s = s + a[i * k + q] * (b[j * k + q] if b_transposed else b[q * m + j])
            out[i * m + j] = s
    return out


def kalman(x: Any, p: Any, z: Any) -> Any:
    """One predict + update step: state x (4), covariance p (4x4), measurement z (2)."""
    # predict: x = F x, P = F P F^T + Q
    xp = _matmul(kf_F, x, 4, 4, 1, False)
    fp = _matmul(kf_F, p, 4, 4, 4, False)
    pp = _matmul(fp, kf_F, 4, 4, 4, True)
    for i in range(16):
        pp[i] = pp[i] + kf_Q[i]
    # update: S = H P H^T + R, K = P H^T S^-1
    hp = _matmul(kf_H, pp, 2, 4, 4, False)
    s = _matmul(hp, kf_H, 2, 4, 2, True)
    for i in range(4):
        s[i] = s[i] + kf_R[i]
    det = s[0] * s[3] - s[1] * s[2]
    inv = zeros(4)
    inv[0], inv[1], inv[2], inv[3] = s[3] / det, -s[1] / det, -s[2] / det, s[0] / det
    pht = _matmul(pp, kf_H, 4, 4, 2, True)
    gain = _matmul(pht, inv, 4, 2, 2, False)
    hx = _matmul(kf_H, xp, 2, 4, 1, False)
    innovation = zeros(2)
    innovation[0], innovation[1] = z[0] - hx[0], z[1] - hx[1]
    correction = _matmul(gain, innovation, 4, 2, 1, False)
    x_new = zeros(4)
    for i in range(4):
        x_new[i] = xp[i] + correction[i]
    # P = P - K (H P)
    khp = _matmul(gain, hp, 4, 2, 4, False)
    p_new = zeros(16)
    for i in range(16):
        p_new[i] = pp[i] - khp[i]
    return x_new, p_new


def ik(theta: Any, target: Any) -> Any:
    """48 gradient-descent steps of the two-joint arm -> (theta1, theta2, squared error)."""
    l1, l2, alpha = f(IK_L1), f(IK_L2), f(IK_ALPHA)
    t1, t2 = theta[0], theta[1]
    err = f(0.0)
    for _ in range(IK_STEPS):
        c1, s1, c12, s12 = cos(t1), sin(t1), cos(t1 + t2), sin(t1 + t2)
        ex = target[0] - (l1 * c1 + l2 * c12)
        ey = target[1] - (l1 * s1 + l2 * s12)
        err = ex * ex + ey * ey
        g1, g2 = ik_grad(err, t1, t2, ex, ey, c1, s1, c12, s12)
        t1, t2 = t1 - alpha * g1, t2 - alpha * g2
    return t1, t2, err


def _layer(w: Any, b: Any, x: Any, n_in: int, n_out: int, squash: bool) -> Any:
    out = zeros(n_out)
    for i in range(n_out):
        s = b[i]
        for k in range(n_in):
            s = s + w[i * n_in + k] * x[k]
        out[i] = tanh(s) if squash else s
    return out


def mlp(x: Any) -> Any:
    """16 inputs -> 32 tanh -> 32 tanh -> 4 linear outputs."""
    n0, n1, n2, n3 = MLP_SIZES
    h1 = _layer(W1, B1, x, n0, n1, True)
    h2 = _layer(W2, B2, h1, n1, n2, True)
    return _layer(W3, B3, h2, n2, n3, False)


WORKLOADS: dict[str, Callable[..., Any]] = {"pid": pid, "kalman": kalman, "ik": ik, "mlp": mlp}
HELPERS = [_matmul, _layer]


def example_args() -> dict[str, tuple[np.ndarray[Any, Any], ...]]:
    """The float32 arguments each workload is called with."""
    f32 = np.float32
    return {
        "pid": (np.array([0.3, 0.1], f32), np.array([1.0, 0.25], f32)),
        "kalman": (np.array([0.5, -0.2, 1.0, 0.3], f32),
                   np.eye(4, dtype=f32).reshape(16) * f32(0.5), np.array([0.52, -0.19], f32)),
        "ik": (np.array([0.0, 0.0], f32), np.array([0.7, 0.7], f32)),
        "mlp": (np.linspace(-1.0, 1.0, 16, dtype=f32),),
    }


# -- binding ----------------------------------------------------------------------------------


def _rebind(fn: Callable[..., Any], env: dict[str, Any]) -> Callable[..., Any]:
    return types.FunctionType(fn.__code__, env, fn.__name__, fn.__defaults__, fn.__closure__)


def bind(name: str, names: dict[str, Any], wrap: Callable[[Any], Any] = lambda fn: fn) -> Any:
    """Workload ``name`` with its globals replaced by ``names``; ``wrap`` (such as
    ``numba.njit``) is applied to the helpers and the workload so they call each other."""
    env = dict(globals())
    env.update(names)
    for helper in HELPERS:
        env[helper.__name__] = wrap(_rebind(helper, env))
    return wrap(_rebind(WORKLOADS[name], env))


def copapy_names() -> dict[str, Any]:
    import copapy as cp

    def grad(err: Any, t1: Any, t2: Any, *_: Any) -> Any:
        return cp.grad(err, [t1, t2])

    weights = {k: v.tolist() for k, v in MLP_WEIGHTS.items()}
    return {"f": float, "zeros": lambda n: [0.0] * n, "sin": cp.sin, "cos": cp.cos,
            "tanh": cp.tanh, "clamp": cp.clamp, "iif": cp.iif, "ik_grad": grad, **weights}


def numba_names() -> dict[str, Any]:
    import numba

    f32 = np.float32

    @numba.njit(inline="always")
    def clamp_nb(x: Any, lo: Any, hi: Any) -> Any:
        return min(max(x, lo), hi)

    @numba.njit(inline="always")
    def iif_nb(c: Any, a: Any, b: Any) -> Any:
        return a if c else b

    @numba.njit(inline="always")
    def zeros_nb(n: int) -> Any:
        return np.zeros(n, np.float32)

    l1, l2 = f32(IK_L1), f32(IK_L2)

    @numba.njit(inline="always")
    def grad_nb(err: Any, t1: Any, t2: Any, ex: Any, ey: Any, c1: Any, s1: Any, c12: Any,
                s12: Any) -> Any:
        # d(ex^2 + ey^2)/dt with dex/dt1 = l1 s1 + l2 s12, dey/dt1 = -(l1 c1 + l2 c12)
        two = f32(2.0)
        g2 = two * ex * (l2 * s12) - two * ey * (l2 * c12)
        g1 = two * ex * (l1 * s1 + l2 * s12) - two * ey * (l1 * c1 + l2 * c12)
        return g1, g2

    arrays = {"kf_F": np.array(KF_F, f32), "kf_H": np.array(KF_H, f32),
              "kf_Q": np.array(KF_Q, f32), "kf_R": np.array(KF_R, f32)}
    return {"f": f32, "zeros": zeros_nb, "sin": np.sin, "cos": np.cos, "tanh": np.tanh,
            "clamp": clamp_nb, "iif": iif_nb, "ik_grad": grad_nb, **arrays, **MLP_WEIGHTS}


def float_names(count: Callable[[str], None]) -> dict[str, Any]:
    """Plain float32 semantics with every addition and subtraction counted (``count``)."""
    f32 = np.float32

    class Counted(float):
        """A float32 number that reports each addition/subtraction (dense operation count)."""

        def _op(self, other: Any, fn: Callable[[Any, Any], Any], kind: str) -> Counted:
            count(kind)
            return Counted(fn(f32(self), f32(other)))

        def __add__(self, o: Any) -> Counted:
            return self._op(o, lambda a, b: a + b, "add")

        def __radd__(self, o: Any) -> Counted:
            return self._op(o, lambda a, b: b + a, "add")

        def __sub__(self, o: Any) -> Counted:
            return self._op(o, lambda a, b: a - b, "add")

        def __rsub__(self, o: Any) -> Counted:
            return self._op(o, lambda a, b: b - a, "add")

        def __mul__(self, o: Any) -> Counted:
            return self._op(o, lambda a, b: a * b, "mul")

        def __rmul__(self, o: Any) -> Counted:
            return self._op(o, lambda a, b: b * a, "mul")

        def __truediv__(self, o: Any) -> Counted:
            return self._op(o, lambda a, b: a / b, "div")

        def __neg__(self) -> Counted:
            return Counted(-f32(self))

    def wrap(xs: list[float]) -> list[Counted]:
        return [Counted(x) for x in xs]

    return {"f": Counted, "zeros": lambda n: [Counted(0.0)] * n,
            "kf_F": wrap(KF_F), "kf_H": wrap(KF_H), "kf_Q": wrap(KF_Q), "kf_R": wrap(KF_R)}
