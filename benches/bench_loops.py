"""Loop figures for the README: code per step count, and what the loop machinery costs.

    .venv/bin/python benches/bench_loops.py

The inverse-kinematics descent of examples/inverse_kinematics_loop.py as a
``cp.fori_loop``. Per target: code bytes of the program for 48, 480 and 4,800 steps
(the body is compiled once), of the 48 steps unrolled (``unroll=True``, today's Python
loop); and instructions per run, counted in the emulator (unicorn), within the
program's static bounds: per step of the loop, per step unrolled, and their difference,
the loop machinery per iteration (back-edge, copying the carried angles back, loading
values the unrolled program kept in registers).
"""

from __future__ import annotations

import os
import sys

import copapy as cp
from copapy import _targets

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
sys.path.insert(0, os.path.join(ROOT, "tests", "targets"))
from inverse_kinematics_loop import descend  # noqa: E402
from test_determinism import counted_run  # noqa: E402  (unicorn's instruction count)

STEPS = (48, 480, 4800)


def compiled(arch: str, steps: int, unroll: int | bool = 1) -> cp.Target:
    tg = cp.Target(arch)
    tg.compile(descend(steps, unroll=unroll))
    return tg


def main() -> None:
    print("| target | code, 48 / 480 / 4,800 steps as a loop | 48 steps unrolled "
          "| instructions per step: loop | unrolled | loop machinery per iteration |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for arch in _targets.names():
        sizes = [compiled(arch, n).stats()[1] for n in STEPS]
        unrolled = compiled(arch, 48, unroll=True)
        one = compiled(arch, 1)
        runs = {}
        for name, tg in (("one", one), ("loop", compiled(arch, 48)), ("unrolled", unrolled)):
            runs[name] = counted_run(tg)
            # sin and cos have data-dependent paths (docs/determinism.md): within the bounds
            assert tg.min_instructions() <= runs[name] <= tg.max_instructions(), (arch, name)
        per_loop = (runs["loop"] - runs["one"]) / 47
        per_unrolled = (runs["unrolled"] - runs["one"]) / 47
        code = " / ".join(f"{s:,}" for s in sizes)
        print(f"| {arch} | {code} B | {unrolled.stats()[1]:,} B | {per_loop:.0f} "
              f"| {per_unrolled:.0f} | {per_loop - per_unrolled:+.0f} |")


if __name__ == "__main__":
    main()
