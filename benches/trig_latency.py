"""sin, cos and tan per element, per call, and the latency of a dependent chain of fused sincos.

Usage (from the repository root; run it under another checkout's venv for a before/after):

    .venv/bin/python benches/trig_latency.py

Arrays: one ``cp.array`` step over 4,096 float32 elements minus the same over 8. Scalars: 256
independent calls in one program minus 8 (throughput). Chain: ``v = x + sin(v)·cos(v)·10^-3``
96 times (each step one fused sincos that waits for the previous one, as in the IK example's
gradient steps) minus 8 times: the latency of one sincos plus a multiply, a multiply and an
add. Each figure is the fastest of several hundred runs (the minimum is what a quiet machine
gives; a loaded one adds preemptions to the mean). Inputs uniform in [-4, 4].
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import copapy as cp
import numpy as np

RUNS = 400


def fastest(tg: Any) -> float:
    best = float("inf")
    for _ in range(RUNS):
        t0 = time.perf_counter()
        tg.run()
        best = min(best, time.perf_counter() - t0)
    return best


def compiled(outputs: Any) -> Any:
    tg = cp.Target()
    tg.compile(outputs)
    tg.run()
    return tg


def inputs(n: int) -> Any:
    return np.random.default_rng(1).uniform(-4.0, 4.0, n).astype(np.float32)


def array_ns(f: Callable[[Any], Any]) -> float:
    big, small = (fastest(compiled(f(cp.array(inputs(n))))) for n in (4096, 8))
    return (big - small) / (4096 - 8) * 1e9


def scalar_ns(f: Callable[[Any], Any]) -> float:
    big, small = (fastest(compiled([f(cp.value(float(v))) for v in inputs(n)])) for n in (256, 8))
    return (big - small) / (256 - 8) * 1e9


def chain_ns() -> float:
    def program(n: int) -> Any:
        x = cp.value(0.3)
        v = x
        for _ in range(n):
            v = x + cp.sin(v) * cp.cos(v) * 1e-3
        return compiled(v)

    big, small = (fastest(program(n)) for n in (96, 8))
    return (big - small) / (96 - 8) * 1e9


def main() -> None:
    print("| function | ns/element (4,096) | ns/call (scalar) |")
    print("| --- | ---: | ---: |")
    for name, f in (("sin", cp.sin), ("cos", cp.cos), ("tan", cp.tan)):
        print(f"| `{name}` | {array_ns(f):.2f} | {scalar_ns(f):.2f} |", flush=True)
    print(f"\ndependent sincos chain: {chain_ns():.1f} ns per step")


if __name__ == "__main__":
    main()
