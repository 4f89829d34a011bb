"""Constant folding at trace time must give the bits the compiled code gives.

A constant-valued node is made from an input ``v`` as ``(v ** 0) * c`` (``x ** 0`` is the
constant 1 of x's type, and ``1 * c`` folds to ``c``), so every operation between two such
nodes is folded by the tracer instead of being compiled. The results are checked against the
same NumPy reference as the compiled operators, bit for bit (NaN results by isnan only), and
sin/cos of constants against the math module: never copapy against itself.
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


def test_folded_unary_operations_match_numpy() -> None:
    """Constant operands fold on the host; the bits must be NumPy float32's, as compiled."""
    rng = np.random.default_rng(11)
    xs = FLOAT_EDGES + [float(x) for x in rng.uniform(-1e4, 1e4, 300).astype(np.float32)]
    xs += [float(x) for x in rng.uniform(-4.0, 4.0, 300).astype(np.float32)]
    f = np.float32
    with np.errstate(all="ignore"):
        refs: dict[str, Any] = {
            "sqrt": (cp.sqrt, lambda x: np.sqrt(f(x))),
            "abs": (abs, lambda x: np.abs(f(x))),
            "neg": (lambda v: -v, lambda x: -f(x)),
            "pow3": (lambda v: v**3, lambda x: (f(x) * f(x)) * f(x)),
            "pow-2": (lambda v: v**-2, lambda x: f(1) / (f(x) * f(x))),
        }
        cases = [(name, x, fn(const(x, "float")), ref(x)) for name, (fn, ref) in refs.items() for x in xs]
    problems = []
    for name, x, folded, _ in cases:
        assert isinstance(folded, cp.value) and "constant" in repr(folded), f"{name}({x!r}) was not folded"
    tg = cp.Target()
    tg.compile([c[2] for c in cases], cp.value(0.0) + 1.0)
    tg.run()
    for name, x, folded, want in cases:
        got = tg.read_value(folded)
        if not R.same_float(got, want):
            problems.append(f"{name}({x!r}): folded {got!r}, NumPy float32 {want!r}")
    assert not problems, R.describe_failures(problems)


def test_sin_and_cos_of_constants_are_within_one_ulp_of_the_exact_result() -> None:
    """sin/cos are not folded on the host (their bits exist only as stencil code); on
    constant operands they must still be our documented function (< 1 ulp), checked against
    the double-precision math module, not against copapy itself."""
    rng = np.random.default_rng(12)
    xs = [float(x) for x in rng.uniform(-1e4, 1e4, 300).astype(np.float32)]
    xs += [float(x) for x in rng.uniform(-4.0, 4.0, 300).astype(np.float32)] + [0.0, -0.0, 1e-30]
    pairs = [(name, x, fn(const(x, "float")), exact(x))
             for name, fn, exact in (("sin", cp.sin, math.sin), ("cos", cp.cos, math.cos)) for x in xs]
    tg = cp.Target()
    tg.compile([p[2] for p in pairs])
    tg.run()
    problems = []
    for name, x, v, exact in pairs:
        got = tg.read_value(v)
        if R.ulp_distance(got, float(np.float32(exact))) > 1:
            problems.append(f"{name}({x!r}) = {got!r}, exact {exact!r}")
    assert not problems, R.describe_failures(problems)


def test_folded_minimum_and_maximum_match_numpy_on_ties_and_nan() -> None:
    """np.minimum/np.maximum give the second operand on a tie (minimum(0.0, -0.0) is -0.0) and
    propagate a NaN; the folded results (constants) and the compiled ones (inputs) must agree
    with NumPy bit for bit."""
    f = np.float32
    xs = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan]
    cases = []
    for x in xs:
        for y in xs:
            for name, fn, ref in (("minimum", cp.minimum, np.minimum), ("maximum", cp.maximum, np.maximum)):
                want = ref(f(x), f(y))
                cases.append((f"{name}({x!r}, {y!r}) folded", fn(const(x, "float"), const(y, "float")), want))
                cases.append((f"{name}({x!r}, {y!r}) compiled", fn(cp.value(x), cp.value(y)), want))
    tg = cp.Target()
    tg.compile([c[1] for c in cases])
    tg.run()
    problems = [f"{what} = {g!r}, NumPy {w!r}" for (what, _, w), g in
                zip(cases, tg.read_value([c[1] for c in cases]), strict=True) if not R.same_float(g, w)]
    assert not problems, R.describe_failures(problems)
