"""The IK workload's native step against hand-written C, in one process, robust to a loaded machine.

Usage (from the repository root):

    .venv/bin/python benches/ik_step.py [PROGRAM.cpy ...]

The IK step of ``benches/workloads.py`` (48 gradient steps with ``cp.grad``) compiled here
and run in this process (``Target.run``, less the time of an empty program), and the C
step of ``benches/workloads.c`` at gcc -O2 (``loop_ik`` of 4 steps less 0 steps, through
ctypes), each the fastest of thousands of single runs in several interleaved rounds: a
run of a few microseconds is rarely preempted, so the minimum is the quiet machine's time
even while other jobs load it (``bench_workloads.py`` times whole ``copapy-run``
processes, which a loaded machine stretches). Program files given on the command line
(``tg.save`` of the same workload by another build) are timed beside it, so two builds
compare in one run. Also printed: the step's instructions (``tg.max_instructions()``)
and its packed sincos stencils by form (``stencils/gen_packs.py``).
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_workloads as BW  # noqa: E402
import workloads as W  # noqa: E402

ROUNDS, RUNS = 5, 2000


def fastest_ns(run: Callable[[], Any]) -> float:
    best = float("inf")
    for _ in range(RUNS):
        t0 = time.perf_counter_ns()
        run()
        best = min(best, time.perf_counter_ns() - t0)
    return best


def packed_forms(tg: Any) -> Counter[str]:
    """The packed stencils of the compiled program (the names the bounds are summed over)."""
    import copapy._bounds as bounds

    seen: list[list[tuple[str, int]]] = []
    original = bounds.program_bounds

    def spy(arch: str, names: list[tuple[str, int]], programs: Any) -> Any:
        seen.append(names)
        return original(arch, names, programs)

    bounds.program_bounds = spy
    try:
        tg.max_instructions()
    finally:
        bounds.program_bounds = original
    return Counter(name for name, _ in seen[0] if name.startswith("st_pack4_"))


def main() -> None:
    import copapy as cp

    args = W.example_args()["ik"]
    tg, _, _ = BW.traced_target("ik", args)
    print(f"IK step: {tg.max_instructions():,} instructions, {tg.stats()[0]:,} steps, "
          f"{tg.stats()[1]:,} code bytes; packed: {dict(packed_forms(tg))}")
    programs = {"this build": tg} | {p: cp.load(p) for p in sys.argv[1:]}
    so = BW.c_library(Path(tempfile.mkdtemp()))
    ptrs = [a.ctypes.data_as(BW.F32P) for a in args]
    out = np.zeros(3, np.float32).ctypes.data_as(BW.F32P)
    x = cp.value(1.0)
    empty = cp.Target()
    empty.compile([x + 1.0])
    best = dict.fromkeys(programs, float("inf"))
    c_best = overhead = float("inf")
    for _ in range(ROUNDS):
        overhead = min(overhead, fastest_ns(empty.run))
        for name, program in programs.items():
            best[name] = min(best[name], fastest_ns(program.run))
        four = fastest_ns(lambda: so.loop_ik(*ptrs, out, 4))
        c_best = min(c_best, (four - fastest_ns(lambda: so.loop_ik(*ptrs, out, 0))) / 4)
    print(f"C -O2 step: {c_best:,.0f} ns")
    for name, ns in best.items():
        step = ns - overhead
        print(f"{name}: {step:,.0f} ns, {step / c_best:.2f}x C")


if __name__ == "__main__":
    main()
