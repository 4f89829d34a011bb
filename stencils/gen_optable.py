#!/usr/bin/env python3
"""Write the Rust op enum and the Python op lists from the op table (optable.py).

    crates/copapy-compiler/src/ops_generated.rs   enum Op, stencil names, flags, op lists
    python/copapy/_optable.py                      the same lists for Python code and tests,
                                                   and the op-name Literal types of _core.pyi

Both files are checked in, so a reviewer sees what an op table change does, and the
Rust crate builds without Python. The C stencils come from the same table through
gen_stencils.py.

Usage: gen_optable.py [--check]
  (no option)  write both files
  --check      exit 1 if either differs from what the table gives
Plain Python 3.11, no dependencies.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import optable  # noqa: E402

ROOT = os.path.dirname(HERE)
RUST_OUT = os.path.join(ROOT, "crates", "copapy-compiler", "src", "ops_generated.rs")
PY_OUT = os.path.join(ROOT, "python", "copapy", "_optable.py")

# ops with a Rust variant, in table order
RUST_OPS = [op for op in optable.OPS if op.rust]

# Python's name for each operator symbol (its dunder without underscores, and the
# `operator` module's function): the language's fact, keyed by (symbol, arity)
_DUNDER = {
    ("+", 2): "add", ("-", 2): "sub", ("*", 2): "mul", ("/", 2): "truediv",
    ("//", 2): "floordiv", ("%", 2): "mod", ("&", 2): "and", ("|", 2): "or", ("^", 2): "xor",
    ("<<", 2): "lshift", (">>", 2): "rshift", ("<", 2): "lt", ("<=", 2): "le", (">", 2): "gt",
    (">=", 2): "ge", ("==", 2): "eq", ("!=", 2): "ne", ("-", 1): "neg", ("abs", 1): "abs",
}


def operators(arity):
    """{Python operator name ('truediv'): op name ('div')} of the ops with `arity`
    operands spelled by operators."""
    return {_DUNDER[(op.python, op.arity)]: op.name for op in RUST_OPS
            if op.arity == arity and (op.python, op.arity) in _DUNDER}


def functions():
    """{cp function name ('minimum'): op name ('min')} of the ops spelled cp.<function>."""
    return {op.python[3:]: op.name for op in RUST_OPS if op.python.startswith("cp.")}


def math_binary():
    """The binary ops spelled as cp functions (atan2, pow, minimum, maximum)."""
    return [op for op in RUST_OPS if op.arity == 2 and op.python.startswith("cp.")]


def _types(op, t):
    return any(a == t for a, _ in optable.signatures(op))


# the flag functions of Op: (doc, name, predicate); bit k of Op::flags() is FLAGS[k]
FLAGS = [
    ("`a op b == b op a` for every input, so operands may be swapped freely.",
     "is_commutative", lambda op: optable.has(op, "commutative")),
    ("The result is a bool (0 or 1).", "is_comparison", lambda op: optable.has(op, "comparison")),
    ("A gradient flows into the float operands.", "is_differentiable",
     lambda op: optable.has(op, "differentiable")),
    ("There are element-wise array stencils (`st_arr_<name>_<ty>_...`).",
     "has_array_stencils", lambda op: optable.has(op, "array")),
    ("There are stencils for float operands (`st_<name>_f_...`).", "takes_float",
     lambda op: _types(op, "f")),
    ("There are stencils for int/bool operands (`st_<name>_i_...`).", "takes_int",
     lambda op: _types(op, "i")),
    ("Two bool operands give a bool (other int and bool operands an int).", "keeps_bool",
     lambda op: optable.has(op, "keepsbool")),
    ("An integer constant right operand becomes multiplications (an int left operand gives "
     "an int).", "has_int_power", lambda op: optable.has(op, "intpower")),
]


def _flag_fns():
    """`Op::flags()`, one bit per flag, and one function per flag reading its bit."""
    def bits(op):
        return sum(1 << k for k, (_, _, pred) in enumerate(FLAGS) if pred(op))
    arms = "".join(f"            Op::{op.rust} => {bits(op):#010b},\n" for op in RUST_OPS)
    names = ", ".join(name for _, name, _ in FLAGS)
    out = ("    /// The op's flags, bit k for the k-th of: " + names + ".\n"
           "    const fn flags(self) -> u8 {\n"
           f"        match self {{\n{arms}        }}\n    }}\n")
    for k, (doc, name, _) in enumerate(FLAGS):
        out += (f"\n    /// {doc}\n"
                f"    pub const fn {name}(self) -> bool {{\n"
                f"        self.flags() & (1 << {k}) != 0\n    }}\n")
    return out


def _op_list(doc, name, ops):
    items = "".join(f"        Op::{op.rust},\n" for op in ops)
    return f"    /// {doc}\n    pub const {name}: [Op; {len(ops)}] = [\n{items}    ];\n"


def rust():
    """The text of ops_generated.rs."""
    variants = "".join(f"    /// {op.doc}\n    {op.rust},\n" for op in RUST_OPS)
    names = "".join(f"            Op::{op.rust} => \"{op.name}\",\n" for op in RUST_OPS)
    from_names = "".join(f"            \"{op.name}\" => Some(Op::{op.rust}),\n" for op in RUST_OPS)
    spellings = "".join(f"            Op::{op.rust} => \"{op.python}\",\n" for op in RUST_OPS)
    function_names = "".join(
        f"            Op::{op.rust} => Some(\"{op.python[3:]}\"),\n"
        for op in RUST_OPS if op.python.startswith("cp."))

    return (
        "// GENERATED by stencils/gen_optable.py from stencils/optable.py: do not edit.\n"
        "//! The scalar operations, generated from the one op table (`stencils/optable.py`),\n"
        "//! which the C stencils and the Python op lists come from too.\n"
        "\n"
        "/// Operations on scalars. The operand and result types of each are decided by\n"
        "/// [`crate::trace`]; their semantics are `op_<name>_<type>` in `stencils/ops.h` and\n"
        "/// [`crate::fold`] on the host.\n"
        "#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]\n"
        f"pub enum Op {{\n{variants}}}\n"
        "\n"
        "impl Op {\n"
        "    /// Name used in stencil symbols (`st_<name>_...`).\n"
        "    pub const fn stencil_name(self) -> &'static str {\n"
        f"        match self {{\n{names}        }}\n    }}\n"
        "\n"
        "    /// The operation whose stencil name is `name`.\n"
        "    pub fn from_name(name: &str) -> Option<Op> {\n"
        f"        match name {{\n{from_names}            _ => None,\n        }}\n    }}\n"
        "\n"
        "    /// How Python code spells the operation: an operator (`\"<<\"`) or `cp.<function>`.\n"
        "    pub const fn python(self) -> &'static str {\n"
        f"        match self {{\n{spellings}        }}\n    }}\n"
        "\n"
        "    /// The `cp.<function>` name Python code calls the operation by (`\"minimum\"` for\n"
        "    /// [`Op::Min`]), `None` for an operator.\n"
        "    pub const fn function_name(self) -> Option<&'static str> {\n"
        f"        match self {{\n{function_names}            _ => None,\n        }}\n    }}\n"
        "\n"
        + _flag_fns()
        + "\n"
        + _op_list("The binary operations Python calls as `cp.<function>` (`_core.math_binary`).",
                   "MATH_BINARY", math_binary())
        + "\n"
        + _op_list("Every binary operation, in the table's order (used to build stencil tables).",
                   "BINARY", [op for op in RUST_OPS if op.arity == 2])
        + "\n"
        + _op_list("Every unary operation, in the table's order.",
                   "UNARY", [op for op in RUST_OPS if op.arity == 1])
        + "}\n"
        + _fused()
    )


def _fused():
    """The multiply-add superinstructions (optable.FUSED) as the Rust `Fused` enum."""
    fused = optable.FUSED
    variants = "".join(f"    /// {f.doc}\n    {f.rust},\n" for f in fused)
    names = "".join(f"            Fused::{f.rust} => \"{f.name}\",\n" for f in fused)
    arity = "".join(f"            Fused::{f.rust} => {len(f.operands)},\n" for f in fused)
    items = "".join(f"        Fused::{f.rust},\n" for f in fused)
    return (
        "\n"
        "/// The multiply-add superinstructions (`stencils/optable.py` `FUSED`): float ops\n"
        "/// computed by one stencil `st_<name>_f_<places>_<dst>`, each rounded as its own op\n"
        "/// (chosen by the compiler's `muladd` module).\n"
        "#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]\n"
        f"pub enum Fused {{\n{variants}}}\n"
        "\n"
        "impl Fused {\n"
        "    /// Name used in stencil symbols (`st_<name>_f_...`).\n"
        "    pub const fn stencil_name(self) -> &'static str {\n"
        f"        match self {{\n{names}        }}\n    }}\n"
        "\n"
        "    /// How many operands the stencil reads (places in its name).\n"
        "    pub const fn arity(self) -> usize {\n"
        f"        match self {{\n{arity}        }}\n    }}\n"
        "\n"
        "    /// Every superinstruction, in the table's order.\n"
        f"    pub const ALL: [Fused; {len(fused)}] = [\n{items}    ];\n"
        "}\n"
    )


def _py_tuple(names):
    return "(" + "".join(f'\n    "{n}",' for n in names) + "\n)" if names else "()"


def _py_literal(names):
    return "Literal[" + "".join(f'\n    "{n}",' for n in names) + "\n]"


def python():
    """The text of python/copapy/_optable.py."""
    ops = RUST_OPS

    def names(pred):
        return _py_tuple([op.name for op in ops if pred(op)])

    def sig(op):
        pairs = ", ".join(f'("{a}", "{r}")' for a, r in optable.signatures(op))
        comma = "," if len(optable.signatures(op)) == 1 else ""
        return f'    "{op.name}": ({pairs}{comma}),\n'

    sigs = "".join(sig(op) for op in ops)
    spelled = "".join(f'    "{op.name}": "{op.python}",\n' for op in ops)
    docs = "".join(f"    {op.name!r}: {op.doc!r},\n" for op in ops)
    binary = [op.name for op in ops if op.arity == 2]
    unary = [op.name for op in ops if op.arity == 1]

    def dict_lines(d):
        return "".join(f'    "{k}": "{v}",\n' for k, v in d.items())
    return (
        '"""The scalar operations of copapy: generated from stencils/optable.py by\n'
        "stencils/gen_optable.py, do not edit. Names are the stencil names ('add', 'lt',\n"
        "'itof'); the Rust core takes them in `array_binary` / `array_unary`.\n"
        '"""\n'
        "\n"
        "from typing import Literal, TypeGuard\n"
        "\n"
        "# the op names the Rust core's array_binary / array_unary take (_core.pyi)\n"
        f"BinaryOp = {_py_literal(binary)}\n"
        f"UnaryOp = {_py_literal(unary)}\n"
        "# the binary ops Python calls as cp.<function>, which _core.math_binary takes\n"
        f"MathBinaryOp = {_py_literal([op.name for op in math_binary()])}\n"
        "\n"
        f"BINARY: tuple[BinaryOp, ...] = {_py_tuple(binary)}\n"
        f"UNARY: tuple[UnaryOp, ...] = {_py_tuple(unary)}\n"
        f"COMMUTATIVE: tuple[str, ...] = {names(lambda op: optable.has(op, 'commutative'))}\n"
        f"COMPARISON: tuple[str, ...] = {names(lambda op: optable.has(op, 'comparison'))}\n"
        f"DIFFERENTIABLE: tuple[str, ...] = {names(lambda op: optable.has(op, 'differentiable'))}\n"
        f"ARRAY: tuple[str, ...] = {names(lambda op: optable.has(op, 'array'))}\n"
        f"MATH_BINARY: tuple[MathBinaryOp, ...] = {_py_tuple([op.name for op in math_binary()])}\n"
        "# an integer constant right operand becomes multiplications (int stays int)\n"
        f"INT_POWER: tuple[str, ...] = {names(lambda op: optable.has(op, 'intpower'))}\n"
        "# our own float32 math: within a few ulp of NumPy, not bit-identical to it\n"
        f"APPROXIMATE: tuple[str, ...] = {names(lambda op: optable.has(op, 'approx'))}\n"
        "\n"
        "\n"
        "def is_binary(name: str) -> TypeGuard[BinaryOp]:\n"
        '    """Whether ``name`` is a binary op of the table."""\n'
        "    return name in BINARY\n"
        "\n"
        "\n"
        "def is_unary(name: str) -> TypeGuard[UnaryOp]:\n"
        '    """Whether ``name`` is a unary op of the table."""\n'
        "    return name in UNARY\n"
        "\n"
        "\n"
        "def is_math_binary(name: str) -> TypeGuard[MathBinaryOp]:\n"
        '    """Whether ``name`` is a binary op Python calls as a cp function."""\n'
        "    return name in MATH_BINARY\n"
        "\n"
        "\n"
        "# the one op vocabulary: Python's operator names ('truediv', the dunder without\n"
        "# underscores) and cp function names ('minimum') -> op names ('div', 'min')\n"
        f"BINARY_OPERATORS: dict[str, BinaryOp] = {{\n{dict_lines(operators(2))}}}\n"
        f"UNARY_OPERATORS: dict[str, UnaryOp] = {{\n{dict_lines(operators(1))}}}\n"
        f"FUNCTIONS: dict[str, str] = {{\n{dict_lines(functions())}}}\n"
        "\n"
        "# (operand type, result type) of each op's stencils: 'f' float32, 'i' int32/bool\n"
        f"SIGNATURES: dict[str, tuple[tuple[str, str], ...]] = {{\n{sigs}}}\n"
        "\n"
        "# how Python code spells each op (an operator, or a cp. function)\n"
        f"PYTHON: dict[str, str] = {{\n{spelled}}}\n"
        "\n"
        "# one line on what each op computes\n"
        f"DOC: dict[str, str] = {{\n{docs}}}\n"
    )


OUTPUTS = ((RUST_OUT, rust), (PY_OUT, python))


def main(argv):
    stale = []
    for path, make in OUTPUTS:
        text = make()
        try:
            old = open(path, encoding="utf-8").read()
        except FileNotFoundError:
            old = None
        if old == text:
            continue
        if "--check" in argv:
            stale.append(os.path.relpath(path, ROOT))
        else:
            with open(path, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
            print(f"wrote {os.path.relpath(path, ROOT)}")
    if stale:
        print(f"out of date with stencils/optable.py: {', '.join(stale)}; "
              "run python3 stencils/gen_optable.py", file=sys.stderr)
        return 1
    if "--check" in argv:
        print(f"op table: generated files up to date ({len(optable.OPS)} ops)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
