"""Inverse kinematics with 1,000 descent steps as one cp.fori_loop: under 4 KB of Cortex-M4 code.

The step of inverse_kinematics.py (cp.grad of the squared distance to the target, inside
the body) is traced once; the compiled program holds it once, with a counter and a
back-edge, so 1,000 steps cost the code of one. The target position is an input, so one
program solves for any target.
"""

from __future__ import annotations

from typing import Any

import copapy as cp

l1, l2 = 1.8, 2.0  # arm lengths
alpha = 0.1  # learning rate


def forward_kinematics(theta1: Any, theta2: Any) -> tuple[cp.vector[float], cp.vector[float]]:
    """Positions of the joint and of the end effector."""
    joint = cp.vector([l1 * cp.cos(theta1), l1 * cp.sin(theta1)])
    end_effector = joint + cp.vector([l2 * cp.cos(theta1 + theta2), l2 * cp.sin(theta1 + theta2)])
    return joint, end_effector


def descend(steps: int, unroll: int | bool = 1,
            target: cp.vector[float] | None = None) -> cp.vector[float]:
    """The joint angles after `steps` gradient-descent steps from (0, 0)."""
    goal = target if target is not None else cp.vector([cp.value(0.7), cp.value(0.7)])

    def step(i: Any, theta: cp.vector[float]) -> cp.vector[float]:
        _, effector = forward_kinematics(theta[0], theta[1])
        error = ((goal - effector) ** 2).sum()
        gradient: cp.vector[float] = cp.grad(error, theta)
        return theta - alpha * gradient

    start = cp.vector([cp.value(0.0), cp.value(0.0)])
    return cp.fori_loop(0, steps, step, start, unroll=unroll)


def main() -> None:
    target = cp.vector([cp.value(0.7), cp.value(0.7)])
    theta = descend(1000, target=target)
    _, effector = forward_kinematics(theta[0], theta[1])
    m4 = cp.Target("cortex-m4")
    m4.compile(theta, effector)
    print(f"Cortex-M4 code for 1,000 steps: {m4.stats()[1]:,} B")
    tg = cp.Target()
    tg.compile(theta, effector)
    tg.run()
    print(f"Joint angles: {tg.read_value(theta)}")
    print(f"End-effector position: {tg.read_value(effector)}")


if __name__ == "__main__":
    main()
