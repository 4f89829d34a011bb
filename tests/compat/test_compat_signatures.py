"""Compatibility: every public function and method takes Copapy's parameter names, so
keyword calls written for Copapy mean the same thing here.

``COPAPY`` is a table derived by reading Copapy's source: release 0.0.7 (PyPI) and the
newest code on github (Nonannet/copapy). Each entry lists Copapy's parameters in order
(``name=`` has a default, ``*name`` collects positional arguments). Our signature must
start with the same parameters, of the same kinds, in the same order; parameters of ours
beyond them must be optional. The table is also checked against the installed 0.0.7
release itself (``tests/copapy_reference.py``), and keyword calls are run under both.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from typing import Any, get_type_hints

import copapy as cp
import numpy as np
import pytest
from copapy import filters
from copapy_reference import run_reference

COPAPY: dict[str, list[str]] = {
    # functions (copapy/_math.py, _basic_types.py, _nn.py, _autograd.py, _target.py)
    "sqrt": ["x"], "abs": ["x"], "sign": ["x"], "sin": ["x"], "cos": ["x"], "tan": ["x"],
    "asin": ["x"], "acos": ["x"], "atan": ["x"], "log": ["x"], "exp": ["x"],
    "atan2": ["x", "y"], "pow": ["x", "y"], "minimum": ["x", "y"], "maximum": ["x", "y"],
    "min": ["x", "y"], "max": ["x", "y"],  # 0.0.7: element-wise; newest: min(x) reduces
    "clamp": ["x", "min_value", "max_value"],
    "iif": ["expression", "true_result", "false_result"],
    "relu": ["x"], "sigmoid": ["x"], "grad": ["x", "y"], "jit": ["func"],
    # vectors and tensors (copapy/_vectors.py, _tensors.py)
    "distance": ["v1", "v2"], "scalar_projection": ["v1", "v2"], "angle_between": ["v1", "v2"],
    "vector_projection": ["v1", "v2"], "rotate_vector": ["v", "axis", "angle"],
    "zeros": ["shape"], "ones": ["shape"], "arange": ["start", "stop=", "step="],
    "eye": ["rows", "cols="], "identity": ["size"], "diagonal": ["vec"],
    "concat": ["tensors", "axis="],
    # newest API (copapy/_sorting.py, nn.py, _math.py)
    "sort": ["input_vector"], "argsort": ["input_vector"], "tanh": ["x"],
    "nn.relu": ["x"], "nn.sigmoid": ["x"], "nn.tanh": ["x"],
    "nn.softmax": ["x"], "nn.linear": ["x", "weight", "bias="],
    "nn.conv1d": ["x", "weight", "bias=", "stride=", "padding=", "dilation="],
    "nn.conv2d": ["x", "weight", "bias=", "stride=", "padding=", "dilation="],
    "nn.max_pool1d": ["x", "kernel_size", "stride=", "padding="],
    "nn.max_pool2d": ["x", "kernel_size", "stride=", "padding="],
    "nn.avg_pool1d": ["x", "kernel_size", "stride=", "padding="],
    "nn.avg_pool2d": ["x", "kernel_size", "stride=", "padding="],
    "nn.global_avg_pool2d": ["x"],
    # arrays (copapy/_arrays.py of the newest code)
    "array": ["values", "dtype="], "array.element": ["flat_index"], "array.get_values": ["data"],
    "array.flatten_data": ["data"], "array.reshape": ["*shape"], "array.flatten": [],
    "array.transpose": ["*axes"], "array.broadcast_to": ["shape"], "array.sum": [],
    "array.min": [], "array.max": [], "array.sort": [], "array.argsort": [], "array.dot": ["other"],
    "array.matmul": ["other"],
    # copapy/filters.py
    "filters.argsort": ["input_vector"], "filters.median": ["input_vector"],
    "filters.mean": ["input_vector"], "filters.homogenize_vector": ["input_values"],
    "filters.convolve": ["a", "v", "mode="],
    # copapy/_interp.py of the newest code
    "interp": ["x", "xp", "fp", "method="],
    # classes: the constructor, then methods
    "Target": ["arch=", "optimization="],
    "Target.compile": ["*values"], "Target.run": [], "Target.read_value": ["variables"],
    "Target.write_value": ["variables", "data"],
    "value": ["source", "dtype="],
    "vector": ["values"], "vector.get_scalar": ["index"], "vector.dot": ["other"],
    "vector.cross": ["other"], "vector.sum": [], "vector.magnitude": [], "vector.normalize": [],
    "vector.homogenize": [], "vector.map": ["func"],
    "tensor": ["values", "shape="], "matrix": ["values", "shape="],
    "tensor.get_scalar": ["*key"], "tensor.reshape": ["*new_shape"], "tensor.transpose": ["*axes"],
    "tensor.flatten": [], "tensor.size": [], "tensor.matmul": ["other"], "tensor.trace": [],
    "tensor.sum": ["axis=", "keepdims="], "tensor.mean": ["axis="], "tensor.map": ["func"],
    "tensor.homogenize": [],
    "quaternion": ["w=", "x=", "y=", "z="], "quaternion.from_euler": ["roll", "pitch", "yaw"],
    "quaternion.identity": [], "quaternion.normalize": [], "quaternion.toRotationMatrix": [],
    "quaternion.toEulerAngles": [], "quaternion.toAxisAngle": [], "quaternion.conjugate": [],
    "quaternion.inverse": [], "quaternion.norm": [], "quaternion.rotate_vector": ["vec"],
    "quaternion.map": ["func"],
}
"""Copapy's parameters of each public name (``self`` and ``cls`` left out)."""

NOT_PROVIDED = {
    "generic_sdb": "Copapy's stencil database object: a copapy.backend internal",
    "get_42": "a test helper of Copapy's stencil build, not a math function",
}
"""Public names of Copapy 0.0.7 we deliberately do not provide (README: Differences)."""


REAL_TARGET = cp.Target  # tests/conftest.py may stand a foreign-target factory in for it


def resolve(name: str) -> Any:
    obj: Any = cp
    for part in name.split("."):
        obj = REAL_TARGET if obj is cp and part == "Target" else getattr(obj, part)
    if isinstance(obj, property):  # a property whose value Copapy calls (``tensor.size()``)
        return get_type_hints(obj.fget)["return"].__call__
    return obj


def params(sig: inspect.Signature) -> list[inspect.Parameter]:
    ps = list(sig.parameters.values())
    if ps and ps[0].name in ("self", "cls"):
        ps = ps[1:]
    return ps


def describe(p: inspect.Parameter) -> str:
    if p.kind is p.VAR_POSITIONAL:
        return "*" + p.name
    if p.kind is p.VAR_KEYWORD:
        return "**" + p.name
    return p.name + ("=" if p.default is not p.empty else "")


def mismatch(theirs: list[str], ours: inspect.Signature) -> str | None:
    """Why a call written for ``theirs`` would not mean the same with ``ours`` (None: it does)."""
    mine = params(ours)
    for i, t in enumerate(theirs):
        if i >= len(mine):
            return f"missing parameter {t!r}"
        p = mine[i]
        if t.startswith("*"):
            if p.kind is not p.VAR_POSITIONAL:
                return f"parameter {i} is {describe(p)!r}, Copapy collects {t!r}"
            continue
        if p.name != t.rstrip("=") or p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            return f"parameter {i} is {describe(p)!r}, Copapy's is {t!r}"
        if t.endswith("=") and p.default is p.empty:
            return f"parameter {p.name!r} is required here, optional in Copapy"
    for p in mine[len(theirs):]:
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.default is p.empty:
            return f"extra required parameter {p.name!r}"
    return None


OUR_FORM = {"concat": ["tensors", "*more", "axis="]}
"""Where ours differs in form and still takes every Copapy call (tested below): ``concat``
also takes separate pieces, and a second positional argument after a list of pieces is the
axis, as Copapy's ``concat(tensors, axis)``."""


@pytest.mark.parametrize("name", sorted(COPAPY))
def test_signature_takes_copapys_parameter_names(name: str) -> None:
    why = mismatch(OUR_FORM.get(name, COPAPY[name]), inspect.signature(resolve(name)))
    assert why is None, f"cp.{name}: {why}"


def test_the_check_catches_a_renamed_parameter() -> None:
    def atan2(y: float, x: float) -> float:
        return math.atan2(y, x)

    def clamp(x: float, lo: float, hi: float) -> float:
        return x

    def extra(x: float, y: float, z: float) -> float:
        return x

    assert mismatch(["x", "y"], inspect.signature(atan2)) is not None
    assert mismatch(["x", "min_value", "max_value"], inspect.signature(clamp)) is not None
    assert mismatch(["x", "y"], inspect.signature(extra)) == "extra required parameter 'z'"
    assert mismatch(["*key"], inspect.signature(clamp)) is not None


DUMP_SCRIPT = """
import inspect, json, copapy as cp
from copapy import filters
def sig(o):
    ps = list(inspect.signature(o).parameters.values())
    if ps and ps[0].name in ('self', 'cls'):
        ps = ps[1:]
    out = []
    for p in ps:
        if p.kind is p.VAR_POSITIONAL:
            out.append('*' + p.name)
        elif p.kind is not p.VAR_KEYWORD:
            out.append(p.name + ('=' if p.default is not p.empty else ''))
    return out
res = {}
for name in cp.__all__:
    o = getattr(cp, name)
    if inspect.isclass(o):
        res[name] = sig(o)
        for m, f in vars(o).items():
            if not m.startswith('_') and (inspect.isfunction(f) or isinstance(f, classmethod)):
                res[name + '.' + m] = sig(getattr(o, m))
    elif callable(o):
        res[name] = sig(o)
for name in ('argsort', 'median', 'mean', 'homogenize_vector'):
    res['filters.' + name] = sig(getattr(filters, name))
print(json.dumps(res))
"""


def test_table_agrees_with_the_installed_copapy_release() -> None:
    """Every callable name of Copapy 0.0.7 is in the table with the release's parameters,
    or deliberately not provided; so the table cannot drift from the release."""
    theirs: dict[str, list[str]] = run_reference(DUMP_SCRIPT)
    internal = {"Target.read_value_remote"}  # remote targets: Copapy's backend protocol
    for name, ps in theirs.items():
        name = name.replace("matrix.", "tensor.")  # cp.matrix is cp.tensor in both
        if name in NOT_PROVIDED or name in internal:
            continue
        assert name in COPAPY, f"cp.{name} of Copapy 0.0.7 is missing from the table"
        assert COPAPY[name] == ps, f"cp.{name}: table {COPAPY[name]} != Copapy 0.0.7 {ps}"
    for name in NOT_PROVIDED:
        assert not hasattr(cp, name)


# ---------------------------------------------------------------------------------------------
# Keyword calls compute what they compute in Copapy 0.0.7

KEYWORD_SCRIPT = """
import json, copapy as cp
a, b = cp.value(0.5), cp.value(2.0)
t = cp.atan2(x=a, y=b)
c = cp.clamp(x=a * 3, min_value=b * 0.1, max_value=b * 0.6)
s = cp.iif(expression=a > b, true_result=a, false_result=b * 3)
d = cp.grad(x=a * a * b, y=[a, b])
p = cp.pow(x=b, y=a)
m = cp.min(x=a, y=b), cp.max(x=a, y=b)
tg = cp.Target(arch='native', optimization='O3')
tg.compile(t, c, s, d, p, m)
tg.run()
out = [tg.read_value(variables=v) for v in (t, c, s, p, *d, *m)]
tg.write_value(variables=a, data=3.0)
tg.run()
out += [tg.read_value(variables=v) for v in (t, c, s, p, *d, *m)]
print(json.dumps(out))
"""


def our_keyword_program() -> list[float]:
    a, b = cp.value(0.5), cp.value(2.0)
    t = cp.atan2(x=a, y=b)
    c = cp.clamp(x=a * 3, min_value=b * 0.1, max_value=b * 0.6)
    s = cp.iif(expression=a > b, true_result=a, false_result=b * 3)
    d = cp.grad(x=a * a * b, y=[a, b])
    p = cp.pow(x=b, y=a)
    m = cp.min(x=a, y=b), cp.max(x=a, y=b)
    tg = cp.Target(arch="native", optimization="O3")
    tg.compile(t, c, s, d, p, m)
    tg.run()
    out = [tg.read_value(variables=v) for v in (t, c, s, p, *d, *m)]
    tg.write_value(variables=a, data=3.0)
    tg.run()
    return out + [tg.read_value(variables=v) for v in (t, c, s, p, *d, *m)]


def numpy_reference(a: float, b: float) -> list[float]:
    f = np.float32
    a32, b32 = f(a), f(b)
    return [
        float(f(np.arctan2(np.float64(a32), np.float64(b32)))),  # math.atan2(x, y): x first
        float(np.clip(a32 * f(3), b32 * f(0.1), b32 * f(0.6))),
        float(a32 if a32 > b32 else b32 * f(3)),
        float(f(np.power(np.float64(b32), np.float64(a32)))),
        float(f(2) * a32 * b32), float(a32 * a32),  # d(a*a*b)/da, d/db
        float(min(a32, b32)), float(max(a32, b32)),
    ]


def test_keyword_calls_mean_what_they_mean_in_copapy() -> None:
    theirs = run_reference(KEYWORD_SCRIPT)
    ours = our_keyword_program()
    want = numpy_reference(0.5, 2.0) + numpy_reference(3.0, 2.0)
    # our results are NumPy's float32 results (within 1 ulp for the math functions)
    for i, (o, w) in enumerate(zip(ours, want, strict=True)):
        assert o == pytest.approx(w, rel=1.2e-7, abs=0), i
    # Copapy computes the same things: a keyword mixed up would be far off
    for i, (o, t) in enumerate(zip(ours, theirs, strict=True)):
        assert o == pytest.approx(t, rel=1e-5), i


def test_grad_keywords_name_the_output_x_and_the_variables_y() -> None:
    u, v = cp.value(1.5), cp.value(-0.5)
    by_keyword = cp.grad(y=[u, v], x=u * v)
    tg = cp.Target()
    tg.compile(by_keyword)
    tg.run()
    assert tg.read_value(by_keyword) == [-0.5, 1.5]


def test_concat_takes_copapys_calls_and_our_separate_pieces() -> None:
    pieces = [cp.vector([1, 2]), cp.vector([3])]
    assert cp.concat(tensors=pieces).values == cp.concat(*pieces).values == (1, 2, 3)
    m1, m2 = [[1, 2], [3, 4]], [[5], [6]]
    want = np.concatenate([m1, m2], 1).tolist()
    assert cp.concat([cp.tensor(m1), cp.tensor(m2)], 1).tolist() == want  # Copapy: positional axis
    assert cp.concat(tensors=(cp.tensor(m1), cp.tensor(m2)), axis=1).tolist() == want
    assert cp.concat(cp.tensor(m1), cp.tensor(m2), axis=1).tolist() == want
    assert cp.concat([1.0, 2.0], cp.vector([3.0])).values == (1.0, 2.0, 3.0)  # a list as a piece


def test_every_table_name_is_a_public_name() -> None:
    for name in COPAPY:
        head = name.split(".")[0]
        assert head in cp.__all__ or head in ("filters", "nn"), name
    assert all(callable(resolve(n)) for n in COPAPY)
    assert isinstance(filters.sort, Callable)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# The Rust extension takes the same names, and its type stubs say so


CORE = {
    "iif": ["expression", "true_result", "false_result"], "grad": ["x", "y"], "sign": ["x"],
    # the math functions made from the op table in _math.py share one entry point per
    # arity, the op's table name first: cp.sqrt ... cp.tanh, and cp.atan2, cp.pow,
    # cp.minimum, cp.maximum (whose own parameters are Copapy's x, y)
    "math_unary": ["op", "x"], "math_binary": ["op", "x", "y"],
}


@pytest.mark.parametrize("name", sorted(CORE))
def test_rust_functions_take_copapys_names(name: str) -> None:
    assert mismatch(CORE[name], inspect.signature(getattr(cp._core, name))) is None


def stub_signatures() -> dict[str, list[str]]:
    """Parameter names of every function and ``Target`` method in ``_core.pyi``."""
    import ast
    from pathlib import Path

    tree = ast.parse((Path(cp.__file__).parent / "_core.pyi").read_text())
    out: dict[str, list[str]] = {}

    def names(fn: ast.FunctionDef) -> list[str]:
        a = fn.args
        ps = [p.arg for p in a.posonlyargs + a.args if p.arg not in ("self", "cls")]
        return ps + (["*" + a.vararg.arg] if a.vararg else []) + [p.arg for p in a.kwonlyargs]

    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            out[node.name] = names(node)
        elif isinstance(node, ast.ClassDef) and node.name == "Target":
            for fn in node.body:
                if isinstance(fn, ast.FunctionDef) and not fn.name.startswith("__"):
                    out["Target." + fn.name] = names(fn)  # overloads agree: the last one wins
    return out


def test_type_stubs_use_the_extensions_parameter_names() -> None:
    stubs = stub_signatures()
    assert {"math_binary", "iif", "grad", "math_unary", "Target.read_value",
            "Target.write_value"} <= set(stubs)
    for name, ps in stubs.items():
        obj = getattr(cp._core.Target, name.split(".")[1]) if "." in name else getattr(cp._core, name)
        if not callable(obj) or isinstance(obj, type):
            continue
        real = [describe(p).rstrip("=") for p in params(inspect.signature(obj))]
        assert ps == real, f"_core.pyi {name}{ps} != extension {real}"
