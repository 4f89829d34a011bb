"""Speed of ``@cp.jit`` calls, side by side with Copapy 0.0.7 and plain Python.

Usage (from the repository root):

    benches/setup_reference.sh && .venv/bin/python benches/bench_jit.py

Figures (median of repeats, ns per call, after the first (compiling) call):

1. ``f(a, b) = a * b + a`` called with two floats;
2. ``g(v)`` = sum of squares of a 100-element vector argument, returning a scalar, called
   with a list of floats and with a NumPy float64 array;
3. the same functions as plain Python (the reference a jit call competes with).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _reference import measure_both  # noqa: E402
from bench_core import cpu_name, fmt_ns, per_call_ns  # noqa: E402

N = 100


def f(a: Any, b: Any) -> Any:
    return a * b + a


def g(v: Any) -> Any:
    s = 0.0
    for x in v:
        s = s + x * x
    return s


def measure(quick: bool) -> dict[str, Any]:
    import copapy as cp
    import numpy as np

    loops = 2_000 if quick else 20_000
    repeats = 3 if quick else 7
    res: dict[str, Any] = {}
    jf = cp.jit(f)
    jg = cp.jit(g)
    xs = [float(k) * 0.25 for k in range(N)]
    arr = np.array(xs)
    jf(2.0, 3.0)
    jg(xs)

    def call_f(n: int) -> None:
        for _ in range(n):
            jf(2.0, 3.0)

    def call_g_list(n: int) -> None:
        for _ in range(n):
            jg(xs)

    res["jit_scalar_ns"] = per_call_ns(call_f, loops, repeats)
    res["jit_vector_list_ns"] = per_call_ns(call_g_list, loops // 4, repeats)
    try:
        jg(arr)

        def call_g_array(n: int) -> None:
            for _ in range(n):
                jg(arr)

        res["jit_vector_array_ns"] = per_call_ns(call_g_array, loops // 4, repeats)
    except Exception as e:  # Copapy 0.0.7 cannot take NumPy arrays
        res["jit_vector_array_ns"] = None
        res["jit_vector_array_error"] = f"{type(e).__name__}: {e}"

    def py_f(n: int) -> None:
        for _ in range(n):
            f(2.0, 3.0)

    def py_g(n: int) -> None:
        for _ in range(n):
            g(xs)

    res["py_scalar_ns"] = per_call_ns(py_f, loops, repeats)
    res["py_vector_ns"] = per_call_ns(py_g, loops // 4, repeats)
    return res


def table(ref: dict[str, Any] | None, ours: dict[str, Any]) -> str:
    rows = [
        ("jitted `f(a, b) = a * b + a`, two floats", "jit_scalar_ns", "≤ 400 ns"),
        ("jitted sum of squares of a 100-element list", "jit_vector_list_ns", "≤ 2 µs"),
        ("jitted sum of squares of a 100-element NumPy array", "jit_vector_array_ns", "≤ 2 µs"),
        ("plain Python `f(a, b)`", "py_scalar_ns", ""),
        ("plain Python sum of squares, 100-element list", "py_vector_ns", ""),
    ]
    out = ["| call | Copapy 0.0.7 measured here | ours | bar for ours |", "| --- | ---: | ---: | --- |"]
    for label, key, bar in rows:
        r = None if ref is None else ref.get(key)
        out.append(f"| {label} | {fmt_ns(r)} | {fmt_ns(ours.get(key))} | {bar} |")
    return "\n".join(out)


def main() -> None:
    results = measure_both(__doc__.splitlines()[0], __file__, measure)
    if results is None:
        return
    ours, ref = results
    print(f"CPU: {cpu_name()}; median of repeats; ns per call after the first (compiling) call")
    print()
    print(table(ref, ours))


if __name__ == "__main__":
    main()
