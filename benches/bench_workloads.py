"""The four control workloads of issue 23 against numba ``@njit`` and hand-written C, one run.

Usage (from the repository root; numba comes from ``benches/requirements.txt``, which
``benches/setup_reference.sh`` installs into .venv):

    .venv/bin/python benches/bench_workloads.py [--quick]

PID with anti-windup, a 4-state Kalman step over constant sparse matrices, the
inverse-kinematics example (48 steps, ``cp.grad``) and an MLP 16 -> 32 -> 32 -> 4 with
tanh, each written once in ``benches/workloads.py`` with float32 math and bound to copapy
and to numba; the C versions (``benches/workloads.c``, gcc -O2, through ctypes) follow the
same loops. Printed, as ratios (below 1 means ours is faster):

- ``@cp.jit`` per call / numba ``@njit`` per call (same NumPy float32 arguments);
- native step: ``copapy-run PROGRAM -n N`` (no Python; the time of N steps less the time of
  one, over N - 1) / the C step called N times in a C loop;
- ``Target`` round trip (``write_value`` of the inputs from one float32 array, ``run``,
  ``read_value`` of the outputs) / numba per call.

Also checked, not timed: every result agrees with numba's to 1e-5 relative (bits may differ
where the math libraries do: tanh, sin, cos).
"""

from __future__ import annotations

import argparse
import ctypes
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import workloads as W  # noqa: E402

HERE = Path(__file__).resolve().parent
F32P = ctypes.POINTER(ctypes.c_float)


def per_call_ns(call: Any, loops: int, repeats: int) -> float:
    """Median over ``repeats`` of the time per call of ``loops`` calls."""
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        for _ in range(loops):
            call()
        samples.append((time.perf_counter_ns() - t0) / loops)
    return statistics.median(samples)


def flat(result: Any) -> np.ndarray[Any, Any]:
    parts = result if isinstance(result, tuple | list) else [result]
    return np.concatenate([np.ravel(np.asarray(p, dtype=np.float32)) for p in parts])


def c_library(tmp: Path) -> ctypes.CDLL:
    lib = tmp / "workloads.so"
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", str(HERE / "workloads.c"), "-o", str(lib), "-lm"],
                   check=True)
    so = ctypes.CDLL(str(lib))
    w = W.MLP_WEIGHTS
    so.set_mlp_weights(*(w[k].ctypes.data_as(F32P) for k in ("W1", "B1", "W2", "B2", "W3", "B3")))
    for name in W.WORKLOADS:
        getattr(so, f"loop_{name}").restype = ctypes.c_float
    return so


def c_step_ns(so: ctypes.CDLL, name: str, args: tuple[Any, ...], out: np.ndarray[Any, Any],
              n: int, repeats: int) -> float:
    loop = getattr(so, f"loop_{name}")
    ptrs = [a.ctypes.data_as(F32P) for a in args] + [out.ctypes.data_as(F32P)]
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        loop(*ptrs, n)
        best = min(best, (time.perf_counter_ns() - t0) / n)
    return best


def traced_target(name: str, args: tuple[Any, ...]) -> tuple[Any, list[Any], list[Any]]:
    """The workload compiled as a Target over scalar inputs: (target, inputs, outputs)."""
    import copapy as cp

    fn = W.bind(name, W.copapy_names())
    inputs = [[cp.value(float(v)) for v in a] for a in args]
    outputs: list[Any] = []
    for part in (r if isinstance(r := fn(*inputs), tuple) else (r,)):
        outputs += list(part) if isinstance(part, list) else [part]
    tg = cp.Target()
    tg.compile(outputs)
    return tg, [v for a in inputs for v in a], outputs


def copapy_run() -> str:
    found = Path(sys.executable).parent / "copapy-run"
    return str(found) if found.exists() else (shutil.which("copapy-run") or "copapy-run")


def native_step_ns(tg: Any, tmp: Path, seconds: float, estimate_ns: float, repeats: int) -> float:
    """Time per step of copapy-run -n N, less the process start (the time of -n 1), with N
    steps taking about ``seconds`` at ``estimate_ns`` per step."""
    n = max(10_000, int(seconds * 1e9 / max(estimate_ns, 1.0)))
    path = tmp / "program.cpy"
    tg.save(path)
    runner = copapy_run()

    def wall(steps: int) -> float:
        t0 = time.perf_counter_ns()
        subprocess.run([runner, str(path), "-n", str(steps)], check=True, capture_output=True)
        return time.perf_counter_ns() - t0

    # the fastest of each, interleaved: on a shared machine one slow start of -n 1 made
    # the difference of single pairs negative
    best_n = best_1 = float("inf")
    for _ in range(repeats):
        best_n, best_1 = min(best_n, wall(n)), min(best_1, wall(1))
    return max(best_n - best_1, 0.0) / (n - 1)


def measure(quick: bool) -> dict[str, dict[str, float]]:
    import copapy as cp
    import numba

    loops, repeats = (2_000, 3) if quick else (20_000, 7)
    native_s = 0.1 if quick else 0.5
    tmp = Path(tempfile.mkdtemp())
    so = c_library(tmp)
    all_args = W.example_args()
    rows: dict[str, dict[str, float]] = {}
    for name in W.WORKLOADS:
        args = all_args[name]
        jitted = cp.jit(W.bind(name, W.copapy_names()))
        njitted = W.bind(name, W.numba_names(), numba.njit)
        ours, theirs = flat(jitted(*args)), flat(njitted(*args))
        if not np.allclose(ours, theirs, rtol=1e-5, atol=1e-6):
            raise SystemExit(f"{name}: copapy {ours} and numba {theirs} disagree")
        tg, inputs, outputs = traced_target(name, args)
        packed = np.concatenate(args)

        def round_trip(tg: Any = tg, inputs: Any = inputs, outputs: Any = outputs,
                       packed: Any = packed) -> Any:
            tg.write_value(inputs, packed)
            tg.run()
            return tg.read_value(outputs)

        if not np.allclose(np.array(round_trip(), np.float32), ours, rtol=1e-6, atol=1e-7):
            raise SystemExit(f"{name}: the Target round trip disagrees with the jit call")
        c_out = np.zeros(ours.size, np.float32)
        row = {"jit": per_call_ns(lambda: jitted(*args), loops, repeats),  # noqa: B023
               "numba": per_call_ns(lambda: njitted(*args), loops, repeats),  # noqa: B023
               "target": per_call_ns(round_trip, loops, repeats),
               "c": c_step_ns(so, name, args, c_out, loops * 10, repeats),
               "native": native_step_ns(tg, tmp, native_s, per_call_ns(tg.run, loops, 3), 5)}
        if not np.allclose(c_out, ours, rtol=1e-5, atol=1e-6):
            raise SystemExit(f"{name}: C {c_out} and copapy {ours} disagree")
        row["steps"] = float(tg.stats()[0])
        rows[name] = row
    return rows


LABELS = {"pid": "PID, anti-windup", "kalman": "Kalman, 4 states", "ik": "IK, 48 steps + cp.grad",
          "mlp": "MLP 16-32-32-4, tanh"}


def table(rows: dict[str, dict[str, float]]) -> str:
    out = ["| workload | `@cp.jit` call | numba call | jit / numba | native step | C -O2 step | "
           "native / C | `Target` round trip | round trip / numba |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, r in rows.items():
        out.append(f"| {LABELS[name]} | {r['jit']:,.0f} ns | {r['numba']:,.0f} ns | "
                   f"{r['jit'] / r['numba']:.2f}× | {r['native']:,.0f} ns | {r['c']:,.0f} ns | "
                   f"{r['native'] / r['c']:.2f}× | {r['target']:,.0f} ns | "
                   f"{r['target'] / r['numba']:.2f}× |")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer loops")
    args = ap.parse_args()
    print(table(measure(args.quick)))


if __name__ == "__main__":
    main()
