"""Compile time of cp.grad on the inverse-kinematics program, ours next to Copapy 0.0.7.

Usage (from the repository root):

    benches/setup_reference.sh && .venv/bin/python benches/bench_grad.py

The program is ``examples/inverse_kinematics.py``: 48 gradient-descent steps of a two-link
arm, each calling ``cp.grad``, traced into one straight-line program. The same measurement
runs in this interpreter (our copapy) and, as a subprocess with ``--measure``, under
``.venv-copapy-ref/bin/python`` (Copapy 0.0.7), which prints JSON. Figures (median of
repeats, ``time.perf_counter_ns``):

1. the ``cp.grad`` calls alone (sum over the 48 steps);
2. tracing the whole program, ``cp.grad`` included;
3. ``Target.compile`` of the traced program;
4. 2 + 3: from Python source to loaded machine code.

Both runs also report the joint angles they computed, as a check that they did the same work.
"""

from __future__ import annotations

import os
import platform
import statistics
import time
from typing import Any

from _reference import measure_both

STEPS = 48


def build(cp: Any, steps: int) -> tuple[Any, Any, Any, float]:
    """Traces the inverse-kinematics program; returns error, theta, joint and the time spent
    in cp.grad (seconds)."""
    l1, l2 = 1.8, 2.0
    target = cp.vector([0.7, 0.7])
    alpha = 0.1

    def forward_kinematics(theta1: Any, theta2: Any) -> tuple[Any, Any]:
        joint = cp.vector([l1 * cp.cos(theta1), l1 * cp.sin(theta1)])
        end_effector = joint + cp.vector([l2 * cp.cos(theta1 + theta2), l2 * cp.sin(theta1 + theta2)])
        return joint, end_effector

    grad_ns = 0
    theta = cp.vector([cp.value(0.0), cp.value(0.0)])
    for _ in range(steps):
        joint, effector = forward_kinematics(theta[0], theta[1])
        error = ((target - effector) ** 2).sum()
        t0 = time.perf_counter_ns()
        g = cp.grad(error, theta)
        grad_ns += time.perf_counter_ns() - t0
        theta -= alpha * g
    return error, theta, joint, grad_ns / 1e9


def measure(quick: bool) -> dict[str, Any]:
    import copapy as cp

    repeats = 3 if quick else 9
    grad_s, trace_s, compile_s = [], [], []
    angles: list[float] = []
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        error, theta, joint, g = build(cp, STEPS)
        t1 = time.perf_counter_ns()
        tg = cp.Target()
        tg.compile(error, theta, joint)
        t2 = time.perf_counter_ns()
        tg.run()
        angles = [float(a) for a in tg.read_value(theta)]
        grad_s.append(g)
        trace_s.append((t1 - t0) / 1e9)
        compile_s.append((t2 - t1) / 1e9)
    total = [t + c for t, c in zip(trace_s, compile_s, strict=True)]
    return {
        "python": platform.python_version(),
        "grad_ms": statistics.median(grad_s) * 1e3,
        "trace_ms": statistics.median(trace_s) * 1e3,
        "compile_ms": statistics.median(compile_s) * 1e3,
        "total_ms": statistics.median(total) * 1e3,
        "angles": angles,
    }


def table(ref: dict[str, Any] | None, ours: dict[str, Any]) -> str:
    rows = [
        f"| inverse kinematics, {STEPS} steps | Copapy 0.0.7 measured here | ours | ours vs Copapy |",
        "| --- | ---: | ---: | ---: |",
    ]
    specs = [
        ("the `cp.grad` calls alone", "grad_ms"),
        ("trace the program (`cp.grad` included)", "trace_ms"),
        ("`Target.compile`", "compile_ms"),
        ("trace + compile", "total_ms"),
    ]
    for label, key in specs:
        o = float(ours[key])
        r = None if ref is None else float(ref[key])
        ratio = "" if r is None else f"{r / o:,.0f}× faster" if r >= o else f"{o / r:,.1f}× slower"
        rows.append(f"| {label} | {'—' if r is None else f'{r:,.2f} ms'} | {o:,.2f} ms | {ratio} |")
    return "\n".join(rows)


def main() -> None:
    results = measure_both(__doc__.splitlines()[0], __file__, measure)
    if results is None:
        return
    ours, ref = results
    print(f"Python {platform.python_version()}; {os.cpu_count()} logical CPUs; median of repeats")
    print(f"joint angles: ours {[round(a, 5) for a in ours['angles']]}"
          + ("" if ref is None else f", Copapy 0.0.7 {[round(a, 5) for a in ref['angles']]}"))
    print()
    print(table(ref, ours))


if __name__ == "__main__":
    main()
