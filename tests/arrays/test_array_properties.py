"""Property-based tests (hypothesis) of ``cp.array`` against independent NumPy references.

Random shapes (1-3 dimensions, up to a little over 100 elements, so both sides of the
64-element packing threshold), dtypes float/int/bool, broadcasting pairs, random short
expression trees of element-wise operators, comparisons, ``minimum``/``maximum``,
integer powers and ``cp.iif``; reductions (``sum mean min max``) over random axes with
``keepdims``; transposes, reshapes, stepped slices and broadcasts; runtime indices
(negative and out of range: wrapped once, then clamped). Each example is compiled, run and
compared bit for bit with refsem.py (NumPy float32 / wrapping int32) and with NumPy
float32 sums in the documented order (docs/architecture.md, "Arrays"); math functions are
checked against float64 within the ulp bars of docs/math.md, as tests/arrays/test_arrays.py does.

Examples are derandomized in the test suite. Under ``COPAPY_TEST_TARGET`` (every example
then runs in the emulator) fewer are drawn; ``HYPOTHESIS_PROFILE=fuzz`` draws many more,
fresh ones.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

import copapy as cp
import numpy as np
import refsem as R
from helpers import F32, ordered_sum
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

_FUZZ = os.environ.get("HYPOTHESIS_PROFILE") == "fuzz"
_EMULATED = bool(os.environ.get("COPAPY_TEST_TARGET"))


def _settings(native: int) -> settings:
    """``native`` examples on this machine, a fifth of them (at least 4) in the emulator."""
    n = native * 20 if _FUZZ else max(4, native // 5) if _EMULATED else native
    return settings(max_examples=n, deadline=None, derandomize=not _FUZZ, print_blob=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])


FLOAT_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, math.inf, -math.inf, math.nan, 1e-45,
               -1.1754942e-38, 3.4028235e38, 16777217.0, 0.1, -7.0]
INT_EDGES = [0, 1, -1, 2, 3, -7, 31, 32, -32, R.INT_MIN, R.INT_MAX, 65536]
NUMBERS: dict[str, st.SearchStrategy[Any]] = {
    "float": st.one_of(st.sampled_from(FLOAT_EDGES), st.floats(width=32)),
    "int": st.one_of(st.sampled_from(INT_EDGES), st.integers(R.INT_MIN, R.INT_MAX)),
    "bool": st.booleans(),
}
DTYPES = ("float", "int", "bool")
Obj = np.ndarray[Any, Any]
"""Reference data: NumPy object arrays of Python ints/bools and NumPy float32s."""


@st.composite
def shapes(draw: st.DrawFn) -> tuple[int, ...]:
    """1-3 dimensions; sizes from 1 to about 100 (some above 64)."""
    ndim = draw(st.integers(1, 3))
    if ndim == 1:
        return (draw(st.one_of(st.integers(1, 9), st.integers(60, 100))),)
    if ndim == 2:
        return (draw(st.integers(1, 9)), draw(st.integers(1, 12)))
    return (draw(st.integers(1, 4)), draw(st.integers(1, 5)), draw(st.integers(1, 6)))


@st.composite
def broadcast_shape(draw: st.DrawFn, base: tuple[int, ...]) -> tuple[int, ...]:
    """A shape that broadcasts to ``base``: trailing dimensions of it, some set to 1."""
    keep = draw(st.integers(1, len(base)))
    return tuple(1 if draw(st.booleans()) else d for d in base[len(base) - keep:])


def data(dtype: str, shape: tuple[int, ...]) -> st.SearchStrategy[list[Any]]:
    n = int(np.prod(shape))
    return st.lists(NUMBERS[dtype], min_size=n, max_size=n)


def ref_array(flat: list[Any], dtype: str, shape: tuple[int, ...]) -> Obj:
    """The reference elements as a NumPy object array of Python / NumPy float32 numbers."""
    out = np.empty(len(flat), dtype=object)
    out[:] = [R.f32(x) if dtype == "float" else (bool(x) if dtype == "bool" else int(x)) for x in flat]
    return out.reshape(shape)


def check(got: Any, want: Obj, dtype: str, what: str) -> None:
    """``got`` (nested lists from read_value) equals ``want`` bit for bit, types included."""
    flat_got = np.array(got, dtype=object).reshape(-1).tolist() if want.ndim else [got]
    bad = [f"{what}[{k}]: got {g!r}, want {w!r} ({dtype})"
           for k, (g, w) in enumerate(zip(flat_got, want.reshape(-1).tolist(), strict=True))
           if not R.matches(g, w, dtype)]
    assert not bad, R.describe_failures(bad)


def run(*outputs: Any) -> cp.Target:
    tg = cp.Target()
    tg.compile(*outputs)
    tg.run()
    return tg


# --- element-wise expression trees ------------------------------------------------------------

BIN_OPS = list(R.ARITH) + list(R.COMPARE) + list(R.BITWISE) + ["minimum", "maximum"]
UN_OPS = ["neg", "abs", "pow0", "pow1", "pow2", "pow3", "pow9", "powm2"]
Tree = tuple[Any, ...]


def trees(leaves: int) -> st.SearchStrategy[Tree]:
    leaf = st.integers(0, leaves - 1).map(lambda k: ("leaf", k))
    return st.recursive(leaf, lambda kids: st.one_of(
        st.tuples(st.just("un"), st.sampled_from(UN_OPS), kids),
        st.tuples(st.just("bin"), st.sampled_from(BIN_OPS), kids, kids),
        st.tuples(st.just("iif"), st.sampled_from(list(R.COMPARE)), kids, kids, kids),
    ), max_leaves=6)


class Invalid(Exception):
    """Not a valid program (a bitwise operation on floats)."""


def _map2(fn: Callable[[Any, Any], Any], a: Obj, b: Obj) -> Obj:
    x, y = np.broadcast_arrays(a, b)
    out = np.empty(x.size, dtype=object)
    out[:] = [fn(p, q) for p, q in zip(x.reshape(-1).tolist(), y.reshape(-1).tolist(), strict=True)]
    return out.reshape(x.shape)


def _minmax(op: str, x: Any, tx: str, y: Any, ty: str) -> tuple[Any, str]:
    """NumPy's minimum/maximum with copapy's types (docs: float if either is, else int;
    bool if both are bool)."""
    if "float" in (tx, ty):
        fn = np.minimum if op == "minimum" else np.maximum
        return fn(R.f32(x), R.f32(y)), "float"
    r = min(int(x), int(y)) if op == "minimum" else max(int(x), int(y))
    return (bool(r), "bool") if tx == ty == "bool" else (r, "int")


def reference(t: Tree, leaves: list[tuple[Obj, str]]) -> tuple[Obj, str]:
    kind = t[0]
    if kind == "leaf":
        return leaves[t[1]]
    if kind == "un":
        x, tx = reference(t[2], leaves)
        op = t[1]
        if op == "neg":
            fn: Callable[[Any], tuple[Any, str]] = lambda v: R.neg(v, tx)  # noqa: E731
        elif op == "abs":
            fn = lambda v: R.absolute(v, tx)  # noqa: E731
        else:
            n = {"pow0": 0, "pow1": 1, "pow2": 2, "pow3": 3, "pow9": 9, "powm2": -2}[op]
            fn = lambda v: R.power(v, tx, n)  # noqa: E731
        with np.errstate(all="ignore"):
            pairs = [fn(v) for v in x.reshape(-1).tolist()]
        out = np.empty(len(pairs), dtype=object)
        out[:] = [p[0] for p in pairs]
        rt = pairs[0][1] if pairs else tx
        return out.reshape(x.shape), rt
    if kind == "iif":
        lhs, tl = reference(t[2], leaves)
        rhs, tr = reference(t[3], leaves)
        cond = _map2(lambda p, q: R.binop(t[1], p, tl, q, tr)[0], lhs, rhs)
        a, ta = reference(t[4], leaves)
        b, tb = reference(t[2], leaves)
        rt = "float" if "float" in (ta, tb) else "bool" if ta == tb == "bool" else "int"
        conv: Callable[[Any], Any] = R.f32 if rt == "float" else (bool if rt == "bool" else int)
        c, x, y = np.broadcast_arrays(cond, a, b)
        out = np.empty(c.size, dtype=object)
        out[:] = [conv(p) if k else conv(q) for k, p, q in
                  zip(c.reshape(-1).tolist(), x.reshape(-1).tolist(), y.reshape(-1).tolist(), strict=True)]
        return out.reshape(c.shape), rt
    op = t[1]
    x, tx = reference(t[2], leaves)
    y, ty = reference(t[3], leaves)
    if op in R.BITWISE and "float" in (tx, ty):
        raise Invalid
    with np.errstate(all="ignore"):
        if op in ("minimum", "maximum"):
            rt = _minmax(op, 0, tx, 0, ty)[1]
            return _map2(lambda p, q: _minmax(op, p, tx, q, ty)[0], x, y), rt
        rt = R.result_type(op, tx, ty)
        return _map2(lambda p, q: R.binop(op, p, tx, q, ty)[0], x, y), rt


def _traced(x: Any) -> Any:
    """A plain number as a value: ``number op number`` is Python arithmetic by design (not
    the float32/int32 of the reference), so an operation gets at least one traced side."""
    if isinstance(x, int | float):
        return cp.value(x, "float" if isinstance(x, float) else "int")
    return x


def build(t: Tree, leaves: list[Any]) -> Any:
    kind = t[0]
    if kind == "leaf":
        return leaves[t[1]]
    if kind == "un":
        x = _traced(build(t[2], leaves))
        return {"neg": lambda: -x, "abs": lambda: abs(x), "pow0": lambda: x**0, "pow1": lambda: x**1,
                "pow2": lambda: x**2, "pow3": lambda: x**3, "pow9": lambda: x**9,
                "powm2": lambda: x**-2}[t[1]]()
    if kind == "iif":
        cond = R.PY_OP[t[1]](_traced(build(t[2], leaves)), build(t[3], leaves))
        return cp.iif(cond, build(t[4], leaves), build(t[2], leaves))
    a, b = _traced(build(t[2], leaves)), build(t[3], leaves)
    if t[1] in ("minimum", "maximum"):
        return getattr(cp, t[1])(a, b)
    return R.PY_OP[t[1]](a, b)


@st.composite
def programs(draw: st.DrawFn) -> tuple[Tree, list[tuple[str, str, tuple[int, ...], list[Any]]]]:
    """A tree and its leaves: (kind array/value/number, dtype, shape, data)."""
    base = draw(shapes())
    n = draw(st.integers(1, 4))
    leaves = []
    for k in range(n):
        kind = "array" if k == 0 else draw(st.sampled_from(["array", "array", "value", "number"]))
        dtype = draw(st.sampled_from(DTYPES if kind != "number" else ("float", "int")))
        shape = base if k == 0 else draw(broadcast_shape(base)) if kind == "array" else ()
        leaves.append((kind, dtype, shape, draw(data(dtype, shape if shape else (1,)))))
    return draw(trees(n)), leaves


def _leaf(kind: str, dtype: str, shape: tuple[int, ...], flat: list[Any]) -> Any:
    if kind == "array":
        np_dtype = {"float": F32, "int": np.int32, "bool": bool}[dtype]
        return cp.array(np.array(flat, dtype=np_dtype).reshape(shape), dtype)
    if kind == "value":
        return cp.value(flat[0], dtype)
    return flat[0]


@_settings(600)
@given(programs())
def test_elementwise_expression_trees_match_numpy(prog: tuple[Tree, list[Any]]) -> None:
    t, spec = prog
    refs = [(ref_array(flat, dtype, shape), dtype) for _, dtype, shape, flat in spec]
    try:
        want, rt = reference(t, refs)
    except Invalid:
        assume(False)
        return
    out = build(t, [_leaf(*s) for s in spec])
    assume(isinstance(out, cp.array))
    assert out.shape == want.shape and out.dtype == rt, (out.shape, out.dtype, want.shape, rt)
    check(run(out).read_value(out), want, rt, "tree")


# --- math functions --------------------------------------------------------------------------

MATH: dict[str, tuple[Callable[[Any], Any], Callable[[float], float], int]] = {
    "sqrt": (cp.sqrt, math.sqrt, 0), "sin": (cp.sin, math.sin, 1), "cos": (cp.cos, math.cos, 1),
    "tan": (cp.tan, math.tan, 2), "asin": (cp.asin, math.asin, 2), "acos": (cp.acos, math.acos, 2),
    "atan": (cp.atan, math.atan, 2), "exp": (cp.exp, math.exp, 1), "log": (cp.log, math.log, 1),
    "tanh": (cp.tanh, math.tanh, 1),
}


# sin, cos and tan keep their ulp bars for |x| < 2^20 (docs/math.md, "Large arguments")
TRIG = {"sin", "cos", "tan"}
TRIG_ACCURATE = 2.0**20


def _math_ref(fn: Callable[[float], float], x: float) -> float:
    """``fn`` in float64 rounded once to float32; NaN outside the domain, C99's limits."""
    try:
        with np.errstate(all="ignore"):
            return float(F32(fn(x)))
    except ValueError:
        return math.nan if not (fn is math.log and x == 0.0) else -math.inf
    except OverflowError:
        return math.inf


@_settings(300)
@given(st.sampled_from(sorted(MATH)), shapes(), st.data())
def test_math_functions_within_their_ulp_bars(name: str, shape: tuple[int, ...], d: st.DataObject) -> None:
    func, ref, bar = MATH[name]
    dtype = d.draw(st.sampled_from(["float", "float", "int"]))
    flat = d.draw(data(dtype, shape))
    a = _leaf("array", dtype, shape, flat)
    out = func(a)
    got = np.array(run(out).read_value(out), dtype=object).reshape(-1).tolist()
    for x, g in zip(flat, got, strict=True):
        w = _math_ref(ref, float(R.f32(x)))
        assert type(g) is float
        if name in TRIG and abs(float(R.f32(x))) >= TRIG_ACCURATE and not math.isinf(x):
            # beyond the documented range: deterministic, bounded, no ulp promise
            assert name == "tan" or -1.0 <= g <= 1.0, (name, x, g)
            continue
        if math.isnan(w):
            assert math.isnan(g), (name, x, g)
        else:
            assert R.ulp_distance(g, w) <= bar, (name, x, g, w)


# --- reductions ------------------------------------------------------------------------------


def _fold_min_max(which: str, terms: list[Any], dtype: str) -> Any:
    """The documented order: term k into partial k % 8 (partials from +inf / -inf, or the
    int limits), then partials l and l + 4, l and l + 2, the last two; each step NumPy's
    minimum/maximum, ``(a < b or a != a) ? a : b`` with the partial first."""
    def pick(a: Any, b: Any) -> Any:
        better = a < b if which == "min" else a > b
        return a if (better or a != a) else b

    if dtype == "float":
        acc: list[Any] = [F32(math.inf if which == "min" else -math.inf)] * 8
        terms = [R.f32(x) for x in terms]
    else:
        acc = [R.INT_MAX if which == "min" else R.INT_MIN] * 8
    for k, x in enumerate(terms):
        acc[k % 8] = pick(acc[k % 8], x)
    acc = [pick(acc[i], acc[i + 4]) for i in range(4)]
    acc = [pick(acc[i], acc[i + 2]) for i in range(2)]
    return pick(acc[0], acc[1])


def _reduce_ref(op: str, x: Obj, dtype: str, axes: tuple[int, ...], keepdims: bool) -> tuple[Any, str]:
    """The reference reduction: the terms of each result element in row-major order of the
    reduced axes (increasing axis order), then the documented order."""
    kept = [d for d in range(x.ndim) if d not in axes]
    moved = np.transpose(x, kept + list(axes))
    out_shape = tuple(x.shape[d] for d in kept)
    rows = moved.reshape(int(np.prod(out_shape)) if out_shape else 1, -1)
    n = rows.shape[1]
    with np.errstate(all="ignore"):  # float32 overflow to inf is part of the reference
        return _reduce_rows(op, rows, n, dtype, axes, keepdims, x.shape, out_shape)


def _reduce_rows(op: str, rows: Obj, n: int, dtype: str, axes: tuple[int, ...],
                 keepdims: bool, shape_in: tuple[int, ...], out_shape: tuple[int, ...]) -> tuple[Any, str]:
    vals = []
    for row in rows:
        terms = row.tolist()
        if op in ("min", "max"):
            v = _fold_min_max(op, terms, dtype)
            vals.append(bool(v) if dtype == "bool" else v)
        elif dtype == "float":
            s = ordered_sum(np.array(terms, F32))
            vals.append(s if op == "sum" else F32(s / F32(n)))
        elif op == "mean":  # as NumPy, in floating point: the terms as float32 first
            vals.append(F32(ordered_sum(np.array([R.f32(int(v)) for v in terms], F32)) / F32(n)))
        else:
            s = R.wrap32(sum(int(v) for v in terms))
            vals.append(s if op == "sum" else F32(R.f32(s) / F32(n)))
    rt = dtype if op in ("min", "max") else ("float" if dtype == "float" or op == "mean" else "int")
    arr = np.empty(len(vals), dtype=object)
    arr[:] = vals
    shape = tuple(1 if d in axes else shape_in[d] for d in range(len(shape_in))) if keepdims else out_shape
    return arr.reshape(shape), rt


@st.composite
def axes_for(draw: st.DrawFn, ndim: int) -> Any:
    kind = draw(st.sampled_from(["none", "int", "tuple"]))
    if kind == "none":
        return None
    if kind == "int":
        return draw(st.integers(-ndim, ndim - 1))
    picked = draw(st.lists(st.integers(0, ndim - 1), min_size=1, max_size=ndim, unique=True))
    return tuple(a - ndim if draw(st.booleans()) else a for a in picked)


@_settings(450)
@given(st.sampled_from(["sum", "mean", "min", "max"]), st.sampled_from(DTYPES), shapes(), st.booleans(),
       st.data())
def test_reductions_over_random_axes_in_the_documented_order(op: str, dtype: str, shape: tuple[int, ...],
                                                               keepdims: bool, d: st.DataObject) -> None:
    axis = d.draw(axes_for(len(shape)))
    flat = d.draw(data(dtype, shape))
    a = _leaf("array", dtype, shape, flat)
    out = getattr(a, op)(axis=axis, keepdims=keepdims)
    axes = tuple(range(len(shape))) if axis is None else tuple(
        sorted(x % len(shape) for x in (axis if isinstance(axis, tuple) else (axis,))))
    want, rt = _reduce_ref(op, ref_array(flat, dtype, shape), dtype, axes, keepdims)
    got = run(out).read_value(out)
    if isinstance(out, cp.value):
        assert want.size == 1 and not keepdims and len(axes) == len(shape)
        check(got, want.reshape(()), rt, op)
    else:
        assert out.shape == want.shape, (out.shape, want.shape)
        check(got, want, rt, op)


@_settings(180)
@given(st.sampled_from(["float", "int"]), st.integers(1, 9), st.integers(1, 12), st.integers(1, 9),
       st.sampled_from(["mm", "mv", "vm", "vv"]), st.data())
def test_matmul_in_the_documented_order(dtype: str, m: int, k: int, p: int, form: str,
                                        d: st.DataObject) -> None:
    sa = (k,) if form[0] == "v" else (m, k)
    sb = (k,) if form[1] == "v" else (k, p)
    xa, xb = d.draw(data(dtype, sa)), d.draw(data(dtype, sb))
    a, b = _leaf("array", dtype, sa, xa), _leaf("array", dtype, sb, xb)
    out = a @ b
    ra, rb = ref_array(xa, dtype, sa), ref_array(xb, dtype, sb)
    ra2, rb2 = ra.reshape(-1 if form[0] == "v" else m, k), rb.reshape(k, -1)
    vals = []
    for i in range(ra2.shape[0] if form[0] == "m" else 1):
        row = ra2[i] if form[0] == "m" else ra.reshape(-1)
        for j in range(rb2.shape[1]):
            col = rb2[:, j]
            if dtype == "float":
                with np.errstate(all="ignore"):
                    terms = np.array(row.tolist(), F32) * np.array(col.tolist(), F32)
                    vals.append(ordered_sum(terms.astype(F32)))
            else:
                pairs = zip(row.tolist(), col.tolist(), strict=True)
                vals.append(R.wrap32(sum(int(x) * int(y) for x, y in pairs)))
    want = np.empty(len(vals), dtype=object)
    want[:] = vals
    shape = tuple(dd for dd, keep in ((m, form[0] == "m"), (p, form[1] == "m")) if keep)
    got = run(out).read_value(out)
    check(got, want.reshape(shape), dtype, "matmul")


# --- views and runtime indices -------------------------------------------------------------


@st.composite
def view_ops(draw: st.DrawFn, shape: tuple[int, ...]) -> list[tuple[Any, ...]]:
    """A short chain of views; each keeps track of the shape it produces."""
    ops: list[tuple[Any, ...]] = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["T", "transpose", "reshape", "slice", "broadcast", "flatten"]))
        ndim = len(shape)
        if kind == "transpose":
            order = tuple(draw(st.permutations(range(ndim))))
            ops.append(("transpose", order))
            shape = tuple(shape[a] for a in order)
        elif kind == "T":
            ops.append(("T",))
            shape = shape[::-1]
        elif kind == "flatten":
            ops.append(("flatten",))
            shape = (int(np.prod(shape)),)
        elif kind == "reshape":
            n = int(np.prod(shape))
            divs = [x for x in range(1, n + 1) if n % x == 0]
            first = draw(st.sampled_from(divs))
            new = (first, -1) if draw(st.booleans()) else (first, n // first)
            ops.append(("reshape", new))
            shape = (first, n // first)
        elif kind == "slice":
            key = []
            new_shape = []
            for dim in shape:
                start = draw(st.one_of(st.none(), st.integers(-dim, dim - 1)))
                step = draw(st.sampled_from([None, 1, 2, 3, -1, -2]))
                stop = draw(st.one_of(st.none(), st.integers(-dim - 1, dim + 1)))
                r = range(*slice(start, stop, step).indices(dim))
                if not r:
                    start, stop = None, None
                    r = range(*slice(None, None, step).indices(dim))
                key.append(slice(start, stop, step))
                new_shape.append(len(r))
            ops.append(("slice", tuple(key)))
            shape = tuple(new_shape)
        elif kind == "broadcast" and int(np.prod(shape)) * 3 <= 150:
            new = (draw(st.integers(1, 3)),) + tuple(1 if False else d for d in shape)
            ops.append(("broadcast", new))
            shape = new
    return ops


def _apply(x: Any, ops: list[tuple[Any, ...]], numpy: bool) -> Any:
    for op in ops:
        if op[0] == "T":
            x = x.T
        elif op[0] == "transpose":
            x = np.transpose(x, op[1]) if numpy else x.transpose(*op[1])
        elif op[0] == "flatten":
            x = x.reshape(-1) if numpy else x.flatten()
        elif op[0] == "reshape":
            x = x.reshape(op[1])
        elif op[0] == "slice":
            x = x[op[1]]
        else:
            x = np.broadcast_to(x, op[1]) if numpy else x.broadcast_to(op[1])
    return x


@_settings(360)
@given(st.sampled_from(DTYPES), shapes(), st.data())
def test_views_match_numpy(dtype: str, shape: tuple[int, ...], d: st.DataObject) -> None:
    ops = d.draw(view_ops(shape))
    flat = d.draw(data(dtype, shape))
    out = _apply(_leaf("array", dtype, shape, flat), ops, numpy=False)
    want = _apply(ref_array(flat, dtype, shape), ops, numpy=True)
    assert out.shape == want.shape
    # the view feeds an operation too, so it is computed as a program reads it
    twice = out + out if dtype != "bool" else out & out
    tg = run(out, twice)
    check(tg.read_value(out), want, dtype, "view")
    op = "and" if dtype == "bool" else "add"
    doubled = _map2(lambda p, q: R.binop(op, p, dtype, q, dtype)[0], want, want)
    check(tg.read_value(twice), doubled, dtype, "view+view")


def _clamp(k: int, n: int) -> int:
    """The documented rule: wrap once if negative, then clamp to the dimension."""
    k = k + n if k < 0 else k
    return min(max(k, 0), n - 1)


@_settings(300)
@given(st.sampled_from(DTYPES), shapes(), st.data())
def test_runtime_indices_wrap_once_then_clamp(dtype: str, shape: tuple[int, ...], d: st.DataObject) -> None:
    flat = d.draw(data(dtype, shape))
    a = _leaf("array", dtype, shape, flat)
    ref = ref_array(flat, dtype, shape)
    ndim = len(shape)
    kinds = d.draw(st.lists(st.sampled_from(["value", "int", "slice"]), min_size=1, max_size=ndim))
    assume("value" in kinds)
    index_values = []
    key: list[Any] = []
    ref_key: list[Any] = []
    for pos, kind in enumerate(kinds):
        dim = shape[pos]
        if kind == "value":
            k = d.draw(st.integers(-3 * dim - 2, 3 * dim + 2))
            v = cp.value(k)
            index_values.append((v, k, dim))
            key.append(v)
            ref_key.append(_clamp(k, dim))
        elif kind == "int":
            k = d.draw(st.integers(-dim, dim - 1))
            key.append(k)
            ref_key.append(k)
        else:
            sl = d.draw(st.sampled_from([slice(None), slice(None, None, 2), slice(None, None, -1),
                                         slice(1, None)]))
            if not range(*sl.indices(dim)):
                sl = slice(None)
            key.append(sl)
            ref_key.append(sl)
    out = a[tuple(key)]
    tg = run(out, [v for v, _, _ in index_values])
    want = ref[tuple(ref_key)]
    check(tg.read_value(out), np.asarray(want, dtype=object), dtype, "index")
    # new indices at run time: the same program, another lookup
    new = [d.draw(st.integers(-3 * dim - 2, 3 * dim + 2)) for _, _, dim in index_values]
    tg.write_value([v for v, _, _ in index_values], new)
    tg.run()
    it = iter(new)
    ref_key2 = [(_clamp(next(it), shape[p]) if kind == "value" else ref_key[p])
                for p, kind in enumerate(kinds)]
    check(tg.read_value(out), np.asarray(ref[tuple(ref_key2)], dtype=object), dtype, "index after write")
