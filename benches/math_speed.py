"""copapy's math functions against glibc's float functions, measured in the same run.

Usage (from the repository root):

    .venv/bin/python benches/math_speed.py [--quick]

Per element: one ``cp.array`` step ``f(x)`` over 4,096 float32 elements run natively by
``Target.run`` (the time of the same program over 8 elements is subtracted, which removes
the Python call), against a C loop calling glibc's ``sinf``, ``expf``, ... over the same
4,096 values (gcc -O2 -fno-builtin, so every element is a call as in the array kernel).
Per call: 256 independent scalar operations ``f(value)`` in one program (the time of 8 of
them subtracted), against the same C loop (a glibc call is the same call either way).
Inputs are uniform in the range each row names. Ratios are copapy / glibc: below 1 is
faster. The fastest single run of many (a run no other process preempted; an average
would count the machine's load), glibc's loop likewise; timings vary with the machine,
the ratios much less.
"""

from __future__ import annotations

import argparse
import ctypes
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

N = 4096
SCALARS = 256

# name: (copapy function of one or two values, C expression of x (and y), x range, y range)
FUNCS: dict[str, tuple[str, str, tuple[float, float], tuple[float, float] | None]] = {
    "sin": ("cp.sin(x)", "sinf(x)", (-4.0, 4.0), None),
    "cos": ("cp.cos(x)", "cosf(x)", (-4.0, 4.0), None),
    "tan": ("cp.tan(x)", "tanf(x)", (-1.5, 1.5), None),
    "exp": ("cp.exp(x)", "expf(x)", (-10.0, 10.0), None),
    "log": ("cp.log(x)", "logf(x)", (0.01, 100.0), None),
    "tanh": ("cp.tanh(x)", "tanhf(x)", (-4.0, 4.0), None),
    "sigmoid": ("cp.sigmoid(x)", "1.0f / (1.0f + expf(-x))", (-8.0, 8.0), None),
    "asin": ("cp.asin(x)", "asinf(x)", (-1.0, 1.0), None),
    "acos": ("cp.acos(x)", "acosf(x)", (-1.0, 1.0), None),
    "atan": ("cp.atan(x)", "atanf(x)", (-4.0, 4.0), None),
    "atan2": ("cp.atan2(x, y)", "atan2f(x, y)", (-4.0, 4.0), (-4.0, 4.0)),
    "pow": ("x ** y", "powf(x, y)", (0.1, 4.0), (-4.0, 4.0)),
}

C_HARNESS = r"""
#include <math.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);
                          return t.tv_sec + t.tv_nsec * 1e-9; }
%s
"""
C_FUNC = r"""
double bench_%(name)s(const float *xs, const float *ys, float *out, int n, int runs) {
    double best = 1e30;
    for (int r = 0; r < runs; r++) {
        double t0 = now();
        for (int k = 0; k < n; k++) { float x = xs[k], y = ys[k]; (void)y; out[k] = %(expr)s; }
        double t = now() - t0;
        if (t < best) best = t;
    }
    return best / n;
}
"""


def inputs(name: str, n: int, seed: int = 1) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    rng = np.random.default_rng(seed)
    _, _, xr, yr = FUNCS[name]
    x = rng.uniform(*xr, n).astype(np.float32)
    y = rng.uniform(*(yr or (0.0, 1.0)), n).astype(np.float32)
    return x, y


def glibc_functions() -> Any:
    tmp = Path(tempfile.mkdtemp())
    src = tmp / "glibc_bench.c"
    src.write_text(C_HARNESS % "".join(C_FUNC % {"name": k, "expr": v[1]} for k, v in FUNCS.items()))
    lib = tmp / "glibc_bench.so"
    subprocess.run(["gcc", "-O2", "-fno-builtin", "-shared", "-fPIC", str(src), "-o", str(lib), "-lm"],
                   check=True)
    so = ctypes.CDLL(str(lib))
    ptr = ctypes.POINTER(ctypes.c_float)
    for k in FUNCS:
        f = getattr(so, f"bench_{k}")
        f.restype = ctypes.c_double
        f.argtypes = [ptr, ptr, ptr, ctypes.c_int, ctypes.c_int]
    return so


def glibc_ns(so: Any, name: str, runs: int) -> float:
    x, y = inputs(name, N)
    out = np.empty(N, dtype=np.float32)
    ptr = ctypes.POINTER(ctypes.c_float)
    f = getattr(so, f"bench_{name}")
    return float(f(x.ctypes.data_as(ptr), y.ctypes.data_as(ptr), out.ctypes.data_as(ptr), N, runs)) * 1e9


def program(name: str, n: int, scalar: bool) -> Any:
    import copapy as cp  # noqa: F401  (the expressions name cp)

    xs, ys = inputs(name, n)
    if scalar:
        vals = [eval(FUNCS[name][0], {"cp": cp, "x": cp.value(float(a)), "y": cp.value(float(b))})
                for a, b in zip(xs, ys, strict=True)]
        out = vals
    else:
        out = eval(FUNCS[name][0], {"cp": cp, "x": cp.array(xs), "y": cp.array(ys)})
    tg = cp.Target()
    tg.compile(out)
    tg.run()
    return tg


def best_run(tg: Any, runs: int, repeats: int) -> float:
    """The fastest single run, as the C side takes its fastest loop: on a shared machine the
    mean of many runs picks up every time slice another process takes."""
    run = tg.run
    clock = time.perf_counter
    best = float("inf")
    for _ in range(repeats * runs):
        t0 = clock()
        run()
        best = min(best, clock() - t0)
    return best


def copapy_ns(name: str, scalar: bool, runs: int, repeats: int) -> float:
    big, small = (SCALARS, 8) if scalar else (N, 8)
    tb, ts = program(name, big, scalar), program(name, small, scalar)
    t_big = best_run(tb, runs, repeats)
    t_small = best_run(ts, runs, repeats)
    return max(t_big - t_small, 0.0) / (big - small) * 1e9


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer runs (a smoke test)")
    ap.add_argument("--only", help="comma-separated function names")
    args = ap.parse_args()
    runs, repeats, cruns = (20, 2, 20) if args.quick else (300, 5, 300)
    names = args.only.split(",") if args.only else list(FUNCS)
    so = glibc_functions()
    print("| function | inputs | copapy ns/element (4,096) | glibc ns | ratio | "
          "copapy ns/call (scalar) | ratio |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name in names:
        g = glibc_ns(so, name, cruns)
        arr = copapy_ns(name, False, runs, repeats)
        sca = copapy_ns(name, True, runs, repeats)
        g = min(g, glibc_ns(so, name, cruns))
        lo, hi = FUNCS[name][2]
        rng = f"[{lo:g}, {hi:g}]" + (f" × [{FUNCS[name][3][0]:g}, {FUNCS[name][3][1]:g}]"
                                     if FUNCS[name][3] else "")
        print(f"| `{name}` | {rng} | {arr:.1f} | {g:.1f} | {arr / g:.2f} | {sca:.1f} | {sca / g:.2f} |",
              flush=True)


if __name__ == "__main__":
    main()
