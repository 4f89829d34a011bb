"""Property-style tests: seeded random expression trees over a few input variables, traced with
copapy and evaluated by a tiny NumPy float32 / int32 interpreter written here.

Many expressions share one target (so values must survive in registers and memory slots across
unrelated computations), and every target is run with several input sets written with
``write_value``. Results are compared bit-exactly. An expression whose reference evaluation
meets inf or NaN on the way is not checked: documented rewrites such as x - x -> 0 assume
finite values.
"""

from __future__ import annotations

import random
from typing import Any

import copapy as cp
import numpy as np
import pytest
import refsem as R
from copapy import _optable as T
from test_optable import spelled

SEED = 20240607
FLOAT_VARS = ["f0", "f1", "f2", "f3"]
INT_VARS = ["i0", "i1", "i2"]
BOOL_VARS = ["b0"]
VARS = FLOAT_VARS + INT_VARS + BOOL_VARS
VAR_TYPE = {v: "float" for v in FLOAT_VARS} | {v: "int" for v in INT_VARS} | {v: "bool" for v in BOOL_VARS}
FLOAT_CONSTS = [0.5, 1.5, -2.0, 3.25, 0.1, 7.0, -0.75, 1e-3]
INT_CONSTS = [2, 3, -5, 7, 13, 1000, -1]
# every op of the table whose result NumPy gives bit-exactly (our own float32 math is only
# within a few ulp of it), plus x**2 and x**3, which trace into multiplications
UNARY = [n for n in T.UNARY if n not in T.APPROXIMATE] + ["pow2", "pow3"]
BINARY = [n for n in T.BINARY if n not in T.APPROXIMATE]
INT_ONLY = [n for n in BINARY if all(ty == "i" for ty, _ in T.SIGNATURES[n])]
COMPARISON = [n for n in BINARY if n in T.COMPARISON]
ARITHMETIC = [n for n in BINARY if n not in INT_ONLY and n not in COMPARISON]
UNARY_TYPE = {"sqrt": "float", "itof": "float", "ftoi": "int", "tobyte": "int"}
# refsem names ops by their Python operator (truediv, lshift); the table by stencil (div, shl)
_REFSEM_NAME = {sym: name for name, sym in R.SYMBOL.items()}


def refsem_name(op: str) -> str:
    return _REFSEM_NAME.get(T.PYTHON[op], op)

Tree = tuple[Any, ...]


def static_type(t: Tree) -> str:
    kind = t[0]
    if kind == "var":
        return VAR_TYPE[t[1]]
    if kind == "const":
        return "float" if isinstance(t[1], float) else "int"
    if kind == "un":
        ta = static_type(t[2])
        return UNARY_TYPE.get(t[1], "float" if ta == "float" else "int")
    return R.result_type(refsem_name(t[1]), static_type(t[2]), static_type(t[3]))


def gen(rng: random.Random, depth: int) -> Tree:
    if depth == 0 or rng.random() < 0.15:
        return ("var", rng.choice(VARS))
    if rng.random() < 0.2:
        return ("un", rng.choice(UNARY), gen(rng, depth - 1))
    a = gen(rng, depth - 1)
    if rng.random() < 0.3:
        b: Tree = ("const", rng.choice(FLOAT_CONSTS if rng.random() < 0.5 else INT_CONSTS))
    else:
        b = gen(rng, depth - 1)
    if rng.random() < 0.5:
        a, b = b, a
    types = (static_type(a), static_type(b))
    ops = ARITHMETIC * 3 + COMPARISON
    if "float" not in types:
        ops += INT_ONLY
    return ("bin", rng.choice(ops), a, b)


def trace(t: Tree, env: dict[str, Any]) -> Any:
    kind = t[0]
    if kind == "var":
        return env[t[1]]
    if kind == "const":
        return t[1]
    if kind == "un":
        x = trace(t[2], env)
        if t[1] in ("pow2", "pow3"):
            return x**2 if t[1] == "pow2" else x**3
        # the square root of |x|: a NaN would leave the expression unchecked
        return spelled(t[1])(abs(x) if t[1] == "sqrt" else x)
    return spelled(t[1])(trace(t[2], env), trace(t[3], env))


class NonFinite(Exception):
    pass


def evaluate(t: Tree, env: dict[str, Any]) -> tuple[Any, str]:
    """Reference interpreter; raises NonFinite when a float intermediate is inf or NaN."""
    kind = t[0]
    if kind == "var":
        ty = VAR_TYPE[t[1]]
        return (R.f32(env[t[1]]) if ty == "float" else env[t[1]]), ty
    if kind == "const":
        c = t[1]
        return (R.f32(c), "float") if isinstance(c, float) else (c, "int")
    if kind == "un":
        x, tx = evaluate(t[2], env)
        if t[1] == "neg":
            r = R.neg(x, tx)
        elif t[1] == "abs":
            r = R.absolute(x, tx)
        elif t[1] == "sqrt":
            r = (R.sqrt(R.absolute(x, tx)[0]), "float")
        elif t[1] in ("pow2", "pow3"):
            r = R.power(x, tx, 2 if t[1] == "pow2" else 3)
        else:
            arg = np.array([x], dtype=np.float32 if tx == "float" else np.int32)
            out = R.REFERENCE[t[1]](arg)[0]
            rt = UNARY_TYPE[t[1]]
            r = (np.float32(out), rt) if rt == "float" else (int(out), rt)
    else:
        x, tx = evaluate(t[2], env)
        y, ty = evaluate(t[3], env)
        r = R.binop(refsem_name(t[1]), x, tx, y, ty)
    if r[1] == "float" and not np.isfinite(r[0]):
        raise NonFinite
    return r


def random_inputs(rng: random.Random) -> dict[str, Any]:
    env: dict[str, Any] = {}
    for v in FLOAT_VARS:
        env[v] = float(np.float32(rng.choice([-1, 1]) * rng.uniform(0.1, 10.0)))
    for v in INT_VARS:
        env[v] = rng.choice([rng.randint(-50, 50), rng.randint(-(2**31), 2**31 - 1)])
    for v in BOOL_VARS:
        env[v] = rng.random() < 0.5
    return env


def variables(t: Tree) -> set[str]:
    if t[0] == "var":
        return {t[1]}
    return set().union(*(variables(c) for c in t[2:] if isinstance(c, tuple)))


def check(trees: list[Tree], n_input_sets: int, rng: random.Random) -> tuple[int, list[str]]:
    first = random_inputs(rng)
    inputs = {v: cp.value(first[v], VAR_TYPE[v]) for v in VARS}
    exprs = [trace(t, inputs) for t in trees]
    used = sorted(set().union(*(variables(t) for t in trees)))
    tg = cp.Target()
    # The inputs are compiled too: a rewrite such as x - x -> 0 may remove an input from the
    # expressions, and writing a value that is not in the program is an error.
    tg.compile(exprs, [inputs[v] for v in used])
    checked, problems = 0, []
    for k in range(n_input_sets):
        env = first if k == 0 else random_inputs(rng)
        if k:
            tg.write_value([inputs[v] for v in used], [env[v] for v in used])
        tg.run()
        got_all = tg.read_value(exprs)
        for t, e, got in zip(trees, exprs, got_all, strict=True):
            try:
                want, rt = evaluate(t, env)
            except NonFinite:
                continue
            checked += 1
            if getattr(e, "dtype", rt) != rt or not R.matches(got, want, rt):
                problems.append(f"{show(t)} with {env}: got {got!r}, want {want!r} ({rt})")
    return checked, problems


def show(t: Tree) -> str:
    if t[0] == "var":
        return str(t[1])
    if t[0] == "const":
        return repr(t[1])
    if t[0] == "un":
        return f"{t[1]}({show(t[2])})"
    how = T.PYTHON[t[1]]
    if how.startswith("cp."):
        return f"{how}({show(t[2])}, {show(t[3])})"
    return f"({show(t[2])} {how} {show(t[3])})"


@pytest.mark.parametrize("batch", range(4))
def test_random_expressions_many_per_target(batch: int) -> None:
    rng = random.Random(SEED + batch)
    trees = [gen(rng, rng.randint(1, 5)) for _ in range(100)]
    checked, problems = check(trees, 3, rng)
    assert not problems, R.describe_failures(problems)
    assert checked >= 0.8 * 3 * len(trees), f"only {checked} results were checkable"


def test_random_expressions_one_per_target() -> None:
    rng = random.Random(SEED - 1)
    problems: list[str] = []
    checked = 0
    for _ in range(60):
        tree = gen(rng, rng.randint(2, 6))
        c, p = check([tree], 2, rng)
        checked += c
        problems += p
    assert not problems, R.describe_failures(problems)
    assert checked >= 80


def test_interpreter_agrees_with_python_on_exact_cases() -> None:
    """Sanity check of the reference interpreter itself on small ints (exact in every type)."""
    env = {"f0": 3.0, "f1": -2.0, "f2": 0.5, "f3": 4.0, "i0": 7, "i1": -3, "i2": 2, "b0": True}
    tree: Tree = ("bin", "add", ("bin", "mul", ("var", "f0"), ("var", "i0")),
                  ("bin", "floordiv", ("var", "i0"), ("var", "i1")))
    assert evaluate(tree, env) == (np.float32(21.0 + (7 // -3)), "float")
    assert evaluate(("bin", "mod", ("var", "i0"), ("var", "i1")), env) == (7 % -3, "int")
    assert evaluate(("bin", "and", ("var", "b0"), ("var", "b0")), env) == (True, "bool")
