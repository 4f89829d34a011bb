"""Math functions that accept traced values, plain Python numbers and containers alike.

On a ``cp.value`` they add an operation to the graph (float32, our own math library, see
``docs/math.md``). On plain numbers they return plain Python numbers computed by the
``math`` module, as Copapy does. On vectors, matrices and other containers with a
``map`` method they apply elementwise; two-argument functions broadcast a scalar over a
container and combine two containers of the same shape elementwise.
"""

import builtins
import math
from collections.abc import Callable
from typing import Any, Protocol, TypeAlias, TypeVar, overload

from . import _array, _core, _optable
from ._core import value
from ._elements import plain

U = TypeVar("U", int, float)

_builtin_abs = builtins.abs


def _is_container(x: Any) -> bool:
    return not isinstance(x, value) and hasattr(x, "map")


def _check_numbers(func: Any, *args: Any) -> None:
    """Plain arguments must be real numbers (Python or NumPy); anything else is a TypeError
    that names the function, rather than an error from deep inside ``math``."""
    for a in args:
        if isinstance(a, value | int | float) or (hasattr(a, "__float__") and not hasattr(a, "__len__")):
            continue
        raise TypeError(
            f"{func.__name__}() takes copapy values, numbers, vectors or matrices, "
            f"got {type(a).__name__}"
        )


def _unary(x: Any, traced: Callable[[Any], Any], plain: Callable[[Any], Any], func: Any) -> Any:
    if isinstance(x, value):
        return traced(x)
    if isinstance(x, _array.array):
        return _array.unary(x, func.__name__)
    if _is_container(x):
        return x.map(func)
    _check_numbers(func, x)
    return plain(x)


def _binary(
    a: Any, b: Any, traced: Callable[[Any, Any], Any], plain: Callable[[Any, Any], Any], func: Any
) -> Any:
    if isinstance(a, _array.array) or isinstance(b, _array.array):
        return _array.binary(_optable.FUNCTIONS[func.__name__], a, b)
    if _is_container(a) or _is_container(b):
        return _elementwise(func, a, b)
    _check_numbers(func, a, b)
    if isinstance(a, value) or isinstance(b, value):
        return traced(a, b)
    return plain(a, b)


class _FloatFunction(Protocol):
    """A one-argument float math function: a value gives a traced float value, a number
    a Python float, a container or cp.array its elementwise result."""

    __name__: str

    @overload
    def __call__(self, x: value[Any], /) -> value[float]: ...
    @overload
    def __call__(self, x: float, /) -> float: ...
    @overload
    def __call__(self, x: Any, /) -> Any: ...


#: The docstring of each float math function (the op table's own line is terser).
_DOCS = {
    "sqrt": "Square root (IEEE, correctly rounded in float32 when compiled).",
    "sin": "Sine of x in radians.",
    "cos": "Cosine of x in radians.",
    "tan": "Tangent of x in radians.",
    "asin": "Inverse sine; NaN outside [-1, 1] when compiled.",
    "acos": "Inverse cosine; NaN outside [-1, 1] when compiled.",
    "atan": "Inverse tangent.",
    "exp": "e to the power x.",
    "tanh": "Hyperbolic tangent (our float32 implementation when compiled, see docs/math.md).",
    "log": "Natural logarithm; -inf at 0 and NaN below when compiled.",
    "sigmoid": "Logistic function ``1 / (1 + exp(-x))`` elementwise, in (0, 1).",
}


def _plain_sigmoid(x: float) -> float:
    """The logistic function of a Python number in float64, without overflow: exp of a
    negative number only (exp(-x) would overflow where exp(x) underflows to 0)."""
    if x != x:
        return x
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x) if x > -745.0 else 0.0
    return e / (1.0 + e)


#: The Python-number version of the table's float functions that ``math`` does not have.
_PLAIN_ONLY_HERE = {"sigmoid": _plain_sigmoid}

#: The float math functions of the op table (stencils/optable.py): one float operand,
#: a float result, spelled ``cp.<op name>``; each is made by ``_float_function``.
FLOAT_FUNCTIONS = tuple(
    name for name in _optable.UNARY
    if _optable.SIGNATURES[name] == (("f", "f"),) and _optable.PYTHON[name] == f"cp.{name}")


def _float_function(name: str) -> _FloatFunction:
    """The math function for op ``name`` of the table: ``_core.math_unary`` on a value, the
    ``math`` module's on a number (as Copapy), the array stencil on a cp.array."""
    assert _optable.is_unary(name)
    op: _optable.UnaryOp = name
    plain_math = _PLAIN_ONLY_HERE.get(name) or getattr(math, name)

    def function(x: Any) -> Any:
        return _unary(x, lambda v: _core.math_unary(op, v), lambda v: float(plain_math(v)), function)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = _DOCS.get(name, _optable.DOC[name])
    function.__module__ = __name__
    return function


sqrt = _float_function("sqrt")
sin = _float_function("sin")
cos = _float_function("cos")
tan = _float_function("tan")
asin = _float_function("asin")
acos = _float_function("acos")
atan = _float_function("atan")
exp = _float_function("exp")
tanh = _float_function("tanh")
log = _float_function("log")
sigmoid = _float_function("sigmoid")


class _FloatBinary(Protocol):
    """A two-argument float math function (op types ``f>f``): a float result, traced when
    either argument is a value, a Python float for two numbers, elementwise on containers."""

    __name__: str

    @overload
    def __call__(self, x: value[Any], y: value[Any] | float) -> value[float]: ...
    @overload
    def __call__(self, x: float, y: value[Any]) -> value[float]: ...
    @overload
    def __call__(self, x: float, y: float) -> float: ...
    @overload
    def __call__(self, x: Any, y: Any) -> Any: ...


class _PowerBinary(Protocol):
    """A float math function with the integer power rule (flag ``intpower``): an int
    value to an int constant stays an int value."""

    __name__: str

    @overload
    def __call__(self, x: value[int], y: int) -> value[int]: ...
    @overload
    def __call__(self, x: value[Any], y: value[Any] | float) -> value[float]: ...
    @overload
    def __call__(self, x: float, y: value[Any]) -> value[float]: ...
    @overload
    def __call__(self, x: float, y: float) -> float: ...
    @overload
    def __call__(self, x: Any, y: Any) -> Any: ...


class _SameTypeBinary(Protocol):
    """A two-argument function on floats and ints (op types ``f>f i>i``): the result has
    the operands' type."""

    __name__: str

    @overload
    def __call__(self, x: value[U], y: value[U] | U) -> value[U]: ...
    @overload
    def __call__(self, x: U, y: value[U]) -> value[U]: ...
    @overload
    def __call__(self, x: U, y: U) -> U: ...
    @overload
    def __call__(self, x: Any, y: Any) -> Any: ...


def _typing_of(op: str) -> type:
    """The protocol that types the cp function of binary op ``op``: its result-type rule
    read from the op table's signatures and flags."""
    if op in _optable.INT_POWER:
        return _PowerBinary
    return {(("f", "f"),): _FloatBinary,
            (("f", "f"), ("i", "i")): _SameTypeBinary}[_optable.SIGNATURES[op]]


def _plain_pow(x: Any, y: Any) -> float:
    """``x ** y`` in floats as NumPy's ``power`` (C ``pow``): NaN for a negative base
    with a non-integer exponent, infinities on overflow and for a zero base with a
    negative exponent, instead of Python's complex results and exceptions."""
    xf, yf = float(x), float(y)
    odd = yf.is_integer() and abs(yf) < 2.0**53 and int(yf) % 2 == 1
    try:
        return math.pow(xf, yf)
    except OverflowError:
        return -math.inf if xf < 0 and odd else math.inf
    except ValueError:
        if xf == 0:  # zero to a negative power: a pole, signed for odd exponents
            return math.copysign(math.inf, xf) if odd else math.inf
        return math.nan


def _is_nan(a: Any) -> bool:
    return bool(a != a)


def _plain_minimum(a: Any, b: Any) -> Any:
    if _is_nan(a):
        return a
    return a if a < b else b


def _plain_maximum(a: Any, b: Any) -> Any:
    if _is_nan(a):
        return a
    return a if a > b else b


#: What each binary math function computes on two plain numbers (as Copapy: Python's
#: ``math``; NumPy's NaN and pole rules where Python would raise).
_PLAIN: dict[str, Callable[[Any, Any], Any]] = {
    "atan2": math.atan2, "pow": _plain_pow, "min": _plain_minimum, "max": _plain_maximum}

#: The docstring of each binary math function, by op name.
_BINARY_DOCS = {
    "atan2": """``math.atan2(x, y)``: the angle in radians, in [-pi, pi], of the point whose
    ordinate is the first argument and abscissa the second.

    The parameters carry Copapy's names, so ``atan2(x=a, y=b)`` means what it means in
    Copapy: ``math.atan2(a, b)`` (the first argument is the C library's ``y``).
    """,
    "pow": "x to the power y: integer constant exponents as multiplications, others powf.",
    "min": "Smaller of x and y; a NaN in either propagates (as numpy.minimum).",
    "max": "Larger of x and y; a NaN in either propagates (as numpy.maximum).",
}

def _binary_function(op: str) -> Any:
    """The cp function of binary op ``op`` of the table (``atan2``, ``pow``, ``min`` as
    ``minimum``...): ``_core.math_binary`` when a value is involved, ``_PLAIN`` on numbers,
    the array stencil on a cp.array, elementwise on containers. Its annotation below must
    be the protocol the table gives it (``_typing_of``; tests/targets/test_optable.py)."""
    assert _optable.is_math_binary(op), op
    core_op: _optable.MathBinaryOp = op
    plain_math = _PLAIN[op]

    def function(x: Any, y: Any) -> Any:
        return _binary(x, y, lambda a, b: _core.math_binary(core_op, a, b), plain_math, function)

    function.__name__ = function.__qualname__ = _optable.PYTHON[op][3:]
    function.__doc__ = _BINARY_DOCS.get(op, _optable.DOC[op])
    function.__module__ = __name__
    return function


atan2: _FloatBinary = _binary_function("atan2")
pow: _PowerBinary = _binary_function("pow")
minimum: _SameTypeBinary = _binary_function("min")
maximum: _SameTypeBinary = _binary_function("max")


def _reduce(x: Any, pick: Callable[[Any, Any], Any], name: str) -> Any:
    """The smallest or largest element of a container, pairwise (NaN propagates)."""
    items = list(_flat(x)) if _is_container(x) else list(x)
    if not items:
        raise ValueError(f"{name}() of an empty sequence: it has no {name}imum")
    while len(items) > 1:
        nxt = [pick(a, b) for a, b in zip(items[0::2], items[1::2], strict=False)]
        if len(items) % 2:
            nxt.append(items[-1])
        items = nxt
    return items[0]


@overload
def min(x: value[U], y: value[U] | U) -> value[U]: ...
@overload
def min(x: U, y: value[U]) -> value[U]: ...
@overload
def min(x: U, y: U) -> U: ...
@overload
def min(x: Any, y: Any = None) -> Any: ...
def min(x: Any, y: Any = None) -> Any:
    """``min(x, y)``: ``minimum(x, y)`` elementwise (Copapy 0.0.7); ``min(v)`` with one
    vector, matrix, list or tuple: its smallest element (Copapy's newest API, NumPy's
    ``min``: a NaN element gives NaN)."""
    if y is None:
        if isinstance(x, value | int | float):
            raise TypeError("min() of a single number: pass a vector or list to reduce, or two arguments")
        if isinstance(x, _array.array):
            return x.min()
        return _reduce(x, minimum, "min")
    return minimum(x, y)


@overload
def max(x: value[U], y: value[U] | U) -> value[U]: ...
@overload
def max(x: U, y: value[U]) -> value[U]: ...
@overload
def max(x: U, y: U) -> U: ...
@overload
def max(x: Any, y: Any = None) -> Any: ...
def max(x: Any, y: Any = None) -> Any:
    """``max(x, y)``: ``maximum(x, y)`` elementwise (Copapy 0.0.7); ``max(v)`` with one
    vector, matrix, list or tuple: its largest element (a NaN element gives NaN)."""
    if y is None:
        if isinstance(x, value | int | float):
            raise TypeError("max() of a single number: pass a vector or list to reduce, or two arguments")
        if isinstance(x, _array.array):
            return x.max()
        return _reduce(x, maximum, "max")
    return maximum(x, y)


@overload
def abs(x: value[U]) -> value[U]: ...
@overload
def abs(x: U) -> U: ...
@overload
def abs(x: Any) -> Any: ...
def abs(x: Any) -> Any:
    """Absolute value (traced: abs of INT_MIN is INT_MIN, as int32 wraps; plain numbers:
    Python's ``abs``, so ``abs(-0.0)`` is ``0.0``)."""
    return _unary(x, lambda v: v.__abs__(), _builtin_abs, abs)


@overload
def sign(x: value[Any]) -> value[int]: ...
@overload
def sign(x: float) -> int: ...
@overload
def sign(x: Any) -> Any: ...
def sign(x: Any) -> Any:
    """1 for positive, -1 for negative, 0 for zero (and NaN), as an int."""
    if isinstance(x, _array.array):  # no sign stencil: two comparisons and a subtraction
        return (x > 0) - (x < 0)
    return _unary(x, _core.sign, lambda v: int(v > 0) - int(v < 0), sign)


@overload
def clamp(x: value[U], min_value: value[U] | U, max_value: value[U] | U) -> value[U]: ...
@overload
def clamp(x: U, min_value: U, max_value: U) -> U: ...
@overload
def clamp(x: Any, min_value: Any, max_value: Any) -> Any: ...
def clamp(x: Any, min_value: Any, max_value: Any) -> Any:
    """x limited to [min_value, max_value]: ``minimum(maximum(x, min_value), max_value)``,
    as numpy.clip (NaN stays NaN)."""
    return minimum(maximum(x, min_value), max_value)


_IntLike: TypeAlias = "value[int] | int"
_FloatLike: TypeAlias = "value[Any] | float"


@overload
def iif(expression: value[Any], true_result: _IntLike, false_result: _IntLike) -> value[int]: ...
@overload
def iif(expression: value[Any], true_result: _FloatLike, false_result: _FloatLike) -> value[float]: ...
@overload
def iif(expression: float, true_result: int, false_result: int) -> int: ...
@overload
def iif(expression: float, true_result: float, false_result: float) -> float: ...
@overload
def iif(expression: Any, true_result: Any, false_result: Any) -> Any: ...
def iif(expression: Any, true_result: Any, false_result: Any) -> Any:
    """``true_result`` where ``expression`` is non-zero, else ``false_result``, without
    branching (Copapy's parameter names).

    The value not selected never affects the result: ``iif(x > 0, cp.sqrt(x), 0)`` is 0
    for x = -1, not NaN. The result is a float when either result is a float, also when
    the expression is a plain number and the choice is made now (``iif(True, 1, 2.0)`` is
    ``1.0``). Containers are handled elementwise (scalars broadcast).
    """
    if any(isinstance(x, _array.array) for x in (expression, true_result, false_result)):
        return _core.nd_select(expression, true_result, false_result)
    if _is_container(expression) or _is_container(true_result) or _is_container(false_result):
        return _elementwise(iif, expression, true_result, false_result)
    _check_numbers(iif, expression, true_result, false_result)
    if isinstance(expression, value):
        return _core.iif(expression, true_result, false_result)
    # a choice made now: NumPy scalars as the Python numbers they stand for
    expression, true_result, false_result = map(plain, (expression, true_result, false_result))
    chosen, other = (true_result, false_result) if expression else (false_result, true_result)
    if _is_float(other) and not _is_float(chosen):
        return chosen * 1.0 if isinstance(chosen, value) else float(chosen)
    return chosen


def _is_float(x: Any) -> bool:
    return x.dtype == "float" if isinstance(x, value) else isinstance(x, float)


def _flat(x: Any) -> list[Any]:
    values = getattr(x, "values", None)
    if isinstance(values, tuple):  # vectors, tensors, quaternions: flat already
        return list(values)
    out: list[Any] = []
    for e in x:
        if _is_container(e):
            out.extend(_flat(e))
        else:
            out.append(e)
    return out


def _elementwise(func: Callable[..., Any], *args: Any) -> Any:
    """Applies ``func`` to corresponding elements of containers of one shape, with
    scalars broadcast; the result has the shape (and type) of the first container."""
    containers = [x for x in args if _is_container(x)]
    first = containers[0]
    shape = getattr(first, "shape", None)
    for c in containers[1:]:
        if getattr(c, "shape", None) != shape:
            raise ValueError(
                f"shapes {shape} and {getattr(c, 'shape', None)} do not match for {func.__name__}"
            )
    flats = [_flat(x) if _is_container(x) else None for x in args]
    n = len(_flat(first))
    columns = [f if f is not None else [x] * n for f, x in zip(flats, args, strict=True)]
    results = iter([func(*row) for row in zip(*columns, strict=True)])
    return first.map(lambda _element: next(results))
