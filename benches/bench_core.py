"""Core speed figures of copapy, side by side with the public Copapy 0.0.7 release.

Usage (from the repository root):

    benches/setup_reference.sh && .venv/bin/python benches/bench_core.py

The same measurement code runs twice in one invocation: in this interpreter (our copapy) and,
as a subprocess with ``--measure``, under ``.venv-copapy-ref/bin/python`` (Copapy 0.0.7),
which prints its results as JSON. Then a Markdown table with both columns, the ratio and the
bar for ours is printed.

Figures (median of several repeats, ``time.perf_counter_ns``, loops of many calls):

1. ``tg.run()`` of a one-operation program, ns per call;
2. ``write_value`` + ``run`` + ``read_value`` round trip, ns;
3. ``tg.compile`` of a random 30k-operation graph (adds, muls, sin, sqrt of abs over 100
   inputs, seeded; see make_program), operations per second;
4. tracing the same graph from Python (building it with operators), operations per second;

plus plain-Python references: the cost of calling a one-operation Python function, and the
rate of evaluating the same graph eagerly with Python floats.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from _reference import REF_PYTHON, run_reference

N_INPUTS = 100
N_OPS = 30_000
SEED = 12345


def make_program(n_ops: int, seed: int) -> list[tuple[str, int, int]]:
    """A random straight-line program: (op, operand index, operand index) over a growing list
    of nodes that starts with N_INPUTS inputs. Like a long numeric computation, each operation
    consumes the latest result; a binary one combines it with one of the 32 most recent results
    (90 %) or with an input (10 %). 'sqrt' is sqrt(abs(x)) and counts as two operations."""
    rng = random.Random(seed)
    prog: list[tuple[str, int, int]] = []
    n_nodes, ops = N_INPUTS, 0

    def pick() -> int:
        if rng.random() < 0.9:
            return n_nodes - 1 - rng.randrange(min(32, n_nodes))
        return rng.randrange(N_INPUTS)

    while ops < n_ops:
        r = rng.random()
        if r < 0.35:
            prog.append(("add", n_nodes - 1, pick()))
            ops += 1
        elif r < 0.7:
            prog.append(("mul", n_nodes - 1, pick()))
            ops += 1
        elif r < 0.85:
            prog.append(("sin", n_nodes - 1, -1))
            ops += 1
        else:
            prog.append(("sqrt", n_nodes - 1, -1))
            ops += 2
        n_nodes += 1
    return prog


def count_ops(prog: list[tuple[str, int, int]]) -> int:
    return sum(2 if op == "sqrt" else 1 for op, _, _ in prog)


def outputs(prog: list[tuple[str, int, int]]) -> list[int]:
    """The values to compile: every 1000th result and the last one (all others feed them)."""
    last = N_INPUTS + len(prog) - 1
    return list(range(N_INPUTS + 999, last, 1000)) + [last]


def trace(cp: Any, inputs: list[Any], prog: list[tuple[str, int, int]]) -> list[Any]:
    nodes = list(inputs)
    append = nodes.append
    sin, sqrt = cp.sin, cp.sqrt
    for op, i, j in prog:
        if op == "add":
            append(nodes[i] + nodes[j])
        elif op == "mul":
            append(nodes[i] * nodes[j])
        elif op == "sin":
            append(sin(nodes[i]))
        else:
            append(sqrt(abs(nodes[i])))
    return nodes


def eval_python(inputs: list[float], prog: list[tuple[str, int, int]]) -> list[float]:
    nodes = list(inputs)
    append = nodes.append
    sin, sqrt = math.sin, math.sqrt
    for op, i, j in prog:
        if op == "add":
            append(nodes[i] + nodes[j])
        elif op == "mul":
            x = nodes[i] * nodes[j]
            append(x if math.isfinite(x) else 1.0)  # keep Python floats from overflowing
        elif op == "sin":
            append(sin(nodes[i]))
        else:
            append(sqrt(abs(nodes[i])))
    return nodes


def per_call_ns(loop: Any, loops: int, repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        loop(loops)
        samples.append((time.perf_counter_ns() - t0) / loops)
    return statistics.median(samples)


def measure(quick: bool) -> dict[str, Any]:
    import copapy as cp

    loops = 2_000 if quick else 20_000
    repeats = 3 if quick else 7
    res: dict[str, Any] = {"python": platform.python_version(), "copapy": getattr(cp, "__version__", "?")}

    # 1. run() of a one-operation program.
    a = cp.value(1.0)
    b = a + 2.0
    tg = cp.Target()
    tg.compile(b)
    run = tg.run

    def run_loop(n: int) -> None:
        for _ in range(n):
            run()

    run_loop(100)
    res["run_ns"] = per_call_ns(run_loop, loops, repeats)

    # 2. write_value + run + read_value round trip.
    write, read = tg.write_value, tg.read_value

    def round_trip_loop(n: int) -> None:
        for _ in range(n):
            write(a, 1.5)
            run()
            read(b)

    round_trip_loop(100)
    tg.write_value(a, 3.0)
    tg.run()
    assert tg.read_value(b) == 5.0
    res["round_trip_ns"] = per_call_ns(round_trip_loop, loops, repeats)

    # Plain Python reference: calling a one-operation function.
    def f(x: float) -> float:
        return x + 2.0

    def py_call_loop(n: int) -> None:
        for _ in range(n):
            f(1.0)

    res["py_call_ns"] = per_call_ns(py_call_loop, loops, repeats)

    # 3 and 4. Trace, then compile, a random 30k-operation graph.
    n_ops = 3_000 if quick else N_OPS
    prog = make_program(n_ops, SEED)
    ops = count_ops(prog)
    rng = random.Random(SEED + 1)
    init = [rng.uniform(-2.0, 2.0) for _ in range(N_INPUTS)]
    outs = outputs(prog)
    trace_s, compile_s, py_s = [], [], []
    for _ in range(3):
        inputs = [cp.value(x) for x in init]
        t0 = time.perf_counter_ns()
        nodes = trace(cp, inputs, prog)
        t1 = time.perf_counter_ns()
        results = [nodes[k] for k in outs]
        tg2 = cp.Target()
        t2 = time.perf_counter_ns()
        tg2.compile(results)
        t3 = time.perf_counter_ns()
        trace_s.append((t1 - t0) / 1e9)
        compile_s.append((t3 - t2) / 1e9)
        tg2.run()
        del nodes, results, tg2
        t4 = time.perf_counter_ns()
        eval_python(init, prog)
        py_s.append((time.perf_counter_ns() - t4) / 1e9)
    res["graph_ops"] = ops
    res["graph_outputs"] = len(outs)
    res["trace_ops_per_s"] = ops / statistics.median(trace_s)
    res["compile_ops_per_s"] = ops / statistics.median(compile_s)
    res["py_eval_ops_per_s"] = ops / statistics.median(py_s)
    return res


def fmt_ns(x: float | None) -> str:
    return "—" if x is None else f"{x:,.0f} ns"


def fmt_rate(x: float | None) -> str:
    if x is None:
        return "—"
    return f"{x / 1e6:,.2f} M ops/s" if x >= 1e6 else f"{x / 1e3:,.1f} k ops/s"


def table(ref: dict[str, Any] | None, ours: dict[str, Any] | None) -> str:
    def get(d: dict[str, Any] | None, k: str) -> float | None:
        return None if d is None else float(d[k])

    rows = []
    n = int((ours or ref or {}).get("graph_ops", N_OPS))
    specs = [
        ("`tg.run()` on a one-operation program, per call", "run_ns", "time", "≤ 150 ns",
         lambda o, r: o <= 150),
        ("`write_value` + `run` + `read_value` round trip", "round_trip_ns", "time", "≤ 500 ns",
         lambda o, r: o <= 500),
        (f"compile a random {n // 1000}k-operation graph (add, mul, sin, sqrt)", "compile_ops_per_s",
         "rate", "≥ 50× Copapy", lambda o, r: r is not None and o >= 50 * r),
        ("trace the same graph from Python", "trace_ops_per_s", "rate", "≥ 5× Copapy",
         lambda o, r: r is not None and o >= 5 * r),
        ("reference: a one-operation Python function call", "py_call_ns", "time", "", None),
        ("reference: the same graph evaluated eagerly with Python floats", "py_eval_ops_per_s", "rate",
         "", None),
    ]
    rows.append("| figure | Copapy 0.0.7 measured here | ours | ours vs Copapy | bar for ours | met |")
    rows.append("| --- | ---: | ---: | ---: | --- | --- |")
    for label, key, kind, bar, ok in specs:
        r, o = get(ref, key), get(ours, key)
        f = fmt_ns if kind == "time" else fmt_rate
        if ok is not None and r is not None and o is not None and o > 0 and r > 0:
            speedup = r / o if kind == "time" else o / r
            ratio = f"{speedup:,.1f}× faster" if speedup >= 1 else f"{1 / speedup:,.1f}× slower"
        else:
            ratio = ""
        met = "" if ok is None else ("pending" if o is None else ("yes" if ok(o, r) else "**no**"))
        ours_cell = f(o) if o is not None else "pending"
        rows.append(f"| {label} | {f(r)} | {ours_cell} | {ratio} | {bar} | {met} |")
    return "\n".join(rows)


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--measure", action="store_true", help="measure this interpreter, print JSON")
    ap.add_argument("--quick", action="store_true", help="fewer loops and a 3k-operation graph")
    ap.add_argument("--ref-python", type=Path, default=REF_PYTHON, help="interpreter with Copapy 0.0.7")
    ap.add_argument("--json", type=Path, help="also write both result sets to this file")
    args = ap.parse_args()

    if args.measure:
        print(json.dumps(measure(args.quick)))
        return

    ours: dict[str, Any] | None
    try:
        ours = measure(args.quick)
    except ImportError as e:
        print(f"note: our copapy is not importable here ({e}); its column is pending", file=sys.stderr)
        ours = None
    ref = run_reference(__file__, args.ref_python, ["--quick"] if args.quick else [])
    print(f"CPU: {cpu_name()}; Python {platform.python_version()}; "
          f"{os.cpu_count()} logical CPUs; median of repeats")
    print()
    print(table(ref, ours))
    if args.json:
        args.json.write_text(json.dumps({"copapy_0_0_7": ref, "ours": ours}, indent=2))


if __name__ == "__main__":
    main()
