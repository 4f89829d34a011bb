"""The one op table (stencils/optable.py) against everything that must follow it.

Adding an op is one line in the table plus its semantics in each language; these tests
name the op when one part is missing: the generated files are stale, ops.h has no
``op_<name>_<ty>``, refsem.py has no reference, or the op, spelled as the table says
(an operator or a ``cp.`` function), does not give the reference's results on edge
values, as scalar values and as arrays. (The Rust side is checked by the compiler: the
folding matches in fold.rs name every op.)
"""

from __future__ import annotations

import math
import operator
import re
import subprocess
import sys
import typing
from collections.abc import Callable
from typing import Any

import copapy as cp
import numpy as np
import pytest
import refsem as R
from copapy import _optable as T
from helpers import ROOT

OPS = T.BINARY + T.UNARY
# our own float32 math: within a few ulp of the float64 reference (exact bars in docs/math.md)
APPROXIMATE = set(T.APPROXIMATE)
# sin, cos and tan keep their bars for |x| < 2^20 ("Large arguments" in docs/math.md)
TRIG = {"sin", "cos", "tan"}
TRIG_ACCURATE = 2.0**20


FLOATS = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 255.5, -0.5, 1e-45, 3.4e38, -3.4e38,
          2.0**31, -(2.0**31), math.inf, -math.inf, math.nan, 0.1]
INTS = [0, 1, -1, 2, -7, 31, 32, 33, -32, 255, 256, 2**31 - 1, -(2**31)]


def spelled(name: str) -> Callable[..., Any]:
    """The Python callable the table gives for op ``name``."""
    how = T.PYTHON[name]
    if how.startswith("cp."):
        fn: Callable[..., Any] = getattr(cp, how[3:])
        return fn
    # an operator: Python's name for it (the generated vocabulary) is its dunder
    table: dict[str, str] = dict(T.BINARY_OPERATORS if name in T.BINARY else T.UNARY_OPERATORS)
    dunder = next(d for d, op in table.items() if op == name)
    return getattr(operator, f"__{dunder}__")  # type: ignore[no-any-return]


def test_the_stub_types_name_exactly_the_table_ops() -> None:
    assert typing.get_args(T.BinaryOp) == T.BINARY
    assert typing.get_args(T.UnaryOp) == T.UNARY
    stub = (ROOT / "python" / "copapy" / "_core.pyi").read_text()
    assert "def array_binary(op: BinaryOp," in stub and "def array_unary(op: UnaryOp," in stub
    assert T.is_binary("shl") and not T.is_binary("neg") and T.is_unary("tobyte")


def test_the_float_math_functions_come_from_the_table() -> None:
    # every float -> float op spelled cp.<op> is made from its table row (_math.py), with
    # the core's entry point and its stub; the other cp. spellings name existing functions
    from copapy import _core, _math
    made = tuple(n for n in T.UNARY if T.SIGNATURES[n] == (("f", "f"),) and T.PYTHON[n] == f"cp.{n}")
    assert _math.FLOAT_FUNCTIONS == made and len(made) >= 10
    stub = (ROOT / "python" / "copapy" / "_core.pyi").read_text()
    for name in made:
        fn = getattr(cp, name)
        assert fn.__name__ == name and fn.__doc__ and fn is getattr(_math, name)
        assert isinstance(_core.math_unary(name, cp.value(0.5)), cp.value)
    assert "def math_unary(op: UnaryOp, x: value[Any]) -> value[float]" in stub
    for wrong in ("neg", "itof", "ftoi", "add", "nope"):
        with pytest.raises(ValueError, match="not a float math function"):
            _core.math_unary(wrong, cp.value(0.5))  # type: ignore[arg-type]
    for name, how in T.PYTHON.items():
        if how.startswith("cp."):
            assert callable(getattr(cp, how[3:])), name
    # one vocabulary: a math function spelled differently from its op maps to that op
    assert T.FUNCTIONS["minimum"] == "min" and T.FUNCTIONS["maximum"] == "max"
    assert T.BINARY_OPERATORS["truediv"] == "div" and T.UNARY_OPERATORS["neg"] == "neg"
    # every op an operator spells has exactly one Python name, and every op one spelling
    spellings = [*T.BINARY_OPERATORS.values(), *T.UNARY_OPERATORS.values(), *T.FUNCTIONS.values()]
    assert sorted(spellings) == sorted(n for n in T.PYTHON if T.PYTHON[n])


def test_the_binary_math_functions_come_from_the_table() -> None:
    # every binary op spelled cp.<function> is made from its row: one core entry point
    # (math_binary), typed by the protocol its signatures give (float result for f>f, the
    # operands' type for f>f i>i, the int power rule for intpower)
    from copapy import _core, _math
    made = tuple(n for n in T.BINARY if T.PYTHON[n].startswith("cp."))
    assert T.MATH_BINARY == made and {"atan2", "pow", "min", "max"} <= set(made)
    annotations = _math.__annotations__
    for op in made:
        name = T.PYTHON[op][3:]
        fn = getattr(cp, name)
        assert fn is getattr(_math, name) and fn.__name__ == name and fn.__doc__
        assert annotations[name] is _math._typing_of(op), name
        r = _core.math_binary(op, cp.value(0.5), 2.0)
        assert isinstance(r, cp.value) and r.dtype == "float"
    assert _math._typing_of("pow") is _math._PowerBinary
    assert _math._typing_of("atan2") is _math._FloatBinary
    assert _math._typing_of("min") is _math._SameTypeBinary
    # the int power rule: an int value to an int constant stays int; min keeps int
    assert _core.math_binary("pow", cp.value(3), 2).dtype == "int"
    assert _core.math_binary("min", cp.value(3), 2).dtype == "int"
    assert _core.math_binary("atan2", cp.value(3), 2).dtype == "float"
    stub = (ROOT / "python" / "copapy" / "_core.pyi").read_text()
    assert "def math_binary(op: MathBinaryOp," in stub
    for wrong in ("add", "neg", "sin", "minimum", "nope"):
        with pytest.raises(ValueError, match="not a binary math function"):
            _core.math_binary(wrong, cp.value(0.5), 1.0)  # type: ignore[arg-type]


def test_generated_files_are_up_to_date() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "stencils" / "gen_optable.py"), "--check"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("name", OPS)
def test_every_op_has_a_reference_and_c_semantics(name: str) -> None:
    assert name in R.REFERENCE, f"op '{name}' has no reference in tests/refsem.py (REFERENCE)"
    ops_h = (ROOT / "stencils" / "ops.h").read_text()
    for ty, _ in T.SIGNATURES[name]:
        assert re.search(rf"\bop_{name}_{ty}\(", ops_h), f"stencils/ops.h has no op_{name}_{ty}"
    assert T.PYTHON[name], f"op '{name}' has no Python spelling in stencils/optable.py"


def _operands(name: str, ty: str) -> tuple[list[Any], list[Any]]:
    """Every pair of edge values (binary) or every edge value (unary), as Python numbers."""
    base: list[Any] = FLOATS if ty == "f" else INTS
    if name in T.BINARY:
        return [x for x in base for _ in base], [y for _ in base for y in base]
    return list(base), []


def _reference(name: str, ty: str, xs: list[Any], ys: list[Any]) -> np.ndarray[Any, Any]:
    dt = np.float32 if ty == "f" else np.int32
    args = [np.array(xs, dtype=dt)] + ([np.array(ys, dtype=dt)] if ys else [])
    with np.errstate(all="ignore"):
        return np.asarray(R.REFERENCE[name](*args))


def _mismatches(
    name: str, got: list[Any], want: np.ndarray[Any, Any], xs: list[Any], ys: list[Any]
) -> list[str]:
    bad = []
    for k, (g, w) in enumerate(zip(got, want.tolist(), strict=True)):
        if isinstance(w, float):
            if math.isnan(w):
                ok = isinstance(g, float) and math.isnan(g)
            elif name in TRIG and abs(float(xs[k])) >= TRIG_ACCURATE:
                # beyond the range of their ulp bars: bounded, never NaN (docs/math.md)
                ok = isinstance(g, float) and not math.isnan(g) and (name == "tan" or abs(g) <= 1.0)
            elif name in APPROXIMATE:
                ok = isinstance(g, float) and math.isclose(g, w, rel_tol=2e-6, abs_tol=1e-30)
            else:
                ok = isinstance(g, float) and R.same_float(g, w)
        else:
            ok = not isinstance(g, float) and int(g) == int(w)
        if not ok:
            operands = (xs[k], ys[k]) if ys else (xs[k],)
            bad.append(f"{name}{operands}: {g!r}, reference {w!r}")
    return bad


def _cases() -> list[tuple[str, str]]:
    return [(name, ty) for name in OPS for ty, _ in T.SIGNATURES[name]]


@pytest.mark.parametrize(("name", "ty"), _cases())
def test_every_op_as_values_matches_the_reference(name: str, ty: str) -> None:
    fn = spelled(name)
    dtype = "float" if ty == "f" else "int"
    xs, ys = _operands(name, ty)
    if ys:
        outs = [fn(cp.value(x, dtype), cp.value(y, dtype)) for x, y in zip(xs, ys, strict=True)]
    else:
        outs = [fn(cp.value(x, dtype)) for x in xs]
    tg = cp.Target()
    tg.compile(*outs)
    tg.run()
    got = [tg.read_value(o) for o in outs]
    bad = _mismatches(name, got, _reference(name, ty, xs, ys), xs, ys)
    assert not bad, R.describe_failures(bad)


@pytest.mark.parametrize(("name", "ty"), [c for c in _cases() if c[0] in T.ARRAY])
def test_every_array_op_matches_the_reference(name: str, ty: str) -> None:
    fn = spelled(name)
    dtype = "float" if ty == "f" else "int"
    xs, ys = _operands(name, ty)
    out = fn(cp.array(xs, dtype), cp.array(ys, dtype)) if ys else fn(cp.array(xs, dtype))
    tg = cp.Target()
    tg.compile(out)
    tg.run()
    got = tg.read_value(out)
    bad = _mismatches(name, got, _reference(name, ty, xs, ys), xs, ys)
    assert not bad, R.describe_failures(bad)


def test_a_new_table_op_is_named_where_its_parts_are_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    """One more line in the table: the generated Rust enum gets the variant (so fold.rs
    stops compiling until it folds it), and check_ops.py names the op it cannot check."""
    monkeypatch.syspath_prepend(str(ROOT / "stencils"))
    import check_ops
    import gen_optable
    import optable

    extra = optable.Op("cbrt", "Cbrt", 1, "f>f", "array", "cp.cbrt", "Cube root.")
    monkeypatch.setattr(optable, "OPS", [*optable.OPS, extra])
    monkeypatch.setattr(gen_optable, "RUST_OPS", [op for op in optable.OPS if op.rust])
    rust = gen_optable.rust()
    assert "    Cbrt,\n" in rust and '"cbrt" => Some(Op::Cbrt)' in rust
    assert check_ops.missing_references() == ["cbrt"]
    assert optable.grouped(1)[("f", "f")].endswith("copy cbrt")
