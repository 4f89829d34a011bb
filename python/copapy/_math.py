"""Math functions that accept traced values and plain Python numbers alike.

On a ``cp.value`` they add an operation to the graph; on a plain number they return a
plain Python float computed by the ``math`` module, as Copapy does.
"""

import math
from typing import Any, overload

from . import _core
from ._core import value


@overload
def sqrt(x: value[Any]) -> value[float]: ...
@overload
def sqrt(x: float) -> float: ...
def sqrt(x: value[Any] | float) -> value[float] | float:
    """Square root (IEEE, correctly rounded in float32 when compiled)."""
    if isinstance(x, value):
        return _core.sqrt(x)
    return math.sqrt(x)


@overload
def sin(x: value[Any]) -> value[float]: ...
@overload
def sin(x: float) -> float: ...
def sin(x: value[Any] | float) -> value[float] | float:
    """Sine of x in radians (copapy's own float32 implementation when compiled)."""
    if isinstance(x, value):
        return _core.sin(x)
    return math.sin(x)


@overload
def cos(x: value[Any]) -> value[float]: ...
@overload
def cos(x: float) -> float: ...
def cos(x: value[Any] | float) -> value[float] | float:
    """Cosine of x in radians (copapy's own float32 implementation when compiled)."""
    if isinstance(x, value):
        return _core.cos(x)
    return math.cos(x)
