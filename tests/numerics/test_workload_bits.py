"""The control workloads keep their bits through the optimiser's sign and doubling folds.

PID, the Kalman step and IK's 48 ``cp.grad`` steps (benches/workloads.py) are compiled once
and run on random inputs; every output is compared bit for bit with NumPy float32:

- PID and Kalman: the workload's own code run on NumPy float32 scalars and arrays (the code
  copapy traces, so the same operations in the same order);
- IK: the gradient written out below in NumPy float32 as cp.grad's reverse mode builds it
  (crates/copapy-compiler/src/autodiff.rs: ``d(ex*ex) = ex + ex``, ``d(tx - p)/dp = -g``,
  ``d cos(t) = -(g * sin t)``, ``d sin(t) = g * cos t``, adjoints summed as they arrive),
  so the negations and doublings the optimiser removes are all there. The sines and
  cosines are copapy's own math library (its bits exist only as stencil code): the program
  outputs them too and the reference takes them as given.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import copapy as cp
import numpy as np
from refsem import same_float

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benches"))
import workloads as W  # noqa: E402

F32 = np.float32
RUNS = 6


def numpy_names() -> dict[str, Any]:
    return {"f": F32, "zeros": lambda n: np.zeros(n, F32),
            "clamp": lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi),
            "iif": lambda c, a, b: a if c else b,
            "kf_F": np.array(W.KF_F, F32), "kf_H": np.array(W.KF_H, F32),
            "kf_Q": np.array(W.KF_Q, F32), "kf_R": np.array(W.KF_R, F32)}


def flat(result: Any) -> list[Any]:
    parts = result if isinstance(result, tuple) else (result,)
    return [v for part in parts for v in (part if isinstance(part, (list, np.ndarray)) else [part])]


def random_args(name: str, rng: np.random.Generator) -> list[np.ndarray[Any, Any]]:
    if name == "ik":
        theta = rng.uniform(-np.pi, np.pi, 2)
        reach = rng.uniform(0.4, 3.6) * np.array([np.cos(a := rng.uniform(-np.pi, np.pi)), np.sin(a)])
        return [theta.astype(F32), reach.astype(F32)]
    return [rng.uniform(-4.0, 4.0, len(a)).astype(F32) for a in W.example_args()[name]]


def compiled(name: str, names: dict[str, Any]) -> tuple[list[list[Any]], list[Any], Any]:
    """The workload traced over scalar inputs: (inputs, outputs, the bound function)."""
    fn = W.bind(name, names)
    inputs = [[cp.value(float(v)) for v in a] for a in W.example_args()[name]]
    outputs = flat(fn(*inputs))
    return inputs, outputs, fn


def check_against_numpy(name: str) -> None:
    inputs, outputs, _ = compiled(name, W.copapy_names())
    reference = W.bind(name, numpy_names())
    tg = cp.Target()
    tg.compile(outputs)
    rng = np.random.default_rng(23)
    for _ in range(RUNS):
        args = random_args(name, rng)
        tg.write_value([v for a in inputs for v in a], [float(v) for a in args for v in a])
        tg.run()
        with np.errstate(all="ignore"):
            want = flat(reference(*args))
        got = tg.read_value(outputs)
        bad = [(k, g, w) for k, (g, w) in enumerate(zip(got, want, strict=True)) if not same_float(g, w)]
        assert not bad, f"{name} with {args}: outputs (index, got, want) {bad}"


def test_pid_keeps_its_bits() -> None:
    check_against_numpy("pid")


def test_kalman_keeps_its_bits() -> None:
    check_against_numpy("kalman")


def ik_reference(theta: np.ndarray[Any, Any], target: np.ndarray[Any, Any],
                 trig: list[float]) -> tuple[F32, F32, F32]:
    """IK's 48 steps with cp.grad's gradient in NumPy float32; ``trig`` holds each step's
    cos(t1), sin(t1), cos(t1 + t2), sin(t1 + t2) as the program computed them."""
    l1, l2, alpha = F32(W.IK_L1), F32(W.IK_L2), F32(W.IK_ALPHA)
    tx, ty = target
    t1, t2 = theta
    err = F32(0.0)
    for k in range(W.IK_STEPS):
        c1, s1, c12, s12 = (F32(v) for v in trig[4 * k:4 * k + 4])
        ex = tx - (l1 * c1 + l2 * c12)
        ey = ty - (l1 * s1 + l2 * s12)
        err = ex * ex + ey * ey
        # reverse mode from err: each square sends g * x twice, the differences -g; the
        # two t1 + t2 are two traced nodes, each sending its adjoint to t1 and t2
        g_p = -(ex + ex)
        g_q = -(ey + ey)
        from_c1 = -((g_p * l1) * s1)
        from_c12 = -((g_p * l2) * s12)
        from_s1 = (g_q * l1) * c1
        from_s12 = (g_q * l2) * c12
        g1 = ((from_c1 + from_c12) + from_s1) + from_s12
        g2 = from_c12 + from_s12
        t1, t2 = t1 - alpha * g1, t2 - alpha * g2
    return t1, t2, err


def test_ik_gradient_steps_keep_their_bits() -> None:
    trig: list[Any] = []
    names = W.copapy_names()

    def recording(fn: Any) -> Any:
        def call(x: Any) -> Any:
            trig.append(fn(x))
            return trig[-1]
        return call

    names["sin"], names["cos"] = recording(cp.sin), recording(cp.cos)
    inputs, outputs, _ = compiled("ik", names)
    assert len(trig) == 4 * W.IK_STEPS
    tg = cp.Target()
    tg.compile(outputs + trig)
    rng = np.random.default_rng(48)
    for _ in range(RUNS):
        theta, target = random_args("ik", rng)
        tg.write_value([v for a in inputs for v in a], [float(v) for v in (*theta, *target)])
        tg.run()
        got = tg.read_value(outputs)
        want = ik_reference(theta, target, tg.read_value(trig))
        assert all(same_float(g, w) for g, w in zip(got, want, strict=True)), (
            f"theta {theta}, target {target}: got {got}, want {[float(w) for w in want]}")
