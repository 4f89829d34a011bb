"""The step response of the README's PID loop run by copapy (host, Cortex-M4) against python-control.

The loop of the README (a PI controller with the plant y += 0.02 (0.8 u - y), both advanced
by the program itself through ``updates=``) runs 300 steps of 10 ms natively and in the
emulator of a Cortex-M4F. The command never reaches the clamp, so the loop is linear and
python-control gives the reference: ``C(z) = 2 + 0.05 z / (z - 1)``,
``P(z) = 0.016 / (z - 0.98)``, ``step_response(feedback(C P, 1))`` in float64.

    python examples/pid_step_plot.py                        # prints the differences
    python examples/pid_step_plot.py docs/figures/pid_step.png   # and plots them
"""

import sys
from typing import Any

import control  # type: ignore[import-untyped]
import copapy as cp
import numpy as np

DT, STEPS = 0.01, 300


def run_on(target: Any) -> list[float]:
    """The README's loop: returns y before every step (y[0] = 0, then one per run)."""
    setpoint = cp.value(1.0, name="setpoint")
    y = cp.value(0.0, name="y")
    integral = cp.value(0.0, name="integral")
    error = setpoint - y
    u = cp.clamp(2.0 * error + 5.0 * (integral + 0.01 * error), -10.0, 10.0)
    target.compile(u, names={"u": u},
                   updates={y: y + 0.02 * (0.8 * u - y), integral: integral + 0.01 * error})
    ys = [0.0]
    for _ in range(STEPS - 1):
        target.run()
        ys.append(float(target.read_value("y")))
    return ys


z = control.TransferFunction.z
controller = 2.0 + 0.05 * z / (z - 1)
plant = control.tf([0.016], [1.0, -0.98], DT)
t = np.arange(STEPS) * DT
reference = np.asarray(control.step_response(control.feedback(controller * plant, 1), T=t).outputs)

host = run_on(cp.Target())
m4 = run_on(cp.Target("cortex-m4"))
print(f"host: largest difference from python-control: {np.max(np.abs(np.array(host) - reference)):.3g}")
print(f"cortex-m4 (emulated): largest difference from python-control: "
      f"{np.max(np.abs(np.array(m4) - reference)):.3g}")
print(f"host and cortex-m4 bit-identical: {host == m4}")

if len(sys.argv) > 1:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 3.2), dpi=100)
    ax.plot(t, reference, color="C0", lw=3, alpha=0.5, label="python-control step_response (float64)")
    ax.plot(t, m4, color="C3", lw=1, ls="--", label="copapy loop on Cortex-M4 (emulated, float32)")
    ax.axhline(1.0, color="0.6", lw=0.8, ls=":")
    ax.set_xlabel("time [s]")
    ax.set_ylabel("plant output y")
    ax.set_title("Step response of the README's PID loop (one run() per 10 ms step)")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(sys.argv[1], metadata={"Software": None})
