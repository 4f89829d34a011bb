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

from typing import Any, Protocol, TypeVar, overload

from . import _core
from ._array import array
from ._core import value
from ._tensors import tensor
from ._vectors import vector


def cast(x: Any, dtype: str | type) -> Any:
    """``x`` (a number, value or container) converted to ``dtype``: 'float', 'int', 'bool' or
    'byte' (or the Python types float, int, bool), by the rules above; a value or array of
    that type already is returned as it is."""
    name = _core.nd_cast_dtype(dtype)
    if isinstance(x, (array, tensor)):
        return x.astype(name)
    if isinstance(x, (value, int, float)):
        return _core.nd_cast_leaf(x, name)
    raise TypeError(f"cannot cast a {type(x).__name__}: cast() takes a number, a copapy value, "
                    "a vector, a tensor or an array")


P = TypeVar("P", covariant=True)
E = TypeVar("E", int, float)


class Conversion(Protocol[P, E]):
    """The type of ``to_float``, ``to_int``, ``to_bool``, ``to_bytes``: a number gives a number
    ``P``, a value or container the same kind with elements ``E``."""

    @overload
    def __call__(self, x: float, /) -> P: ...
    @overload
    def __call__(self, x: value[Any], /) -> value[E]: ...
    @overload
    def __call__(self, x: vector[Any], /) -> vector[E]: ...
    @overload
    def __call__(self, x: tensor[Any], /) -> tensor[E]: ...
    @overload
    def __call__(self, x: array[Any], /) -> array[E]: ...


def _conversion(dtype: str, doc: str) -> Any:
    def convert(x: Any) -> Any:
        return cast(x, dtype)

    convert.__name__ = convert.__qualname__ = "to_bytes" if dtype == "byte" else f"to_{dtype}"
    convert.__doc__ = doc
    return convert


to_float: Conversion[float, float] = _conversion(
    "float", "``x`` with float elements (ints round to nearest float32); see ``cast``.")
to_int: Conversion[int, int] = _conversion(
    "int", "``x`` with int elements: floats truncate toward 0, NaN gives 0, values outside "
    "int32 saturate; see ``cast``.")
to_bool: Conversion[bool, int] = _conversion(
    "bool", "``x != 0`` element by element (NaN is True); see ``cast``.")
to_bytes: Conversion[int, int] = _conversion(
    "byte", "``x`` clamped to 0..255 element by element (floats truncate toward 0, NaN gives 0); "
    "arrays get dtype 'byte'. See ``cast``.")
