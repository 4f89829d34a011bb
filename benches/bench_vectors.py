"""The Copapy README benchmark: vectors of traced values, side by side with Copapy 0.0.7 and NumPy.

Usage (from the repository root):

    benches/setup_reference.sh && .venv/bin/python benches/bench_vectors.py

For each vector size n in 10, 50, 100, 200, 400, 600, with v1 and v2 vectors of n
``cp.value``s, the program ``sum((v1 + i) @ v2 for i in range(10))`` is traced, compiled and
run 30000 times. The same code runs in this interpreter (our copapy) and, as a subprocess
with ``--measure``, under ``.venv-copapy-ref/bin/python`` (Copapy 0.0.7), which prints JSON.
NumPy runs ``np.sum((v1 + i) @ v2)`` with ``i = np.arange(10)[:, None]`` 30000 times. The C
reference is the same float32 computation written in C and compiled by ``zig cc -O2
-ffp-contract=off`` (what an optimising compiler makes of it), looping 30000 times in C; it
shows how far copy-and-patch code is from compiled code, without any Python in the loop.
Trace and compile times are the best of a few repeats; run time is one loop of 30000 runs.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

from _reference import REF_PYTHON, run_reference

SIZES = (10, 50, 100, 200, 400, 600)
RUNS = 30_000


def measure(sizes: tuple[int, ...], runs: int, repeats: int) -> dict[str, Any]:
    import copapy as cp

    res: dict[str, Any] = {}
    for n in sizes:
        trace_s, compile_s = [], []
        for _ in range(repeats):
            v1 = cp.vector(cp.value(float(k) / n) for k in range(n))
            v2 = cp.vector(cp.value(1.0 - float(k) / n) for k in range(n))
            t0 = time.perf_counter()
            r = sum((v1 + i) @ v2 for i in range(10))
            t1 = time.perf_counter()
            tg = cp.Target()
            t2 = time.perf_counter()
            tg.compile(r)
            t3 = time.perf_counter()
            trace_s.append(t1 - t0)
            compile_s.append(t3 - t2)
        run = tg.run
        run()
        t4 = time.perf_counter()
        for _ in range(runs):
            run()
        t5 = time.perf_counter()
        result = tg.read_value(r)
        res[str(n)] = {"trace_s": min(trace_s), "compile_s": min(compile_s), "run_s": t5 - t4,
                       "result": float(result)}
    return res


def measure_numpy(sizes: tuple[int, ...], runs: int) -> dict[str, Any]:
    import numpy as np

    res: dict[str, Any] = {}
    for n in sizes:
        v1 = (np.arange(n) / n).astype(np.float32)
        v2 = (1.0 - np.arange(n) / n).astype(np.float32)
        i = np.arange(10, dtype=np.float32)[:, None]
        t0 = time.perf_counter()
        for _ in range(runs):
            r = np.sum((v1 + i) @ v2)
        t1 = time.perf_counter()
        res[str(n)] = {"run_s": t1 - t0, "result": float(r)}
    return res


C_REFERENCE = r"""
#include <stdint.h>
/* sum over i of (v1 + i) . v2, float32, once per run; the barrier makes every run reload
   its inputs, as a compiled program reads its data memory each time. */
float bench(const float *v1, const float *v2, int n, int runs) {
    float total = 0.0f;
    for (int r = 0; r < runs; r++) {
        __asm__ volatile("" ::: "memory");
        float s = 0.0f;
        for (int i = 0; i < 10; i++) {
            float d = 0.0f;
            for (int k = 0; k < n; k++) d += (v1[k] + (float)i) * v2[k];
            s += d;
        }
        total = s;
    }
    return total;
}

/* The same with copapy's summation order: products first, term k into partial k % 8
   (from -0.0, the identity), then partials l + (l + 4), l + (l + 2), and the last two.
   The result has the same bits as copapy's. */
static float pairwise(float *t, int m) {
    float acc[8] = {-0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f, -0.0f};
    for (int k = 0; k < m; k++) acc[k % 8] += t[k];
    for (int l = 0; l < 4; l++) acc[l] += acc[l + 4];
    for (int l = 0; l < 2; l++) acc[l] += acc[l + 2];
    return acc[0] + acc[1];
}

float bench_pairwise(const float *v1, const float *v2, int n, int runs, float *scratch) {
    float total = 0.0f;
    for (int r = 0; r < runs; r++) {
        __asm__ volatile("" ::: "memory");
        float s = 0.0f;
        for (int i = 0; i < 10; i++) {
            for (int k = 0; k < n; k++) scratch[k] = (v1[k] + (float)i) * v2[k];
            s += pairwise(scratch, n);
        }
        total = s;
    }
    return total;
}
"""


def measure_c(sizes: tuple[int, ...], runs: int) -> dict[str, Any] | None:
    """Run time of the C reference, or None when zig cc is not available."""
    import ctypes
    import subprocess
    import tempfile

    import numpy as np

    with tempfile.TemporaryDirectory() as tmp:
        src, lib = Path(tmp) / "ref.c", Path(tmp) / "ref.so"
        src.write_text(C_REFERENCE)
        cmd = [sys.executable, "-m", "ziglang", "cc", "-O2", "-ffp-contract=off", "-shared", "-fPIC",
               str(src), "-o", str(lib)]
        if subprocess.run(cmd, capture_output=True, check=False).returncode != 0:
            print("note: zig cc is not available; no C reference", file=sys.stderr)
            return None
        so = ctypes.CDLL(str(lib))
        ptr = ctypes.POINTER(ctypes.c_float)
        so.bench.restype = so.bench_pairwise.restype = ctypes.c_float
        so.bench.argtypes = [ptr, ptr, ctypes.c_int, ctypes.c_int]
        so.bench_pairwise.argtypes = [ptr, ptr, ctypes.c_int, ctypes.c_int, ptr]
        res: dict[str, Any] = {}
        for n in sizes:
            v1 = (np.arange(n) / n).astype(np.float32)
            v2 = (1.0 - np.arange(n) / n).astype(np.float32)
            scratch = np.zeros(n, dtype=np.float32)
            args = (v1.ctypes.data_as(ptr), v2.ctypes.data_as(ptr), n, runs)
            t0 = time.perf_counter()
            r = so.bench(*args)
            t1 = time.perf_counter()
            rp = so.bench_pairwise(*args, scratch.ctypes.data_as(ptr))
            t2 = time.perf_counter()
            res[str(n)] = {"run_s": t1 - t0, "result": float(r), "pairwise_run_s": t2 - t1,
                           "pairwise_result": float(rp)}
        return res


def ms(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{x * 1e3:,.1f} ms" if x < 10 else f"{x:,.1f} s"


def table(ours: dict[str, Any], ref: dict[str, Any] | None, npy: dict[str, Any],
          c: dict[str, Any] | None, runs: int) -> str:
    rows = [
        "| n | trace ours | trace Copapy | compile ours | compile Copapy | (trace+compile) Copapy / ours"
        f" | run ×{runs:,} ours | run Copapy | run NumPy | run C -O2, loop | run C -O2, our order |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for n, o in ours.items():
        r = ref.get(n) if ref else None
        tc_o = o["trace_s"] + o["compile_s"]
        ratio = f"{(r['trace_s'] + r['compile_s']) / tc_o:,.0f}×" if r else "—"
        rows.append(
            f"| {n} | {ms(o['trace_s'])} | {ms(r['trace_s'] if r else None)} | {ms(o['compile_s'])}"
            f" | {ms(r['compile_s'] if r else None)} | {ratio} | {ms(o['run_s'])}"
            f" | {ms(r['run_s'] if r else None)} | {ms(npy[n]['run_s'])}"
            f" | {ms(c[n]['run_s'] if c else None)} | {ms(c[n]['pairwise_run_s'] if c else None)} |"
        )
    return "\n".join(rows)


def bars(ours: dict[str, Any], ref: dict[str, Any] | None) -> list[str]:
    if not ref:
        return ["bars: pending (no reference measurement)"]
    out = []
    big = str(max(int(n) for n in ours))
    o, r = ours[big], ref[big]
    ok = (o["trace_s"] + o["compile_s"]) * 20 <= r["trace_s"] + r["compile_s"]
    out.append(f"bar: trace + compile at n = {big} is at most 1/20 of Copapy's: {'yes' if ok else 'NO'}")
    slow = [n for n in ours if n in ref and ours[n]["run_s"] > ref[n]["run_s"]]
    verdict = "yes" if not slow else "NO at n = " + ", ".join(slow)
    out.append(f"bar: run time at every size at most Copapy's: {verdict}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--measure", action="store_true", help="measure this interpreter's copapy, print JSON")
    ap.add_argument("--runs", type=int, default=RUNS)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sizes", type=lambda s: tuple(int(x) for x in s.split(",")), default=SIZES)
    ap.add_argument("--quick", action="store_true", help="1000 runs, one repeat")
    ap.add_argument("--ref-python", type=Path, default=REF_PYTHON, help="interpreter with Copapy 0.0.7")
    ap.add_argument("--json", type=Path, help="also write all results to this file")
    args = ap.parse_args()
    if args.quick:
        args.runs, args.repeats = 1000, 1

    if args.measure:
        print(json.dumps(measure(args.sizes, args.runs, args.repeats)))
        return

    ours = measure(args.sizes, args.runs, args.repeats)
    ref = run_reference(__file__, args.ref_python, ["--runs", str(args.runs), "--repeats", str(args.repeats),
                                                   "--sizes", ",".join(map(str, args.sizes))])
    npy = measure_numpy(args.sizes, args.runs)
    c = measure_c(args.sizes, args.runs)
    for n in ours:
        if c and ours[n]["result"] != c[n]["pairwise_result"]:
            print(f"warning: n = {n}: ours gives {ours[n]['result']}, C in the same order "
                  f"{c[n]['pairwise_result']}", file=sys.stderr)
    for n in ours:
        if ref and n in ref:
            a, b = ours[n]["result"], ref[n]["result"]
            if abs(a - b) > 1e-4 * max(1.0, abs(b)):
                print(f"warning: n = {n}: ours gives {a}, Copapy {b}", file=sys.stderr)
    print(f"Python {platform.python_version()}; {platform.machine()}; "
          f"trace/compile: best of {args.repeats}; run: one loop of {args.runs:,} runs")
    print()
    print(table(ours, ref, npy, c, args.runs))
    print()
    print("\n".join(bars(ours, ref)))
    if args.json:
        args.json.write_text(json.dumps({"ours": ours, "copapy_0_0_7": ref, "numpy": npy, "c": c}, indent=2))


if __name__ == "__main__":
    main()
