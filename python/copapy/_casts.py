"""Casts: ``cp.cast(x, dtype)``, ``to_float``, ``to_int``, ``to_bool`` (Copapy's names) and
``to_bytes``, for numbers, values, vectors, tensors and arrays.

The rules (docs/math.md, "Casts"), the same bits on every target: int to float rounds to
nearest; float to int truncates toward 0, NaN gives 0 and values outside int32 saturate;
to bool is ``x != 0`` (NaN is True, as NumPy); to a byte clamps to 0..255 (floats truncate
toward 0, NaN gives 0). A value converts by one stencil, an array (or a packed vector or
tensor) by one loop stencil, other containers element by element. Plain numbers convert
while tracing, with Python's ``float()``, ``int()`` and ``bool()`` as in Copapy.
"""

from __future__ import annotations

from typing import Any, overload

from . import _core
from ._array import array
from ._core import value
from ._elements import cast_scalar
from ._tensors import tensor
from ._vectors import vector


def cast(x: Any, dtype: str | type) -> Any:
    """``x`` (a number, value, vector, tensor or array) converted to ``dtype``: 'float',
    'int', 'bool' or 'byte' (or the Python types float, int, bool).

    Float to int truncates toward 0 (NaN gives 0, out of range saturates to the int32
    limits), to bool is ``x != 0``, to byte clamps to 0..255. A value or array that already
    has the type is returned as it is; numbers convert with Python's float/int/bool."""
    name = _core.nd_cast_dtype(dtype)
    if isinstance(x, (array, tensor)):
        return x.astype(name)
    if isinstance(x, (value, int, float)):
        return cast_scalar(x, name)
    raise TypeError(f"cannot cast a {type(x).__name__}: cast() takes a number, a copapy value, "
                    "a vector, a tensor or an array")


@overload
def to_float(x: float) -> float: ...
@overload
def to_float(x: value[Any]) -> value[float]: ...
@overload
def to_float(x: vector[Any]) -> vector[float]: ...
@overload
def to_float(x: tensor[Any]) -> tensor[float]: ...
@overload
def to_float(x: array[Any]) -> array[float]: ...
def to_float(x: Any) -> Any:
    """``x`` with float elements (ints round to nearest float32); see ``cast``."""
    return cast(x, "float")


@overload
def to_int(x: float) -> int: ...
@overload
def to_int(x: value[Any]) -> value[int]: ...
@overload
def to_int(x: vector[Any]) -> vector[int]: ...
@overload
def to_int(x: tensor[Any]) -> tensor[int]: ...
@overload
def to_int(x: array[Any]) -> array[int]: ...
def to_int(x: Any) -> Any:
    """``x`` with int elements: floats truncate toward 0, NaN gives 0, values outside
    int32 saturate; see ``cast``."""
    return cast(x, "int")


@overload
def to_bool(x: float) -> bool: ...
@overload
def to_bool(x: value[Any]) -> value[int]: ...
@overload
def to_bool(x: vector[Any]) -> vector[int]: ...
@overload
def to_bool(x: tensor[Any]) -> tensor[int]: ...
@overload
def to_bool(x: array[Any]) -> array[int]: ...
def to_bool(x: Any) -> Any:
    """``x != 0`` element by element (NaN is True); see ``cast``."""
    return cast(x, "bool")


@overload
def to_bytes(x: float) -> int: ...
@overload
def to_bytes(x: value[Any]) -> value[int]: ...
@overload
def to_bytes(x: vector[Any]) -> vector[int]: ...
@overload
def to_bytes(x: tensor[Any]) -> tensor[int]: ...
@overload
def to_bytes(x: array[Any]) -> array[int]: ...
def to_bytes(x: Any) -> Any:
    """``x`` clamped to 0..255 element by element (floats truncate toward 0, NaN gives 0);
    arrays get dtype 'byte'. See ``cast``."""
    return cast(x, "byte")
