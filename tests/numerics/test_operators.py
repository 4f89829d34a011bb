"""Every operator on every pair of operand types, against NumPy float32 / int32 references.

Each test compiles all edge-value combinations of one operator and one type pairing into a
single target, runs it once, and compares every result bit-exactly (floats through their
float32 bit pattern, so the sign of zero counts; any NaN matches any NaN). Result types are
checked too: ``v.dtype`` at trace time and the Python type returned by ``read_value``.

Operand pairings: value ⊕ value (two distinct input variables, so no algebraic identity can
apply), value ⊕ Python number, Python number ⊕ value.
"""

from __future__ import annotations

import math
from typing import Any

import copapy as cp
import numpy as np
import pytest
import refsem as R

F32_MAX = float(np.finfo(np.float32).max)
F32_TINY_DENORMAL = float(np.float32(1.401298464324817e-45))  # smallest positive denormal
F32_DENORMAL = float(np.float32(-5.877471754111438e-39))  # a negative denormal

FLOAT_EDGES: list[float] = [
    0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan,
    -7.5, 2.0, 0.5, 3.0, -2.5, 7.0,
    float(np.float32(0.1)), float(np.float32(1e-30)), float(np.float32(1e30)),
    F32_TINY_DENORMAL, F32_DENORMAL, F32_MAX,
]
INT_EDGES: list[int] = [
    0, 1, -1, 2, -2, 3, 7, -7, 31, 32, 33, -33, 1_000_003, 16_777_217,
    R.INT_MAX, R.INT_MIN, R.INT_MIN + 1,
]
BOOL_EDGES: list[bool] = [False, True]
EDGES: dict[str, list[Any]] = {"float": FLOAT_EDGES, "int": INT_EDGES, "bool": BOOL_EDGES}

# Python constants: the same edges, plus floats that float32 rounds (0.1), flushes to zero
# (1e-50) or overflows to infinity (1e40) when the constant is converted.
PY_CONSTS: dict[str, list[Any]] = {
    "float": FLOAT_EDGES + [0.1, 1e-50, 1e40, -1e40],
    "int": INT_EDGES,
}

TYPES = ("float", "int", "bool")


def _cases() -> list[Any]:
    out = []
    for op in R.BINARY_OPS:
        for ta in TYPES:
            for tb in TYPES:
                if op in R.BITWISE and "float" in (ta, tb):
                    continue
                out.append(pytest.param(op, ta, tb, "vv", id=f"{op}-{ta}-{tb}-value-value"))
            for tb in ("float", "int"):
                if op in R.BITWISE and "float" in (ta, tb):
                    continue
                out.append(pytest.param(op, ta, tb, "vp", id=f"{op}-{ta}-value-py{tb}"))
                out.append(pytest.param(op, tb, ta, "pv", id=f"{op}-py{tb}-{ta}-value"))
    return out


def _identity_alternatives(op: str, mode: str, x: Any, tx: str, c: Any, rt: str) -> list[Any]:
    """The one result the documented rewrite x*0 -> 0 may give instead of IEEE for a Python
    constant 0 next to a float value x: exactly +0.0 (IEEE gives -0.0 for a negative x and NaN
    for an infinite or NaN x). Every other rewrite must give IEEE's bits, sign of zero included:
    x + 0.0 and 0.0 - x are not rewritten, x - 0.0 -> x is exact."""
    if rt != "float" or R.f32(c) != 0 or op != "mul":
        return []
    return [np.float32(0.0)]


@pytest.mark.parametrize("op,ta,tb,mode", _cases())
def test_binary_operator(op: str, ta: str, tb: str, mode: str) -> None:
    lefts = EDGES[ta] if mode != "pv" else PY_CONSTS[ta]
    rights = EDGES[tb] if mode != "vp" else PY_CONSTS[tb]
    left_vals = [cp.value(x, ta) for x in lefts] if mode != "pv" else list(lefts)
    right_vals = [cp.value(y, tb) for y in rights] if mode != "vp" else list(rights)
    fn = R.PY_OP[op]

    cases: list[tuple[Any, Any, Any, list[Any], Any, str]] = []
    problems: list[str] = []
    for x, xv in zip(lefts, left_vals, strict=True):
        for y, yv in zip(rights, right_vals, strict=True):
            want, rt = R.binop(op, x, ta, y, tb)
            alts: list[Any] = []
            if mode == "vp":
                alts = _identity_alternatives(op, mode, x, ta, y, rt)
            elif mode == "pv":
                alts = _identity_alternatives(op, mode, y, tb, x, rt)
            expr = fn(xv, yv)
            dtype = getattr(expr, "dtype", None)
            plain_zero_ok = op == "mul" and mode != "vv" and R.f32(y if mode == "vp" else x) == 0
            if isinstance(expr, int | float) and plain_zero_ok:
                alts = alts or [0]  # Copapy returns a plain 0 for x * 0
            elif dtype != rt:
                problems.append(f"{x!r} {R.SYMBOL[op]} {y!r}: dtype {dtype!r}, want {rt!r}")
            cases.append((x, y, expr, alts, want, rt))

    tg = cp.Target()
    tg.compile([c[2] for c in cases])
    tg.run()
    got_all = tg.read_value([c[2] for c in cases])
    for (x, y, _, alts, want, rt), got in zip(cases, got_all, strict=True):
        if R.matches(got, want, rt):
            continue
        if alts and type(got) in (int, float) and any(R.same_float(float(got), a) for a in alts):
            continue
        problems.append(
            f"{ta} {x!r} {R.SYMBOL[op]} {tb} {y!r} = {got!r} ({type(got).__name__}), "
            f"want {want!r} ({rt})"
        )
    assert not problems, R.describe_failures(problems)


@pytest.mark.parametrize("ta", TYPES)
def test_unary_neg_abs(ta: str) -> None:
    xs = EDGES[ta]
    vals = [cp.value(x, ta) for x in xs]
    negs, abss = [-v for v in vals], [abs(v) for v in vals]
    tg = cp.Target()
    tg.compile(negs, abss)
    tg.run()
    problems = []
    for x, n, a in zip(xs, tg.read_value(negs), tg.read_value(abss), strict=True):
        for name, got, (want, rt) in (("-", n, R.neg(x, ta)), ("abs", a, R.absolute(x, ta))):
            if not R.matches(got, want, rt):
                problems.append(f"{name}({ta} {x!r}) = {got!r}, want {want!r} ({rt})")
    for v in negs + abss:
        want_dtype = "float" if ta == "float" else "int"
        if v.dtype != want_dtype:
            problems.append(f"dtype {v.dtype!r}, want {want_dtype!r}")
            break
    assert not problems, R.describe_failures(problems)


POW_EXPONENTS = [1, 2, 3, 4, 5, 7, 8, 10, -1, -2, -3]


@pytest.mark.parametrize("ta", ["float", "int"])
def test_integer_power(ta: str) -> None:
    xs = EDGES[ta] + ([1.5, -1.25, 1.0001, 100.0] if ta == "float" else [5, -3, 46341, 100])
    vals = [cp.value(x, ta) for x in xs]
    cases = [(x, n, v**n) for x, v in zip(xs, vals, strict=True) for n in POW_EXPONENTS]
    tg = cp.Target()
    tg.compile([c[2] for c in cases])
    tg.run()
    problems = []
    for (x, n, e), got in zip(cases, tg.read_value([c[2] for c in cases]), strict=True):
        want, rt = R.power(x, ta, n)
        if e.dtype != rt or not R.matches(got, want, rt):
            problems.append(f"({ta} {x!r}) ** {n} = {got!r} [{e.dtype}], want {want!r} ({rt})")
    assert not problems, R.describe_failures(problems)


@pytest.mark.parametrize("x", [2.5, -3, 0.0, True])
def test_power_zero_is_one(x: Any) -> None:
    v = cp.value(x)
    p = v**0
    other = v + 1  # something to compile alongside, as x**0 may be a plain number
    tg = cp.Target()
    tg.compile(p, other)
    tg.run()
    assert tg.read_value(p) == 1


def test_nan_comparisons_with_itself_and_others() -> None:
    """x != x is the NaN test people write; no rewrite may turn it into False."""
    n, one = cp.value(math.nan), cp.value(1.0)
    exprs = [n != n, n == n, n < n, n <= n, n > n, n >= n, n != one, n == one, n < one, one > n]
    want = [True, False, False, False, False, False, True, False, False, False]
    tg = cp.Target()
    tg.compile(exprs)
    tg.run()
    assert tg.read_value(exprs) == want


@pytest.mark.parametrize("ta", TYPES)
def test_same_operand_on_both_sides(ta: str) -> None:
    """x ⊕ x with one input on both sides (identities such as x - x -> 0 may apply, so only
    finite values are used, for which they are exact)."""
    xs = [x for x in EDGES[ta] if not (isinstance(x, float) and not math.isfinite(x))]
    ops = [op for op in R.BINARY_OPS if not (ta == "float" and op in R.BITWISE)]
    vals = [cp.value(x, ta) for x in xs]
    cases = [(x, op, R.PY_OP[op](v, v)) for x, v in zip(xs, vals, strict=True) for op in ops]
    tg = cp.Target()
    tg.compile([c[2] for c in cases])
    tg.run()
    problems = []
    for (x, op, _), got in zip(cases, tg.read_value([c[2] for c in cases]), strict=True):
        want, rt = R.binop(op, x, ta, x, ta)
        if not R.matches(got, want, rt):
            problems.append(f"x {R.SYMBOL[op]} x with x = {ta} {x!r}: {got!r}, want {want!r} ({rt})")
    assert not problems, R.describe_failures(problems)


def test_documented_identities_on_finite_values() -> None:
    """x*0 -> +0.0, x+0 -> x, x*1 -> x, x-x -> 0, --x -> x give IEEE's bits for finite x (x*0 is
    +0.0 also for a negative x, as documented); x + 0.0 and 0.0 - x are not rewritten, so a
    signed zero comes out as IEEE says."""
    xs = [2.5, -2.5, 1e30, -1e-30, 7.0, 0.0, -0.0]
    vals = [cp.value(x) for x in xs]
    problems = []
    exprs = []
    f = np.float32
    for x, v in zip(xs, vals, strict=True):
        minus_minus = -(-v)  # noqa: B002
        exprs += [(x, "x*0", v * 0, f(0.0)), (x, "0*x", 0 * v, f(0.0)), (x, "x*0.0", v * 0.0, f(0.0)),
                  (x, "x+0", v + 0, f(x) + f(0.0)), (x, "0.0+x", 0.0 + v, f(0.0) + f(x)),
                  (x, "x*1", v * 1, f(x)), (x, "x-x", v - v, f(x) - f(x)), (x, "-(-x)", minus_minus, f(x)),
                  (x, "x*1.0", v * 1.0, f(x)), (x, "x-0.0", v - 0.0, f(x) - f(0.0)),
                  (x, "0.0-x", 0.0 - v, f(0.0) - f(x)), (x, "0-x", 0 - v, f(0.0) - f(x)),
                  (x, "x+(-0.0)", v + (-0.0), f(x) + f(-0.0)), (x, "x/1", v / 1, f(x))]
    tg = cp.Target()
    tg.compile([e[2] for e in exprs])
    tg.run()
    for x, name, e, want in exprs:
        got = tg.read_value(e)
        if not R.same_float(got, want):
            problems.append(f"{name} with x={x!r}: {got!r}, want {want!r}")
    assert not problems, R.describe_failures(problems)


def test_rewrites_keep_the_result_type() -> None:
    """Identities on bools must still give Python's int results (-(-True) is 1, True*1 is 1)."""
    b = cp.value(True)
    minus_minus = -(-b)  # noqa: B002
    exprs = [(minus_minus, 1), (b * 1, 1), (b + 0, 1), (b | 0, 1), (b ^ 0, 1), (b << 0, 1), (b >> 0, 1),
             (b // 1, 1), (b - 0, 1), (0 - b, -1), (b**1, 1), (1 * b, 1), (abs(b), 1)]
    for e, _ in exprs:
        assert e.dtype == "int", e
    tg = cp.Target()
    tg.compile([e for e, _ in exprs])
    tg.run()
    got = tg.read_value([e for e, _ in exprs])
    assert got == [w for _, w in exprs] and all(type(g) is int for g in got)


def test_int_division_by_zero_and_int_min_over_minus_one() -> None:
    """Documented results, not SIGFPE: x // 0 == 0, x % 0 == 0, INT_MIN // -1 == INT_MIN."""
    a, b = cp.value(R.INT_MIN), cp.value(-1)
    z = cp.value(0)
    seven = cp.value(7)
    exprs = [a // b, a % b, seven // z, seven % z, z // z, z % z, a // z, -7 // cp.value(2),
             -7 % cp.value(2), 7 // cp.value(-2), 7 % cp.value(-2)]
    want = [R.INT_MIN, 0, 0, 0, 0, 0, 0, -4, 1, -4, -1]
    tg = cp.Target()
    tg.compile(exprs)
    tg.run()
    assert tg.read_value(exprs) == want


def test_python_int_beyond_int32_next_to_a_float_value_is_promoted() -> None:
    """Promotion converts the int to float32 first, so its int32 range does not matter."""
    x = cp.value(1.5)
    big = 10**10
    exprs = [x * big, big + x, x - 2**40, (-(2**35)) / x]
    tg = cp.Target()
    tg.compile(*exprs)
    tg.run()
    f = np.float32
    want = [f(1.5) * f(big), f(big) + f(1.5), f(1.5) - f(2**40), f(-(2**35)) / f(1.5)]
    got = [tg.read_value(e) for e in exprs]
    assert [np.float32(g).view(np.int32) for g in got] == [w.view(np.int32) for w in want]


def test_python_int_beyond_int32_next_to_an_int_value_is_an_error() -> None:
    with pytest.raises(OverflowError, match="int32"):
        cp.value(3) + 2**31
