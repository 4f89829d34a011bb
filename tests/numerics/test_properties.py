"""Property-based tests (hypothesis) of the public API against independent references.

- Random programs over edge values (±0, ±inf, NaN, subnormals, INT_MIN …) and constants that
  trigger the algebraic rewrites, against NumPy float32/int32 (refsem). The reference models
  the one inexact rewrite the README documents precisely (``x * 0`` with a constant zero is
  ``+0.0``); an expression where ``x - x`` meets a non-finite ``x`` (the other documented
  caveat) is not checked, and the tests require most expressions to be checked.
- Random nested argument structures for ``compile``/``read_value``/``write_value`` and jit.
- Random NumPy arrays (dtypes, byte orders, layouts) as jit arguments.

The test suite's profile ("suite") is derandomized (the same examples every run);
``HYPOTHESIS_PROFILE=fuzz`` runs many more fresh random examples (see scripts/fuzz.sh).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

import copapy as cp
import numpy as np
import refsem as R
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

settings.register_profile(
    "suite", max_examples=100, deadline=None, derandomize=True, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "fuzz", max_examples=3000, deadline=None, derandomize=False, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))

F = np.float32
FLOAT_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -7.0, math.inf, -math.inf, math.nan, 1e-45, -1e-45,
               1.1754942e-38, 3.4028235e38, -3.4028235e38, 16777217.0, 0.1]
INT_EDGES = [0, 1, -1, 2, 31, 32, -32, 7, R.INT_MIN, R.INT_MAX, 65536]

# edge values twice as likely as arbitrary ones: that is where rewrites and folding differ
floats = st.one_of(st.sampled_from(FLOAT_EDGES), st.sampled_from(FLOAT_EDGES), st.floats(width=32))
ints = st.one_of(st.sampled_from(INT_EDGES), st.sampled_from(INT_EDGES), st.integers(R.INT_MIN, R.INT_MAX))
bools = st.booleans()
TYPES = ("float", "int", "bool")
NUMBER = {"float": floats, "int": ints, "bool": bools}

# --- random programs ---------------------------------------------------------------------------

BIN_OPS = list(R.ARITH) + list(R.COMPARE) + list(R.BITWISE) + ["minimum", "maximum"]
UN_OPS = ["neg", "abs", "pow1", "pow2", "pow3", "sqrt"]
VARS = {"f0": "float", "f1": "float", "i0": "int", "i1": "int", "b0": "bool"}

Tree = tuple[Any, ...]


def leaf() -> st.SearchStrategy[Tree]:
    consts = st.one_of(
        st.sampled_from([0.0, -0.0, 1.0, 0, 1, -1]),  # the constants rewrites look for
        floats, st.integers(-1000, 1000), st.sampled_from([R.INT_MIN, R.INT_MAX]),
    )
    return st.one_of(
        st.sampled_from([("var", v) for v in VARS]),
        st.sampled_from([("var", v) for v in VARS]),
        consts.map(lambda c: ("const", c)),
    )


def extend(children: st.SearchStrategy[Tree]) -> st.SearchStrategy[Tree]:
    return st.one_of(
        st.tuples(st.just("un"), st.sampled_from(UN_OPS), children),
        st.tuples(st.just("bin"), st.sampled_from(BIN_OPS), children, children),
    )


trees = st.recursive(leaf(), extend, max_leaves=8)


class Unchecked(Exception):
    """The documented x - x -> 0 rewrite may apply to a non-finite x here."""


class Invalid(Exception):
    """Not a valid program (a bitwise operation on floats)."""


def const_type(c: Any) -> str:
    return "float" if isinstance(c, float) else "int"


def minmax(op: str, x: Any, tx: str, y: Any, ty: str) -> tuple[Any, str]:
    if "float" in (tx, ty):
        fn = np.minimum if op == "minimum" else np.maximum
        return fn(R.f32(x), R.f32(y)), "float"
    r = min(int(x), int(y)) if op == "minimum" else max(int(x), int(y))
    if tx == ty == "bool":
        return bool(r), "bool"
    return r, "int"


def is_plus_zero(x: Any, t: str) -> bool:
    """True when a constant operand has the bits 0 once promoted (+0.0, 0, False)."""
    return bool(x == 0) and not (t == "float" and math.copysign(1.0, float(x)) < 0)


def evaluate(t: Tree, env: dict[str, Any]) -> tuple[Any, str, bool]:
    """Reference interpreter: (result, dtype, is the subtree a constant)."""
    kind = t[0]
    if kind == "var":
        ty = VARS[t[1]]
        x = env[t[1]]
        return (R.f32(x) if ty == "float" else x), ty, False
    if kind == "const":
        c = t[1]
        return (R.f32(c), "float", True) if isinstance(c, float) else (c, "int", True)
    if kind == "un":
        x, tx, cx = evaluate(t[2], env)
        op = t[1]
        if op == "neg":
            r = R.neg(x, tx)
        elif op == "abs":
            r = R.absolute(x, tx)
        elif op == "sqrt":
            with np.errstate(all="ignore"):
                r = (R.sqrt(x), "float")
        elif op == "pow1":
            r = (R.f32(x), "float") if tx == "float" else (int(x), "int")
        else:
            r = R.power(x, tx, 2 if op == "pow2" else 3)
        return r[0], r[1], cx
    op = t[1]
    x, tx, cx = evaluate(t[2], env)
    y, ty, cy = evaluate(t[3], env)
    if op in R.BITWISE and "float" in (tx, ty):
        raise Invalid
    with np.errstate(all="ignore"):
        if op in ("minimum", "maximum"):
            r = minmax(op, x, tx, y, ty)
        else:
            r = R.binop(op, x, tx, y, ty)
    const = cx and cy
    if r[1] == "float" and not const:
        if op == "mul" and ((cx and is_plus_zero(x, tx)) or (cy and is_plus_zero(y, ty))):
            return F(0.0), "float", False  # documented: x * 0 -> +0.0 for every x
        if op == "sub" and not (np.isfinite(R.f32(x)) and np.isfinite(R.f32(y))):
            raise Unchecked
    return r[0], r[1], const


ONE = {"float": cp.value(1.5) ** 0, "int": cp.value(3) ** 0}  # constant values: x ** 0 is 1


def build(t: Tree, env: dict[str, Any]) -> Any:
    """The traced program. A constant leaf next to a traced operand is a Python number (the
    operator's constant path); elsewhere a constant value (``1 * c`` folds), so operations
    between constants are folded by copapy with int32/float32 semantics, not Python's."""
    kind = t[0]
    if kind == "var":
        return env[t[1]]
    if kind == "const":
        return ONE[const_type(t[1])] * t[1]
    if kind == "un":
        x = build(t[2], env)
        return {"neg": lambda: -x, "abs": lambda: abs(x), "sqrt": lambda: cp.sqrt(x),
                "pow1": lambda: x**1, "pow2": lambda: x**2, "pow3": lambda: x**3}[t[1]]()

    def operand(c: Tree, other: Tree) -> Any:
        return c[1] if c[0] == "const" and has_var(other) else build(c, env)

    a, b = operand(t[2], t[3]), operand(t[3], t[2])
    if t[1] == "minimum":
        return cp.minimum(a, b)
    if t[1] == "maximum":
        return cp.maximum(a, b)
    return R.PY_OP[t[1]](a, b)


def has_var(t: Tree) -> bool:
    return t[0] == "var" or any(isinstance(c, tuple) and has_var(c) for c in t[2:])


envs = st.fixed_dictionaries({v: NUMBER[ty] for v, ty in VARS.items()})


@given(st.lists(trees, min_size=1, max_size=6), envs, envs)
def test_random_programs_match_numpy(ts: list[Tree], env1: dict[str, Any], env2: dict[str, Any]) -> None:
    ts = [t for t in ts if has_var(t)]
    assume(ts)
    inputs = {v: cp.value(env1[v], ty) for v, ty in VARS.items()}
    exprs = []
    kept = []
    for t in ts:
        try:
            evaluate(t, env1)
        except Invalid:
            continue
        except Unchecked:
            pass
        e = build(t, inputs)
        if isinstance(e, cp.value):
            exprs.append(e)
            kept.append(t)
    assume(exprs)
    tg = cp.Target()
    tg.compile(exprs, list(inputs.values()))
    problems = []
    for env in (env1, env2):
        if env is env2:
            tg.write_value(list(inputs.values()), [env2[v] for v in VARS])
        tg.run()
        for t, e, got in zip(kept, exprs, tg.read_value(exprs), strict=True):
            try:
                want, rt, _ = evaluate(t, env)
            except Unchecked:
                continue
            if e.dtype != rt or not R.matches(got, want, rt):
                problems.append(f"{t} with {env}: got {got!r} ({e.dtype}), want {want!r} ({rt})")
    assert not problems, R.describe_failures(problems)


# --- nested structures -------------------------------------------------------------------------

@dataclass(frozen=True)
class Num:
    """A leaf of a random structure: a number and the copapy type it is declared with."""

    ty: str
    x: Any


typed_numbers = st.one_of(
    floats.map(lambda x: Num("float", x)),
    ints.map(lambda x: Num("int", x)),
    bools.map(lambda x: Num("bool", x)),
)
structures = st.recursive(
    typed_numbers,
    lambda kids: st.one_of(st.lists(kids, max_size=4), st.lists(kids, max_size=4).map(tuple)),
    max_leaves=12,
)


def mirror(s: Any, fn: Any) -> Any:
    if isinstance(s, list):
        return [mirror(x, fn) for x in s]
    if isinstance(s, tuple):
        return tuple(mirror(x, fn) for x in s)
    return fn(s)


def as_read(n: Num) -> Any:
    return float(F(n.x)) if n.ty == "float" else (bool(n.x) if n.ty == "bool" else int(n.x))


def same(got: Any, want: Any) -> bool:
    """read_value gives lists for lists and tuples; numbers with their type and bits."""
    if isinstance(want, list | tuple):
        return (isinstance(got, list) and len(got) == len(want)
                and all(same(g, w) for g, w in zip(got, want, strict=True)))
    if isinstance(want, float):
        return type(got) is float and R.same_float(got, want)
    return type(got) is type(want) and got == want


@given(structures, st.data())
def test_nested_structures_compile_write_and_read(s: Any, data: st.DataObject) -> None:
    vals = mirror(s, lambda n: cp.value(n.x, n.ty))
    tg = cp.Target()
    tg.compile(vals, cp.value(0.0) + 1.0)
    assert same(tg.read_value(vals), mirror(s, as_read))
    new = mirror(s, lambda n: Num(n.ty, data.draw(NUMBER[n.ty])))
    tg.write_value(vals, mirror(new, lambda n: n.x))
    assert same(tg.read_value(vals), mirror(new, as_read))


def doubled(n: Num) -> Any:
    if n.ty == "float":
        with np.errstate(over="ignore"):
            return float(F(n.x) * F(2))
    return R.wrap32(int(n.x) * 2)


@given(structures)
def test_jit_takes_and_returns_nested_structures(s: Any) -> None:
    @cp.jit
    def twice(arg: Any) -> Any:
        return mirror(arg, lambda v: v * 2)

    want = mirror(s, doubled)
    arg = mirror(s, lambda n: n.x)
    assert same_structure(twice(arg), want)
    assert same_structure(twice(arg), want)  # the cached path


def same_structure(got: Any, want: Any) -> bool:
    """jit results keep lists and tuples apart."""
    if isinstance(want, list | tuple):
        return (type(got) is type(want) and len(got) == len(want)
                and all(same_structure(g, w) for g, w in zip(got, want, strict=True)))
    if isinstance(want, float):
        return type(got) is float and R.same_float(got, want)
    return type(got) is int and got == want


# --- NumPy arrays ------------------------------------------------------------------------------

DTYPES = ["<f8", ">f8", "<f4", ">f4", "<f2", ">f2", "<i8", ">i8", "<i4", ">i4", "<i2", ">i2", "i1",
          "u1", "<u2", ">u2", "<u4", ">u4", "<u8", "?"]


@st.composite
def arrays(draw: st.DrawFn) -> np.ndarray[Any, Any]:
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        elements = st.integers(max(info.min, R.INT_MIN), min(info.max, R.INT_MAX))
    elif dtype.kind == "f":
        elements = st.floats(width=min(32, 8 * dtype.itemsize), allow_subnormal=True)  # type: ignore[arg-type]
    else:
        elements = st.booleans()
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=5))
    a = draw(hnp.arrays(dtype, shape, elements=elements))
    layout = draw(st.sampled_from(["c", "f", "reversed", "strided", "transposed", "readonly"]))
    if layout == "f":
        a = np.asfortranarray(a)
    elif layout == "reversed":
        a = a[::-1]
    elif layout == "strided":
        a = np.repeat(a, 2, axis=0)[::2]
    elif layout == "transposed":
        a = a.T
    elif layout == "readonly":
        a = a.copy()
        a.setflags(write=False)
    return a


def reference_twice(a: np.ndarray[Any, Any]) -> Any:
    if a.dtype.kind == "f":
        with np.errstate(over="ignore"):
            return (a.astype(F) * F(2)).tolist()
    return (a.astype(np.int32) * np.int32(2)).tolist()


@given(arrays())
def test_jit_numpy_arrays_of_any_dtype_and_layout_match_numpy(a: np.ndarray[Any, Any]) -> None:
    @cp.jit
    def twice(v: Any) -> Any:
        return v * 2

    want = reference_twice(a)
    for _ in range(2):  # the first call compiles, the second uses the cache
        got = twice(a)
        assert np.array(got).shape == a.shape
        g, w = np.array(got, dtype=F if a.dtype.kind == "f" else np.int64), np.array(want)
        if a.dtype.kind == "f":
            assert all(R.same_float(float(x), y) for x, y in zip(g.ravel(), w.ravel(), strict=True))
        else:
            assert g.tolist() == w.tolist()
