"""Constant folding at trace time must give the bits the compiled code gives.

A constant-valued node is made from an input ``v`` as ``(v ** 0) * c`` (``x ** 0`` is the
constant 1 of x's type, and ``1 * c`` folds to ``c``), so every operation between two such
nodes is folded by the tracer instead of being compiled. The results are checked against the
same NumPy reference as the compiled operators, and the folded math functions against the
compiled ones on inputs holding the same numbers, bit for bit.
"""

from __future__ import annotations

import math
from typing import Any

import copapy as cp
import numpy as np
import refsem as R
from test_operators import EDGES, FLOAT_EDGES

ONE = {"float": cp.value(1.5) ** 0, "int": cp.value(3) ** 0}


def const(x: Any, t: str) -> Any:
    c = ONE[t] * x
    assert isinstance(c, cp.value) and c.dtype == t
    return c


def test_folded_binary_operators_match_numpy() -> None:
    cases = []
    for op in R.BINARY_OPS:
        for ta in ("float", "int"):
            for tb in ("float", "int"):
                if op in R.BITWISE and "float" in (ta, tb):
                    continue
                for x in EDGES[ta]:
                    for y in EDGES[tb]:
                        cases.append((op, ta, x, tb, y, R.PY_OP[op](const(x, ta), const(y, tb))))
    anchor = cp.value(0.0) + 1.0  # a program with at least one real operation
    tg = cp.Target()
    tg.compile([c[-1] for c in cases], anchor)
    tg.run()
    problems = []
    for (op, ta, x, tb, y, e), got in zip(cases, tg.read_value([c[-1] for c in cases]), strict=True):
        want, rt = R.binop(op, x, ta, y, tb)
        if e.dtype != rt or not R.matches(got, want, rt):
            problems.append(f"folded {ta} {x!r} {R.SYMBOL[op]} {tb} {y!r} = {got!r}, want {want!r} ({rt})")
    assert not problems, R.describe_failures(problems)


def test_folded_math_equals_compiled_math() -> None:
    rng = np.random.default_rng(11)
    xs = FLOAT_EDGES + [float(x) for x in rng.uniform(-1e4, 1e4, 300).astype(np.float32)]
    xs += [float(x) for x in rng.uniform(-4.0, 4.0, 300).astype(np.float32)]
    ins = [cp.value(x) for x in xs]
    fns = {"sin": cp.sin, "cos": cp.cos, "sqrt": cp.sqrt, "abs": abs, "neg": lambda v: -v,
           "pow3": lambda v: v**3, "pow-2": lambda v: v**-2}
    pairs = [(name, x, fn(const(x, "float")), fn(v)) for name, fn in fns.items()
             for x, v in zip(xs, ins, strict=True)]
    tg = cp.Target()
    tg.compile([p[2] for p in pairs], [p[3] for p in pairs])
    tg.run()
    problems = []
    for name, x, folded, compiled in pairs:
        f, c = tg.read_value(folded), tg.read_value(compiled)
        if math.isnan(f) and math.isnan(c):
            continue
        if R.f32_bits(f) != R.f32_bits(c):
            problems.append(f"{name}({x!r}): folded {f!r}, compiled {c!r}")
    assert not problems, R.describe_failures(problems)
