"""Independent reference semantics for copapy scalars: NumPy float32 and wrapping int32.

Nothing here imports copapy. Each function takes plain Python numbers tagged with a copapy
dtype ('float', 'int', 'bool') and returns ``(result, dtype)`` as copapy must compute it:

- int with float gives float (the int is converted to float32 first, round to nearest);
- ``/`` always gives float;
- bool in arithmetic behaves as int; ``& | ^``, ``min`` and ``max`` of two bools give bool;
- int arithmetic wraps at 32 bits; ``x // 0 == 0``, ``x % 0 == 0``, INT_MIN // -1 == INT_MIN;
- float ``//`` and ``%`` are NumPy's float32 ``floor_divide`` / ``remainder``;
- shifts as NumPy int32: a count outside 0..31 gives 0 for ``<<`` and 0 or -1 for ``>>``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

F32 = np.float32
INT_MIN = -(2**31)
INT_MAX = 2**31 - 1

ARITH = ("add", "sub", "mul", "truediv", "floordiv", "mod")
COMPARE = ("lt", "le", "gt", "ge", "eq", "ne")
BITWISE = ("and", "or", "xor", "lshift", "rshift")
BINARY_OPS = ARITH + COMPARE + BITWISE

SYMBOL = {
    "add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%",
    "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!=",
    "and": "&", "or": "|", "xor": "^", "lshift": "<<", "rshift": ">>",
}

# The Python operator for each op: applied to copapy values (and Python numbers) it traces.
PY_OP: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "truediv": lambda a, b: a / b,
    "floordiv": lambda a, b: a // b,
    "mod": lambda a, b: a % b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "and": lambda a, b: a & b,
    "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b,
    "lshift": lambda a, b: a << b,
    "rshift": lambda a, b: a >> b,
}


def wrap32(x: int) -> int:
    """Two's-complement wrap of a Python int to int32."""
    return ((int(x) + 2**31) % 2**32) - 2**31


def f32(x: float | int | bool) -> np.float32:
    """float32 of a Python number, rounded to nearest (ints are exact in float64 first)."""
    with np.errstate(over="ignore"):
        return F32(float(x))


def f32_bits(x: float | np.floating[Any]) -> int:
    return int(np.array([x], dtype=np.float32).view(np.uint32)[0])


def same_float(got: float, want: float | np.floating[Any]) -> bool:
    """Bit-exact float32 comparison; any NaN matches any NaN."""
    g, w = F32(got), F32(want)
    if np.isnan(w):
        return bool(np.isnan(g))
    return f32_bits(g) == f32_bits(w)


def ulp_distance(a: float, b: float) -> int:
    """Distance in float32 units in the last place; +0 and -0 are the same point."""

    def ordered(x: float) -> int:
        bits = f32_bits(F32(x))
        return bits if bits < 0x80000000 else 0x80000000 - bits

    return abs(ordered(a) - ordered(b))


def result_type(op: str, ta: str, tb: str) -> str:
    if op in COMPARE:
        return "bool"
    if op in ("min", "max") and ta == tb == "bool":
        return "bool"
    if op in BITWISE:
        if "float" in (ta, tb):
            raise TypeError("bitwise op on float")
        if op in ("and", "or", "xor") and ta == tb == "bool":
            return "bool"
        return "int"
    if op == "truediv" or "float" in (ta, tb):
        return "float"
    return "int"


def _int_floordiv(a: int, b: int) -> int:
    return 0 if b == 0 else wrap32(a // b)


def _int_mod(a: int, b: int) -> int:
    return 0 if b == 0 else wrap32(a % b)


def _shift(op: str, a: int, b: int) -> int:
    if op == "lshift":
        return wrap32(a << b) if 0 <= b < 32 else 0
    if 0 <= b < 32:
        return a >> b
    return -1 if a < 0 else 0


def binop(op: str, a: float | int | bool, ta: str, b: float | int | bool, tb: str) -> tuple[Any, str]:
    """Reference result of ``a op b`` where a, b have copapy dtypes ta, tb."""
    rt = result_type(op, ta, tb)
    floaty = "float" in (ta, tb) or op == "truediv"
    if op in BITWISE:
        ia, ib = int(a), int(b)
        if rt == "bool":
            r: Any = {"and": ia & ib, "or": ia | ib, "xor": ia ^ ib}[op]
            return bool(r), rt
        if op in ("lshift", "rshift"):
            return _shift(op, ia, ib), rt
        return wrap32({"and": ia & ib, "or": ia | ib, "xor": ia ^ ib}[op]), rt
    if floaty:
        x, y = f32(a), f32(b)
        with np.errstate(all="ignore"):
            if op in COMPARE:
                cmp = {"lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y, "eq": x == y, "ne": x != y}
                return bool(cmp[op]), rt
            res = {
                "add": lambda: x + y,
                "sub": lambda: x - y,
                "mul": lambda: x * y,
                "truediv": lambda: x / y,
                "floordiv": lambda: np.floor_divide(x, y),
                "mod": lambda: np.remainder(x, y),
                "min": lambda: np.minimum(x, y),
                "max": lambda: np.maximum(x, y),
            }[op]()
        assert isinstance(res, np.float32)
        return res, rt
    ia, ib = int(a), int(b)
    if op in COMPARE:
        cmp = {"lt": ia < ib, "le": ia <= ib, "gt": ia > ib, "ge": ia >= ib, "eq": ia == ib, "ne": ia != ib}
        return cmp[op], rt
    res_i = {
        "add": lambda: wrap32(ia + ib),
        "sub": lambda: wrap32(ia - ib),
        "mul": lambda: wrap32(ia * ib),
        "floordiv": lambda: _int_floordiv(ia, ib),
        "mod": lambda: _int_mod(ia, ib),
        "min": lambda: min(ia, ib),
        "max": lambda: max(ia, ib),
    }[op]()
    if rt == "bool":
        return bool(res_i), rt
    return res_i, rt


def neg(a: Any, ta: str) -> tuple[Any, str]:
    if ta == "float":
        return -f32(a), "float"
    return wrap32(-int(a)), "int"


def absolute(a: Any, ta: str) -> tuple[Any, str]:
    if ta == "float":
        return np.abs(f32(a)), "float"
    return wrap32(abs(int(a))), "int"


def power(a: Any, ta: str, n: int) -> tuple[Any, str]:
    """x ** n for an integer constant n, as multiplications: for |n| < 8 a left-to-right chain
    ((x*x)*x)..., as Copapy does; for larger |n| square-and-multiply, consuming the exponent's
    bits from the lowest (result = result * x^(2^k) for each set bit k, in increasing k).
    A negative n gives 1 / (x ** -n) (float); x ** 0 == 1."""
    if n == 0:
        return 1, "int" if ta != "float" else "float"
    m = abs(n)
    x: Any = f32(a) if ta == "float" else int(a)

    def mul(p: Any, q: Any) -> Any:
        return p * q if ta == "float" else wrap32(p * q)

    with np.errstate(all="ignore"):
        if m < 8:
            acc = x
            for _ in range(m - 1):
                acc = mul(acc, x)
        else:
            acc, base, e = None, x, m
            while True:
                if e & 1:
                    acc = base if acc is None else mul(acc, base)
                e >>= 1
                if e == 0:
                    break
                base = mul(base, base)
        if n > 0:
            return acc, "int" if ta != "float" else "float"
        return F32(1.0) / f32(acc), "float"


def sqrt(a: Any) -> np.float32:
    with np.errstate(all="ignore"):
        return np.sqrt(f32(a))


def sin(a: Any) -> np.float32:
    """sin of the float32 argument, computed in float64 and rounded once to float32."""
    x = float(f32(a))
    if math.isinf(x) or math.isnan(x):
        return F32(math.nan)
    return F32(math.sin(x))


def cos(a: Any) -> np.float32:
    x = float(f32(a))
    if math.isinf(x) or math.isnan(x):
        return F32(math.nan)
    return F32(math.cos(x))


def matches(got: Any, want: Any, rt: str) -> bool:
    """Compare a value read from copapy with a reference of dtype rt (types included)."""
    if rt == "float":
        return type(got) is float and same_float(got, want)
    if rt == "bool":
        return type(got) is bool and got == bool(want)
    return type(got) is int and got == int(want)


def describe_failures(rows: list[str], limit: int = 25) -> str:
    shown = "\n".join(rows[:limit])
    more = f"\n... and {len(rows) - limit} more" if len(rows) > limit else ""
    return f"{len(rows)} mismatches:\n{shown}{more}"


# ---- every operation of the op table (stencils/optable.py), by its stencil name: the
# NumPy float32 / int32 computation copapy must reproduce element by element. The
# arguments are NumPy arrays of the operand type (float32, or int32 for ints and bools).
# tests/targets/test_optable.py fails naming any table op missing here.


def _f64_math(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A NumPy math function evaluated in float64 and rounded once to float32 (our float32
    math library is within a few ulp of this; tests compare with a tolerance)."""

    def apply(x: Any) -> Any:
        return np.asarray(fn(np.asarray(x, dtype=np.float64))).astype(np.float32)

    return apply


def sigmoid64(x: Any) -> Any:
    """1 / (1 + exp(-x)) in float64 without overflow: exp of -|x| only, NaN stays NaN."""
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def saturating_cast(x: Any, lo: int, hi: int) -> Any:
    """The documented cast rule (docs/math.md, "Casts"), written out rather than NumPy's
    astype (undefined out of range): truncate toward 0, NaN gives 0, out of range
    saturates to lo / hi. Ints are clamped."""
    x = np.asarray(x)
    if x.dtype != np.float32:
        return np.clip(x.astype(np.int64), lo, hi).astype(np.int32)
    x64 = x.astype(np.float64)
    r = np.where(np.isnan(x64), 0.0, np.clip(np.trunc(np.nan_to_num(x64, nan=0.0)), lo, hi))
    return r.astype(np.int64).astype(np.int32)


REFERENCE: dict[str, Callable[..., Any]] = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "floordiv": np.floor_divide,
    "mod": np.remainder,
    "and": np.bitwise_and,
    "or": np.bitwise_or,
    "xor": np.bitwise_xor,
    "shl": lambda x, y: np.where((y >= 0) & (y < 32), np.left_shift(x, y & 31), 0).astype(np.int32),
    "shr": lambda x, y: np.right_shift(x, np.where((y >= 0) & (y < 32), y, 31)).astype(np.int32),
    "atan2": lambda x, y: np.arctan2(x.astype(np.float64), y).astype(np.float32),
    "pow": lambda x, y: np.power(x.astype(np.float64), y).astype(np.float32),
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "eq": np.equal,
    "ne": np.not_equal,
    "min": np.minimum,
    "max": np.maximum,
    "neg": np.negative,
    "abs": np.abs,
    "sqrt": np.sqrt,
    "sin": _f64_math(np.sin),
    "cos": _f64_math(np.cos),
    "tan": _f64_math(np.tan),
    "asin": _f64_math(np.arcsin),
    "acos": _f64_math(np.arccos),
    "atan": _f64_math(np.arctan),
    "exp": _f64_math(np.exp),
    "log": _f64_math(np.log),
    "tanh": _f64_math(np.tanh),
    "sigmoid": _f64_math(sigmoid64),
    "itof": lambda x: x.astype(np.float32),
    "ftoi": lambda x: saturating_cast(x, INT_MIN, INT_MAX),
    "tobyte": lambda x: saturating_cast(x, 0, 255),
}
