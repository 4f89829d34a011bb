"""The Copapy README benchmark: vectors of traced values, side by side with Copapy 0.0.7 and NumPy.

Usage (from the repository root):

    benches/setup_reference.sh && .venv/bin/python benches/bench_vectors.py

For each vector size n in 10, 50, 100, 200, 400, 600, with v1 and v2 vectors of n
``cp.value``s, the program ``sum((v1 + i) @ v2 for i in range(10))`` is traced, compiled and
run 30000 times. The same code runs in this interpreter (our copapy) and, as a subprocess
with ``--measure``, under ``.venv-copapy-ref/bin/python`` (Copapy 0.0.7), which prints JSON.
NumPy runs ``np.sum((v1 + i) @ v2)`` with ``i = np.arange(10)[:, None]`` 30000 times.
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


def ms(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{x * 1e3:,.1f} ms" if x < 10 else f"{x:,.1f} s"


def table(ours: dict[str, Any], ref: dict[str, Any] | None, npy: dict[str, Any], runs: int) -> str:
    rows = [
        "| n | trace ours | trace Copapy | compile ours | compile Copapy | (trace+compile) Copapy / ours"
        f" | run ×{runs:,} ours | run Copapy | run NumPy |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for n, o in ours.items():
        r = ref.get(n) if ref else None
        tc_o = o["trace_s"] + o["compile_s"]
        ratio = f"{(r['trace_s'] + r['compile_s']) / tc_o:,.0f}×" if r else "—"
        rows.append(
            f"| {n} | {ms(o['trace_s'])} | {ms(r['trace_s'] if r else None)} | {ms(o['compile_s'])}"
            f" | {ms(r['compile_s'] if r else None)} | {ratio} | {ms(o['run_s'])}"
            f" | {ms(r['run_s'] if r else None)} | {ms(npy[n]['run_s'])} |"
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
    for n in ours:
        if ref and n in ref:
            a, b = ours[n]["result"], ref[n]["result"]
            if abs(a - b) > 1e-4 * max(1.0, abs(b)):
                print(f"warning: n = {n}: ours gives {a}, Copapy {b}", file=sys.stderr)
    print(f"Python {platform.python_version()}; {platform.machine()}; "
          f"trace/compile: best of {args.repeats}; run: one loop of {args.runs:,} runs")
    print()
    print(table(ours, ref, npy, args.runs))
    print()
    print("\n".join(bars(ours, ref)))
    if args.json:
        args.json.write_text(json.dumps({"ours": ours, "copapy_0_0_7": ref, "numpy": npy}, indent=2))


if __name__ == "__main__":
    main()
