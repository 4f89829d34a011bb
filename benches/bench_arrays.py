"""The README benchmark on ``cp.array`` inputs, against the same computation in C.

Usage (from the repository root):

    .venv/bin/python benches/bench_arrays.py [--quick] [--n 600] [--runs 100000]

``sum((v1 + i) @ v2 for i in range(10))`` with v1, v2 two ``cp.array`` s of n float32
numbers is traced, compiled and run ``runs`` times (``Target.run`` from Python, as a user
calls it); the time per run includes that call. In the same process the same float32
computation in C runs the same number of times in a C loop (no Python per run), compiled
by ``gcc -O3 -ffast-math`` (free to reorder and vectorise, SSE2 baseline) and by
``zig cc -O2 -ffp-contract=off``. Also reported: code bytes of the compiled program, the
trace and compile time at n = 100,000 (best of 5), and the cost of ``Target.run`` on an
empty-ish program (the Python call overhead contained in every figure of ours).

With numba installed (``pip install numba``; not a test dependency), ``@cp.jit`` is compared
with numba ``@njit`` in the same run: ``u @ v`` of two 600-element float32 arrays (numba: a
loop) and the sum of squares of a 100-element float64 array (a Python loop in both).
"""

from __future__ import annotations

import argparse
import ctypes
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

# the same C as bench_vectors.py measures, so both benches compare with one computation
from bench_vectors import C_REFERENCE

COMPILERS = {
    "gcc -O3 -ffast-math": ["gcc", "-O3", "-ffast-math"],
    "zig cc -O2": [sys.executable, "-m", "ziglang", "cc", "-O2", "-ffp-contract=off"],
}


def inputs(n: int) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    v1 = (np.arange(n) / n).astype(np.float32)
    v2 = (1.0 - np.arange(n) / n).astype(np.float32)
    return v1, v2


def per_run(fn: Any, runs: int, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(runs):
            fn()
        best = min(best, (time.perf_counter() - t0) / runs)
    return best


def readme_program(n: int) -> tuple[Any, Any]:
    """The compiled README computation (Target) and its result value."""
    import copapy as cp

    v1, v2 = inputs(n)
    a, b = cp.array(v1), cp.array(v2)
    total = sum((a + i) @ b for i in range(10))
    tg = cp.Target()
    tg.compile(total)
    tg.run()
    return tg, total


def c_functions(n: int) -> dict[str, Any]:
    """name -> function(runs) running the C reference `runs` times, for each compiler found."""
    out: dict[str, Any] = {}
    v1, v2 = inputs(n)
    ptr = ctypes.POINTER(ctypes.c_float)
    tmp = tempfile.mkdtemp()
    src = Path(tmp) / "ref.c"
    src.write_text(C_REFERENCE)
    for name, cc in COMPILERS.items():
        lib = Path(tmp) / f"ref{len(out)}.so"
        r = subprocess.run([*cc, "-shared", "-fPIC", str(src), "-o", str(lib)],
                           capture_output=True, check=False)
        if r.returncode != 0:
            print(f"note: {name} is not available: {r.stderr.decode()[:200]}", file=sys.stderr)
            continue
        so = ctypes.CDLL(str(lib))
        so.bench.restype = ctypes.c_float
        so.bench.argtypes = [ptr, ptr, ctypes.c_int, ctypes.c_int]
        args = (v1.ctypes.data_as(ptr), v2.ctypes.data_as(ptr), n)
        out[name] = (lambda runs, so=so, args=args: so.bench(*args, runs), (v1, v2))
    return out


def measure_run(n: int, runs: int, repeats: int) -> dict[str, Any]:
    """Ours and each C reference, interleaved repeat by repeat (the machine's load
    affects all alike); the best time per run of each."""
    import copapy as cp

    tg, total = readme_program(n)
    cs = c_functions(n)
    one = cp.value(1.0)
    empty = cp.Target()
    empty.compile(one + 1.0)
    best = {"ours": float("inf"), "empty": float("inf"), **{k: float("inf") for k in cs}}
    results: dict[str, float] = {}
    run = tg.run
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(runs):
            run()
        best["ours"] = min(best["ours"], (time.perf_counter() - t0) / runs)
        best["empty"] = min(best["empty"], per_run(empty.run, runs, 1))
        for name, (fn, _keep) in cs.items():
            t0 = time.perf_counter()
            results[name] = float(fn(runs))
            best[name] = min(best[name], (time.perf_counter() - t0) / runs)
    steps, code, data = tg.stats()
    return {"best": best, "c_results": results, "result": float(tg.read_value(total)),
            "steps": steps, "code_bytes": code, "data_bytes": data}


def measure_compile(n: int, repeats: int) -> dict[str, Any]:
    import copapy as cp

    v1, v2 = inputs(n)
    trace_s, compile_s, code = [], [], 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        a, b = cp.array(v1), cp.array(v2)
        total = sum((a + i) @ b for i in range(10))
        t1 = time.perf_counter()
        tg = cp.Target()
        t2 = time.perf_counter()
        tg.compile(total)
        t3 = time.perf_counter()
        trace_s.append(t1 - t0)
        compile_s.append(t3 - t2)
        code = tg.stats()[1]
    return {"trace_s": min(trace_s), "compile_s": min(compile_s), "code_bytes": code}


def jit_u_dot_v(u: Any, v: Any) -> Any:
    return u @ v


def loop_dot(u: Any, v: Any) -> Any:
    s = 0.0
    for k in range(u.shape[0]):
        s += u[k] * v[k]
    return s


def sum_of_squares(v: Any) -> Any:
    s = 0.0
    for x in v:
        s = s + x * x
    return s


def measure_jit(runs: int, repeats: int) -> dict[str, Any]:
    """ns per call of @cp.jit and (if installed) numba @njit, same arguments."""
    import copapy as cp

    u, v = inputs(600)
    w = np.arange(100, dtype=np.float64) * 0.25
    cases = {"u @ v, 600 float32": ((u, v), cp.jit(jit_u_dot_v), loop_dot),
             "sum of squares, 100 float64": ((w,), cp.jit(sum_of_squares), sum_of_squares)}
    try:
        import numba
    except ImportError:
        numba = None
        print("note: numba is not installed; no numba reference", file=sys.stderr)
    out: dict[str, Any] = {}
    for name, (args, ours, plain) in cases.items():
        ours(*args)
        row = {"cp.jit": float("inf"), "result": float(ours(*args))}
        nb = None
        if numba is not None:
            nb = numba.njit(plain)
            nb(*args)
            row["numba"] = float("inf")
            row["numba_result"] = float(nb(*args))
        # interleaved repeat by repeat, as in measure_run: the machine's load affects both
        for _ in range(repeats):
            row["cp.jit"] = min(row["cp.jit"], per_run(lambda f=ours, a=args: f(*a), runs, 1))
            if nb is not None:
                row["numba"] = min(row["numba"], per_run(lambda f=nb, a=args: f(*a), runs, 1))
        out[name] = row
    return out


def us(x: float) -> str:
    return f"{x * 1e6:,.3f} µs"


def table(m: dict[str, Any], big: dict[str, Any], jit: dict[str, Any], n: int, n_big: int) -> str:
    """The README's table (scripts/figures.py, figure ``bench-arrays``) of this run."""
    best = m["best"]
    rows = ["| figure | measured | bar |", "| --- | ---: | --- |",
            f"| README benchmark on `cp.array`, n = {n}, per run (Python's `tg.run()` call included) "
            f"| {us(best['ours'])} | |"]
    for name in m["c_results"]:
        ratio = best["ours"] / best[name]
        bar = f"≤ 1.3×: {'met' if ratio <= 1.3 else 'not met'}" if name.startswith("gcc") else ""
        rows.append(f"| the same in C, `{name}`, looping in C | {us(best[name])} (ours {ratio:.2f}×) "
                    f"| {bar} |")
    compile_ms = big["compile_s"] * 1e3
    rows.append(f"| trace + compile at n = {n_big:,} | {big['trace_s'] * 1e3:.2f} + {compile_ms:.2f} ms "
                f"| compile ≤ 1 ms: {'met' if compile_ms <= 1 else 'not met'} |")
    labels = {"u @ v, 600 float32": "`@cp.jit` `u @ v`, two 600-element float32 NumPy arrays",
              "sum of squares, 100 float64":
                  "`@cp.jit` sum of squares (Python loop), 100-element float64 array"}
    for name, r in jit.items():
        ours = f"{r['cp.jit'] * 1e9:,.0f} ns"
        if "numba" in r:
            ratio = r["cp.jit"] / r["numba"]
            numba = f"numba `@njit`: {r['numba'] * 1e9:,.0f} ns; {ratio:.2f}×"
            met = "met" if ratio <= 1 else "not met"
            rows.append(f"| {labels[name]} | {ours} ({numba}) | ≤ numba: {met} |")
        else:
            rows.append(f"| {labels[name]} | {ours} (numba not installed) | ≤ numba |")
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=600)
    ap.add_argument("--runs", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--big", type=int, default=100_000, help="n for the compile-time figure")
    ap.add_argument("--quick", action="store_true", help="10,000 runs, 2 repeats")
    args = ap.parse_args()
    if args.quick:
        args.runs, args.repeats = 10_000, 2

    m = measure_run(args.n, args.runs, args.repeats)
    big = measure_compile(args.big, args.repeats)
    jit = measure_jit(args.runs, args.repeats)
    best = m["best"]
    print(f"README benchmark on cp.array, n = {args.n}, best of {args.repeats} interleaved loops "
          f"of {args.runs:,} runs")
    print(f"  ours (tg.run from Python)      {us(best['ours'])} per run, result {m['result']!r}")
    print(f"  tg.run of a one-step program   {us(best['empty'])} (call overhead included above)")
    for name in m["c_results"]:
        print(f"  C {name:<22}   {us(best[name])} per run, result {m['c_results'][name]!r}; "
              f"ours / C = {best['ours'] / best[name]:.2f}x")
    print(f"  code {m['code_bytes']:,} bytes, data {m['data_bytes']:,} bytes, {m['steps']} steps")
    print(f"n = {args.big:,}: trace {big['trace_s'] * 1e3:.3f} ms, compile {big['compile_s'] * 1e3:.3f} ms, "
          f"code {big['code_bytes']:,} bytes")
    for name, r in jit.items():
        line = f"@cp.jit {name}: {r['cp.jit'] * 1e9:,.0f} ns per call"
        if "numba" in r:
            line += (f"; numba @njit {r['numba'] * 1e9:,.0f} ns; cp.jit / numba = "
                     f"{r['cp.jit'] / r['numba']:.2f}x (results {r['result']!r}, {r['numba_result']!r})")
        print(line)
    print()
    print(table(m, big, jit, args.n, args.big))


if __name__ == "__main__":
    main()
