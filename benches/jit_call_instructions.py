"""Instructions per call of the four workloads' ``@cp.jit`` call, numba's and ``Target``'s.

Usage (from the repository root; needs valgrind, and numba from ``benches/requirements.txt``):

    .venv/bin/python benches/jit_call_instructions.py [--calls N] [--only pid,ik] [--modes jit,numba]

Runs each workload's call N and 2N times under ``valgrind --tool=callgrind`` and prints
(instructions of 2N calls - instructions of N calls) / N: the call's whole cost (Python's
loop and call, argument binding, the program, building the result), free of the start-up,
tracing and compiling both runs share. Counts, not times: they do not move with the
machine's load, so two builds compare in any order. ``OPENBLAS_NUM_THREADS=1`` and a
fixed hash seed keep the two runs otherwise identical.

Columns: the ``@cp.jit`` call; the program it runs (``max_instructions()`` of the workload
compiled as a ``Target``, the same code over scalar inputs) and the rest of the call (the
jit call less the program: Python's call, argument binding, the result); numba ``@njit``'s
call with the same arguments (the same loop around it) and the ratio of the two calls; the
``Target`` round trip (``write_value``, ``run``, ``read_value``).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MODES = ("jit", "numba", "rt")


def child(name: str, mode: str, calls: int) -> None:
    """The measured process: one workload's call, ``calls`` times."""
    sys.path.insert(0, str(HERE))
    import copapy as cp
    import numpy as np
    import workloads as W  # noqa: PLC0415

    args = W.example_args()[name]
    if mode == "jit":
        fn: Any = cp.jit(W.bind(name, W.copapy_names()))
    elif mode == "numba":
        import numba  # noqa: PLC0415

        fn = W.bind(name, W.numba_names(), numba.njit)
    else:
        import bench_workloads as B  # noqa: PLC0415

        tg, inputs, outputs = B.traced_target(name, args)
        packed = np.concatenate(args)

        def fn(*_: Any) -> Any:
            tg.write_value(inputs, packed)
            tg.run()
            return tg.read_value(outputs)

    fn(*args)
    for _ in range(calls):
        fn(*args)


def instructions(name: str, mode: str, calls: int) -> int:
    """Instructions of a whole child process making ``calls`` calls."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", PYTHONHASHSEED="0")
        out = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out", sys.executable,
             __file__, "--child", name, mode, str(calls)],
            env=env, capture_output=True, text=True, check=True)
    found = re.search(r"Collected : (\d+)", out.stderr)
    if found is None:
        raise SystemExit(f"callgrind printed no count:\n{out.stderr}")
    return int(found.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=3000, help="N (the second run makes 2N)")
    ap.add_argument("--only", default="pid,kalman,ik,mlp", help="workloads, comma-separated")
    ap.add_argument("--modes", default=",".join(MODES), help="calls measured, comma-separated "
                    "(jit, numba, rt)")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        name, mode, calls = args.child
        child(name, mode, int(calls))
        return
    n = args.calls
    modes = args.modes.split(",")
    print("| workload | `@cp.jit` call | program | rest of the call | numba call | jit / numba "
          "| `Target` round trip |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in args.only.split(","):
        per_call = {m: (instructions(name, m, 2 * n) - instructions(name, m, n)) / n
                    for m in modes}
        program = program_instructions(name)
        cells = [per_call.get("jit"), program, None, per_call.get("numba"), None,
                 per_call.get("rt")]
        if cells[0] is not None:
            cells[2] = cells[0] - program
            if cells[3]:
                cells[4] = cells[0] / cells[3]
        text = ["" if c is None else f"{c:.2f}×" if k == 4 else f"{c:,.0f}"
                for k, c in enumerate(cells)]
        print(f"| {name} | " + " | ".join(text) + " |")


def program_instructions(name: str) -> int:
    """Instructions one run of the workload's program executes (its ``Target`` form)."""
    sys.path.insert(0, str(HERE))
    import bench_workloads as B  # noqa: PLC0415
    import workloads as W  # noqa: PLC0415

    tg, _, _ = B.traced_target(name, W.example_args()[name])
    return int(tg.max_instructions())


if __name__ == "__main__":
    main()
