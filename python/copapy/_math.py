"""Math functions that accept traced values, plain Python numbers and containers alike.

On a ``cp.value`` they add an operation to the graph (float32, our own math library, see
``docs/math.md``). On plain numbers they return plain Python numbers computed by the
``math`` module, as Copapy does. On vectors, matrices and other containers with a
``map`` method they apply elementwise; two-argument functions broadcast a scalar over a
container and combine two containers of the same shape elementwise.
"""

import math
from collections.abc import Callable
from typing import Any, TypeVar, overload

from . import _core, _ndarray
from ._core import value

U = TypeVar("U", int, float)


# math function name -> array operation name where they differ
_ARRAY_OPS = {"minimum": "min", "maximum": "max"}


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
    if isinstance(x, _ndarray.array):
        return _ndarray.unary(x, func.__name__)
    if _is_container(x):
        return x.map(func)
    _check_numbers(func, x)
    return plain(x)


def _binary(
    a: Any, b: Any, traced: Callable[[Any, Any], Any], plain: Callable[[Any, Any], Any], func: Any
) -> Any:
    if isinstance(a, _ndarray.array) or isinstance(b, _ndarray.array):
        return _ndarray.binary(_ARRAY_OPS.get(func.__name__, func.__name__), a, b)
    if _is_container(a) or _is_container(b):
        return _elementwise(func, a, b)
    _check_numbers(func, a, b)
    if isinstance(a, value) or isinstance(b, value):
        return traced(a, b)
    return plain(a, b)


@overload
def sqrt(x: value[Any]) -> value[float]: ...
@overload
def sqrt(x: float) -> float: ...
@overload
def sqrt(x: Any) -> Any: ...
def sqrt(x: Any) -> Any:
    """Square root (IEEE, correctly rounded in float32 when compiled)."""
    return _unary(x, _core.sqrt, math.sqrt, sqrt)


@overload
def sin(x: value[Any]) -> value[float]: ...
@overload
def sin(x: float) -> float: ...
@overload
def sin(x: Any) -> Any: ...
def sin(x: Any) -> Any:
    """Sine of x in radians."""
    return _unary(x, _core.sin, math.sin, sin)


@overload
def cos(x: value[Any]) -> value[float]: ...
@overload
def cos(x: float) -> float: ...
@overload
def cos(x: Any) -> Any: ...
def cos(x: Any) -> Any:
    """Cosine of x in radians."""
    return _unary(x, _core.cos, math.cos, cos)


@overload
def tan(x: value[Any]) -> value[float]: ...
@overload
def tan(x: float) -> float: ...
@overload
def tan(x: Any) -> Any: ...
def tan(x: Any) -> Any:
    """Tangent of x in radians."""
    return _unary(x, _core.tan, math.tan, tan)


@overload
def asin(x: value[Any]) -> value[float]: ...
@overload
def asin(x: float) -> float: ...
@overload
def asin(x: Any) -> Any: ...
def asin(x: Any) -> Any:
    """Inverse sine; NaN outside [-1, 1] when compiled."""
    return _unary(x, _core.asin, math.asin, asin)


@overload
def acos(x: value[Any]) -> value[float]: ...
@overload
def acos(x: float) -> float: ...
@overload
def acos(x: Any) -> Any: ...
def acos(x: Any) -> Any:
    """Inverse cosine; NaN outside [-1, 1] when compiled."""
    return _unary(x, _core.acos, math.acos, acos)


@overload
def atan(x: value[Any]) -> value[float]: ...
@overload
def atan(x: float) -> float: ...
@overload
def atan(x: Any) -> Any: ...
def atan(x: Any) -> Any:
    """Inverse tangent."""
    return _unary(x, _core.atan, math.atan, atan)


@overload
def exp(x: value[Any]) -> value[float]: ...
@overload
def exp(x: float) -> float: ...
@overload
def exp(x: Any) -> Any: ...
def exp(x: Any) -> Any:
    """e to the power x."""
    return _unary(x, _core.exp, lambda v: float(math.exp(v)), exp)


@overload
def log(x: value[Any]) -> value[float]: ...
@overload
def log(x: float) -> float: ...
@overload
def log(x: Any) -> Any: ...
def log(x: Any) -> Any:
    """Natural logarithm; -inf at 0 and NaN below when compiled."""
    return _unary(x, _core.log, lambda v: float(math.log(v)), log)


@overload
def atan2(y: value[Any], x: value[Any] | float) -> value[float]: ...
@overload
def atan2(y: float, x: value[Any]) -> value[float]: ...
@overload
def atan2(y: float, x: float) -> float: ...
@overload
def atan2(y: Any, x: Any) -> Any: ...
def atan2(y: Any, x: Any) -> Any:
    """Angle of the point (x, y) in radians, in [-pi, pi] (argument order as math.atan2)."""
    return _binary(y, x, _core.atan2, math.atan2, atan2)


def _plain_pow(x: Any, y: Any) -> Any:
    return float(x**y)


@overload
def pow(x: value[int], y: int) -> value[int]: ...
@overload
def pow(x: value[Any], y: value[Any] | float) -> value[float]: ...
@overload
def pow(x: float, y: value[Any]) -> value[float]: ...
@overload
def pow(x: float, y: float) -> float: ...
@overload
def pow(x: Any, y: Any) -> Any: ...
def pow(x: Any, y: Any) -> Any:
    """x to the power y: integer constant exponents as multiplications, others powf."""
    return _binary(x, y, _core.pow, _plain_pow, pow)


@overload
def minimum(x: value[U], y: value[U] | U) -> value[U]: ...
@overload
def minimum(x: U, y: value[U]) -> value[U]: ...
@overload
def minimum(x: U, y: U) -> U: ...
@overload
def minimum(x: Any, y: Any) -> Any: ...
def minimum(x: Any, y: Any) -> Any:
    """Smaller of x and y; compiled, a NaN in either propagates (as numpy.minimum)."""
    return _binary(x, y, _core.minimum, lambda a, b: a if a < b else b, minimum)


@overload
def maximum(x: value[U], y: value[U] | U) -> value[U]: ...
@overload
def maximum(x: U, y: value[U]) -> value[U]: ...
@overload
def maximum(x: U, y: U) -> U: ...
@overload
def maximum(x: Any, y: Any) -> Any: ...
def maximum(x: Any, y: Any) -> Any:
    """Larger of x and y; compiled, a NaN in either propagates (as numpy.maximum)."""
    return _binary(x, y, _core.maximum, lambda a, b: a if a > b else b, maximum)


min = minimum  # Copapy's names
max = maximum


@overload
def abs(x: value[U]) -> value[U]: ...
@overload
def abs(x: U) -> U: ...
@overload
def abs(x: Any) -> Any: ...
def abs(x: Any) -> Any:
    """Absolute value (abs of INT_MIN is INT_MIN, as int32 wraps)."""
    return _unary(x, lambda v: v.__abs__(), lambda v: v if v >= 0 else -v, abs)


@overload
def sign(x: value[Any]) -> value[int]: ...
@overload
def sign(x: float) -> int: ...
@overload
def sign(x: Any) -> Any: ...
def sign(x: Any) -> Any:
    """1 for positive, -1 for negative, 0 for zero (and NaN), as an int."""
    return _unary(x, _core.sign, lambda v: int(v > 0) - int(v < 0), sign)


@overload
def clamp(x: value[U], lo: value[U] | U, hi: value[U] | U) -> value[U]: ...
@overload
def clamp(x: U, lo: U, hi: U) -> U: ...
@overload
def clamp(x: Any, lo: Any, hi: Any) -> Any: ...
def clamp(x: Any, lo: Any, hi: Any) -> Any:
    """x limited to [lo, hi]: minimum(maximum(x, lo), hi), as numpy.clip (NaN stays NaN)."""
    return minimum(maximum(x, lo), hi)


@overload
def iif(cond: value[Any], a: value[U] | U, b: value[U] | U) -> value[U]: ...
@overload
def iif(cond: float, a: U, b: U) -> U: ...
@overload
def iif(cond: Any, a: Any, b: Any) -> Any: ...
def iif(cond: Any, a: Any, b: Any) -> Any:
    """``a`` where ``cond`` is non-zero, else ``b``, without branching.

    The value not selected never affects the result: ``iif(x > 0, cp.sqrt(x), 0)`` is 0
    for x = -1, not NaN. With a plain number as condition the choice is made now.
    Containers are handled elementwise (scalars broadcast).
    """
    if isinstance(cond, _ndarray.array):
        return _ndarray.iif(cond, a, b)
    if _is_container(cond) or _is_container(a) or _is_container(b):
        return _elementwise(iif, cond, a, b)
    if isinstance(cond, value):
        return _core.iif(cond, a, b)
    return a if cond else b


def _flat(x: Any) -> list[Any]:
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
