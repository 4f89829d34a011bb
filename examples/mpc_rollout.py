"""An MPC horizon roll-out with cp.scan and its gradient: 50 steps of a cart, the cost's gradient by BPTT.

The cart (position, velocity) is driven by a control sequence u over a 50-step horizon;
the cost sums the squared position error and control effort. cp.grad of the cost with
respect to every control runs a reverse loop over a tape of the states, so the program
holds the step a few times, not 50 times; 20 gradient steps (rate 0.002) improve the plan.
"""

from __future__ import annotations

from typing import Any

import copapy as cp

dt, horizon, goal = 0.1, 50, 1.0


def rollout(u: list[Any], x0: Any, v0: Any) -> Any:
    """The cost of driving the cart from (x0, v0) with the controls u."""

    def step(state: Any, uk: Any) -> Any:
        x, v, cost = state
        x, v = x + dt * v, v + dt * uk
        return (x, v, cost + (x - goal) ** 2 + 0.01 * uk * uk), x

    (_, _, cost), _ = cp.scan(step, (x0, v0, cp.value(0.0)), u)
    return cost


def main() -> None:
    u = [cp.value(0.0) for _ in range(horizon)]
    x0, v0 = cp.value(0.0, name="x0"), cp.value(0.0, name="v0")
    cost = rollout(u, x0, v0)
    gradient = cp.grad(cost, u)
    tg = cp.Target()
    tg.compile(cost, gradient, updates={uk: uk - 0.002 * g for uk, g in zip(u, gradient, strict=False)})
    first = None
    for _ in range(20):
        tg.run()
        first = first if first is not None else tg.read_value(cost)
    print(f"cost of the first plan: {first}")
    print(f"cost after 20 gradient steps: {tg.read_value(cost)}")
    print(f"code: {tg.stats()[1]:,} B for a {horizon}-step horizon")


if __name__ == "__main__":
    main()
