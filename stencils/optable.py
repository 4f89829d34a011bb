"""The op table: every scalar operation of copapy, one line each.

This is the single description the stencil generator (gen_stencils.py, gen_arrays.py),
the Rust op enum (crates/copapy-compiler/src/ops_generated.rs) and the Python op lists
(python/copapy/_optable.py) come from; gen_optable.py writes the last two. Adding an
operation is one line here plus its semantics in each language: `op_<name>_<ty>` in
ops.h, folding in fold.rs (or an explicit "not folded" arm), and the reference in
tests/refsem.py; tests/targets/test_optable.py names any op that misses one of them. A
float math function (unary, "f>f", python "cp.<name>") then exists as cp.<name> with no
more code: python/copapy/_math.py makes it from its row and _core.math_unary takes it;
a binary one (python "cp.<name>") likewise through _core.math_binary. Op names are the
one vocabulary: the generated BINARY_OPERATORS, UNARY_OPERATORS and FUNCTIONS
(_optable.py) map Python's spellings to them.

Fields of a line:
    name     stencil name (`st_<name>_<ty>_...`, `op_<name>_<ty>` in ops.h)
    rust     variant of the Rust `Op` enum ("" for stencil-only operations such as copy)
    arity    1 or 2
    types    operand type > result type for each stencil type: f float32, i int32/bool.
             They are the type promotion too (crate::trace::promote): a float operand
             makes both float if the op has an f signature (an error otherwise); ints
             and bools stay ints with an i signature and become floats without one
    flags    commutative: a op b == b op a for every input
             comparison: result 0/1 (a bool)
             differentiable: a gradient flows into its float operands
             array: it has element-wise array stencils (st_arr_<name>_<ty>_...)
             approx: our own float32 math, within a few ulp of the float64 reference
                     (docs/math.md) but not bit-identical to NumPy; the tests that
                     compare bit-exactly with NumPy leave these out
             keepsbool: two bool operands give a bool (otherwise ints and bools give
                     an int)
             intpower: an integer constant right operand becomes multiplications, so
                     an int left operand gives an int (`cp.pow(i, 2)`)
    python   how Python code spells it: an operator (its dunder and the `operator`
             module name follow, e.g. "//" is `__floordiv__`), or cp.<function>; a
             binary cp.<function> is made by python/copapy/_math.py from its row and
             reaches the core through _core.math_binary, typed by its types (f>f:
             float result; f>f i>i: the operands' type)
    doc      one line for the Rust doc comment

The order is the order of the stencils in generated/stencils.c: changing it changes
every object file.

FUSED (below the ops) lists the multiply-add superinstructions: ops of this table computed
by one stencil, each rounded as its own op; gen_stencils.py makes their stencils and
gen_optable.py the Rust `Fused` enum the scheduler picks them by.
"""
from typing import NamedTuple


class Op(NamedTuple):
    """One operation of the table (see the module docstring for the fields)."""

    name: str
    rust: str
    arity: int
    types: str
    flags: str
    python: str
    doc: str


OPS = [
    # binary arithmetic
    Op("add", "Add", 2, "f>f i>i", "commutative differentiable array", "+", "`a + b` (int wraps)."),
    Op("sub", "Sub", 2, "f>f i>i", "differentiable array", "-", "`a - b` (int wraps)."),
    Op("mul", "Mul", 2, "f>f i>i", "commutative differentiable array", "*", "`a * b` (int wraps)."),
    Op("div", "Div", 2, "f>f", "differentiable array", "/", "`a / b`, always float."),
    Op("floordiv", "FloorDiv", 2, "f>f i>i", "array", "//",
       "NumPy `floor_divide`; int `x // 0 == 0`."),
    Op("mod", "Mod", 2, "f>f i>i", "differentiable array", "%",
       "NumPy `remainder` (sign of the divisor); int `x % 0 == 0`."),
    Op("and", "And", 2, "i>i", "commutative array keepsbool", "&", "Bitwise and."),
    Op("or", "Or", 2, "i>i", "commutative array keepsbool", "|", "Bitwise or."),
    Op("xor", "Xor", 2, "i>i", "commutative array keepsbool", "^", "Bitwise xor."),
    Op("shl", "Shl", 2, "i>i", "array", "<<", "Shift left; counts outside 0..31 give 0."),
    Op("shr", "Shr", 2, "i>i", "array", ">>",
       "Arithmetic shift right; counts outside 0..31 give 0 or -1 by sign."),
    Op("atan2", "Atan2", 2, "f>f", "differentiable array approx", "cp.atan2",
       "`atan2(left, right)`, C argument order."),
    Op("pow", "Pow", 2, "f>f", "differentiable array approx intpower", "cp.pow", "C99 `powf`."),
    # comparisons: 0 or 1, NaN compares false except in ne
    Op("lt", "Lt", 2, "f>i i>i", "comparison array", "<", "`a < b`."),
    Op("le", "Le", 2, "f>i i>i", "comparison array", "<=", "`a <= b`."),
    Op("gt", "Gt", 2, "f>i i>i", "comparison array", ">", "`a > b`."),
    Op("ge", "Ge", 2, "f>i i>i", "comparison array", ">=", "`a >= b`."),
    Op("eq", "Eq", 2, "f>i i>i", "commutative comparison array", "==", "`a == b`."),
    Op("ne", "Ne", 2, "f>i i>i", "commutative comparison array", "!=", "`a != b`."),
    Op("min", "Min", 2, "f>f i>i", "differentiable array keepsbool", "cp.minimum",
       "NumPy `minimum`: NaN in either operand propagates."),
    Op("max", "Max", 2, "f>f i>i", "differentiable array keepsbool", "cp.maximum",
       "NumPy `maximum`: NaN in either operand propagates."),
    # unary
    Op("neg", "Neg", 1, "f>f i>i", "differentiable array", "-", "`-a` (sign flip; int wraps)."),
    Op("abs", "Abs", 1, "f>f i>i", "differentiable array", "abs", "`abs(a)` (int wraps)."),
    Op("sqrt", "Sqrt", 1, "f>f", "differentiable array", "cp.sqrt", "IEEE square root."),
    Op("sin", "Sin", 1, "f>f", "differentiable array approx", "cp.sin", "Our float32 sine."),
    Op("cos", "Cos", 1, "f>f", "differentiable array approx", "cp.cos", "Our float32 cosine."),
    Op("tan", "Tan", 1, "f>f", "differentiable array approx", "cp.tan", "Our float32 tangent."),
    Op("asin", "Asin", 1, "f>f", "differentiable array approx", "cp.asin", "Our float32 arc sine."),
    Op("acos", "Acos", 1, "f>f", "differentiable array approx", "cp.acos", "Our float32 arc cosine."),
    Op("atan", "Atan", 1, "f>f", "differentiable array approx", "cp.atan", "Our float32 arc tangent."),
    Op("exp", "Exp", 1, "f>f", "differentiable array approx", "cp.exp", "Our float32 `exp`."),
    Op("log", "Log", 1, "f>f", "differentiable array approx", "cp.log", "Our float32 natural logarithm."),
    Op("tanh", "Tanh", 1, "f>f", "differentiable array approx", "cp.tanh",
       "Our float32 hyperbolic tangent."),
    Op("sigmoid", "Sigmoid", 1, "f>f", "differentiable array approx", "cp.sigmoid",
       "Logistic `1 / (1 + exp(-a))`, one stencil (saturates to 0 and 1)."),
    Op("copy", "", 1, "f>f i>i", "", "", "Load or move (stencil only)."),
    Op("itof", "IntToFloat", 1, "i>f", "array", "cp.to_float", "int32 to float32, round to nearest."),
    # casts: the same result on every target (docs/math.md, "Casts")
    Op("ftoi", "FloatToInt", 1, "f>i", "array", "cp.to_int",
       "float32 to int32 toward 0; NaN gives 0, out of range saturates."),
    Op("tobyte", "ToByte", 1, "f>i i>i", "array", "cp.to_bytes",
       "To 0..255, saturating (floats toward 0, NaN gives 0)."),
]


class Fused(NamedTuple):
    """One multiply-add superinstruction: float ops of the table above computed by one
    stencil, each rounded as its own op (the C is those ops' op_*_f functions and the
    stencils are built with -ffp-contract=off, so no target fuses a multiply-add; build.py
    rejects a fused multiply-add instruction). The scheduler runs one where a float add or
    sub reads products nothing else reads (crates/copapy-compiler/src/muladd.rs): the
    products never occupy a register, so the other one keeps a live value.

    Fields: name (`st_<name>_f_<places>_<dst>`), rust (its variant of the generated
    `Fused` enum), operands (their letters in the name's order), expr (the result over
    them: op-table ops in prefix form), forms (the operand places that have stencils,
    each for dst r0 and r1; a memory operand k is the data slot of hole cp_a<k>), doc."""

    name: str
    rust: str
    operands: str
    expr: str
    forms: str
    doc: str


FUSED = [
    Fused("mul2add", "Mul2Add", "pqrs", "add(mul(p, q), mul(r, s))",
          "mmmm r0mmm r1mmm r0mr1m", "`p*q + r*s`."),
    Fused("mul2sub", "Mul2Sub", "pqrs", "sub(mul(p, q), mul(r, s))",
          "mmmm r0mmm r1mmm mmr0m mmr1m", "`p*q - r*s`."),
    Fused("addmul", "AddMul", "tpq", "add(t, mul(p, q))",
          "mmm r0mm r1mm mr0m mr1m r0r1m r1r0m", "`t + p*q` (an accumulated dot product)."),
    Fused("submul", "SubMul", "tpq", "sub(t, mul(p, q))",
          "mmm r0mm r1mm mr0m mr1m", "`t - p*q`."),
    Fused("mulsub", "MulSub", "pqt", "sub(mul(p, q), t)",
          "mmm mmr0 mmr1 r0mm r1mm", "`p*q - t`."),
]
FUSED_BY_NAME = {f.name: f for f in FUSED}
assert len(FUSED_BY_NAME) == len(FUSED), "duplicate fused names"
assert not set(FUSED_BY_NAME) & {op.name for op in OPS}, "a fused name is an op name"

BY_NAME = {op.name: op for op in OPS}
assert len(BY_NAME) == len(OPS), "duplicate op names"


def signatures(op: Op) -> list[tuple[str, str]]:
    """The (operand type, result type) pairs of an op's stencils."""
    return [tuple(s.split(">")) for s in op.types.split()]  # type: ignore[misc]


def has(op: Op, flag: str) -> bool:
    """Whether the op carries `flag`."""
    return flag in op.flags.split()


# Stencil groups in the order of generated/stencils.c: (operand type, result type).
BINARY_GROUPS = (("f", "f"), ("f", "i"), ("i", "i"))
UNARY_GROUPS = (("f", "f"), ("i", "i"), ("i", "f"), ("f", "i"))


def grouped(arity: int, array_only: bool = False) -> dict[tuple[str, str], str]:
    """{(operand type, result type): "op op ..."} of the stencils with `arity` operands,
    in the table's order (the shape gen_stencils and gen_arrays iterate over)."""
    groups = BINARY_GROUPS if arity == 2 else UNARY_GROUPS
    out = {}
    for g in groups:
        names = [op.name for op in OPS
                 if op.arity == arity and g in signatures(op)
                 and (has(op, "array") or not array_only)]
        if names:
            out[g] = " ".join(names)
    return out
