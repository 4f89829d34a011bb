"""A Newton solve as a cp.fori_loop: the angle where a pendulum's torque balances a spring.

Solves f(x) = m g l sin(x) - k x - tau = 0 for x with 12 Newton steps; the derivative is
cp.grad of f inside the loop body, so the compiled program holds one step, whatever the
step count. The parameters are inputs: one program solves for any torque.
"""

from __future__ import annotations

from typing import Any

import copapy as cp

m_g_l = 4.0  # pendulum weight x arm (N m)
k = 9.0  # spring stiffness (N m / rad)


def solve(tau: Any, x0: Any, steps: int = 12) -> Any:
    """x with m g l sin(x) - k x = tau, by Newton's method from x0."""

    def step(i: Any, x: Any) -> Any:
        f = m_g_l * cp.sin(x) - k * x - tau
        return x - f / cp.grad(f, x)

    return cp.fori_loop(0, steps, step, x0)


def main() -> None:
    tau = cp.value(-1.5, name="tau")
    x = solve(tau, cp.value(0.0))
    tg = cp.Target()
    tg.compile(x)
    for torque in (-1.5, 0.5, 2.0):
        tg.write_value(tau, torque)
        tg.run()
        print(f"tau = {torque}: x = {tg.read_value(x)}")


if __name__ == "__main__":
    main()
