"""LQR state feedback with an observer designed with python-control, run by copapy, plotted.

The plant (a mass with friction, position measured) is discretised with ``control.c2d``;
the gains come from ``control.dlqr`` (``K``, and ``L`` from the dual problem).
``cp.control.step_program`` compiles one controller step (measurement in, command out,
the state estimate kept by the program); it runs natively and in the emulator of a
Cortex-M4F, each closing the loop around a float64 simulation of the plant. The reference
is python-control's simulation of the same closed loop in float64.

    python examples/lqr_observer_plot.py                        # prints the differences
    python examples/lqr_observer_plot.py docs/figures/lqr_observer.png   # and plots them
"""

import sys
from typing import Any

import control  # type: ignore[import-untyped]
import copapy as cp
import numpy as np

TS, STEPS = 0.05, 120
plant = control.c2d(control.ss([[0.0, 1.0], [0.0, -0.5]], [[0.0], [1.0]], [[1.0, 0.0]], [[0.0]]), TS)
A, B, C = (np.asarray(m) for m in (plant.A, plant.B, plant.C))
K, _, _ = control.dlqr(A, B, np.diag([10.0, 1.0]), np.eye(1))
L = control.dlqr(A.T, C.T, np.eye(2) * 5.0, np.eye(1))[0].T
X0 = np.array([1.0, 0.0])  # the plant starts 1 away; the observer starts at 0


def run_on(target: Any) -> tuple[list[float], list[float]]:
    """Closed loop: the copapy controller on ``target``, the plant simulated in float64."""
    prog = cp.control.step_program(plant, inputs="y", outputs="u", state="xhat", K=K, L=L, target=target)
    x = X0.copy()
    ys, us = [], []
    for _ in range(STEPS):
        y = float((C @ x)[0])
        (u,) = prog.step([y])
        ys.append(y)
        us.append(u)
        x = A @ x + B[:, 0] * u
    return ys, us


# python-control's simulation of the closed loop [x; xhat] in float64
acl = np.block([[A, -B @ K], [L @ C, A - B @ K - L @ C]])
closed = control.ss(acl, np.zeros((4, 1)), np.block([[C, np.zeros((1, 2))], [np.zeros((1, 2)), -K]]),
                    np.zeros((2, 1)), TS)
response = control.initial_response(closed, T=np.arange(STEPS) * TS, X0=np.concatenate([X0, [0.0, 0.0]]))
ref_y, ref_u = np.asarray(response.outputs)

host = run_on(cp.Target())
m4 = run_on(cp.Target("cortex-m4"))
for name, (ys, us) in (("host", host), ("cortex-m4 (emulated)", m4)):
    print(f"{name}: largest difference from python-control: position "
          f"{np.max(np.abs(np.array(ys) - ref_y)):.3g}, command {np.max(np.abs(np.array(us) - ref_u)):.3g}")
print(f"host and cortex-m4 bit-identical: {host == m4}")

if len(sys.argv) > 1:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = np.arange(STEPS) * TS
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8, 4.2), dpi=100, sharex=True)
    ax1.plot(t, ref_y, color="C0", lw=3, alpha=0.5, label="python-control (float64)")
    ax1.plot(t, m4[0], color="C3", lw=1, ls="--", label="copapy controller on Cortex-M4 (emulated)")
    ax1.set_ylabel("position y")
    ax1.legend(fontsize=8)
    ax2.step(t, ref_u, where="post", color="C0", lw=3, alpha=0.5)
    ax2.step(t, m4[1], where="post", color="C3", lw=1, ls="--")
    ax2.set_ylabel("command u")
    ax2.set_xlabel("time [s]")
    ax1.set_title("LQR state feedback with an observer (dlqr gains, Ts = 50 ms)")
    fig.tight_layout()
    fig.savefig(sys.argv[1], metadata={"Software": None})
