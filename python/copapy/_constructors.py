"""The constructors of tensors and vectors: ``zeros ones arange eye identity diagonal
concat``. Their elements are plain Python numbers (constants: no code, no memory) except
where pieces hold values."""

from __future__ import annotations

import math
from collections.abc import Sequence
from math import prod
from typing import Any, TypeAlias, overload

from . import _core
from . import _elements as A
from ._core import nd_check_shape as check_shape
from ._core import nd_dim as _dim
from ._core import nd_plain_int as plain_int
from ._core import value
from ._tensors import _ten, tensor
from ._vectors import vector


def _shape_arg(shape: Any) -> tuple[int, ...]:
    """A shape argument as NumPy takes it (an int or a sequence of ints, no bools, none
    negative), with ``cp.array``'s size limit: these constants are plain Python numbers,
    one reference (8 bytes) each, so a shape beyond it is refused before anything is built."""
    if isinstance(shape, bool) or not hasattr(shape, "__iter__"):
        dims: tuple[int, ...] = (_dim(shape),)
    else:
        dims = tuple(_dim(d) for d in shape)
    if any(d < 0 for d in dims):
        raise ValueError(f"negative dimensions are not allowed: {dims}")
    check_shape(dims)
    return dims


def zeros(shape: int | Sequence[int]) -> tensor[int]:
    """A tensor of the constant 0 (plain numbers: no code, no memory)."""
    dims = _shape_arg(shape)
    return _ten((0,) * prod(dims), dims)


def ones(shape: int | Sequence[int]) -> tensor[int]:
    """A tensor of the constant 1 (plain numbers)."""
    dims = _shape_arg(shape)
    return _ten((1,) * prod(dims), dims)


@overload
def arange(start: int, stop: int | None = None, step: int = 1) -> tensor[int]: ...
@overload
def arange(start: float, stop: float | None = None, step: float = 1) -> tensor[float]: ...
def arange(start: float, stop: float | None = None, step: float = 1) -> tensor[Any]:
    """A 1-D tensor of the constants ``start, start + step, …`` below ``stop`` (each one is the
    previous plus ``step``, as in Copapy). ``arange(n)`` is ``0 … n-1``."""
    # NumPy scalars as the Python numbers they stand for (the constants are Python numbers)
    start, step = _plain_number(start, "start"), _plain_number(step, "step")
    stop = None if stop is None else _plain_number(stop, "stop")
    if stop is None:
        start, stop = 0, start
    if step == 0:
        raise ValueError("arange: step must not be zero")
    n = _arange_length(start, stop, step)
    vals: list[Any] = []
    cur = start
    for _ in range(n):
        vals.append(cur)
        cur += step
    return _ten(tuple(vals), (len(vals),))


def _plain_number(x: Any, name: str) -> Any:
    s = A.scalar_or_none(x)
    if s is None or isinstance(s, value):
        raise TypeError(f"arange: {name} must be a number, not {type(x).__name__}")
    return s


ARANGE_MAX = 1 << 24
"""Most elements ``arange`` makes: each one is a constant held in Python, so far longer ranges
are a mistake (a wrong step or bound) rather than a program."""


def _arange_length(start: float, stop: float, step: float) -> int:
    """Number of elements, computed first as NumPy does: ``ceil((stop - start) / step)``
    (exact for ints), at least 0. A loop adding ``step`` until ``stop`` could run forever
    (``2.0**53 + 1.0 == 2.0**53``, or an infinite ``stop``)."""
    if isinstance(start, int) and isinstance(stop, int) and isinstance(step, int):
        n = -((start - stop) // step)
    else:
        q = (stop - start) / step
        if not math.isfinite(q):
            raise ValueError(f"arange({start!r}, {stop!r}, {step!r}) has no finite length: "
                             "use finite bounds and a non-zero finite step")
        n = math.ceil(q)
    n = max(n, 0)
    if n > ARANGE_MAX:
        raise ValueError(f"arange({start!r}, {stop!r}, {step!r}) would have {n} elements; "
                         f"copapy makes at most {ARANGE_MAX} (check the step and the bounds)")
    return n


def eye(rows: int, cols: int | None = None) -> tensor[int]:
    """A matrix with the constant 1 on the diagonal and 0 elsewhere (``_shape_arg``'s rules
    and limit)."""
    r = _dim(rows)
    r, c = _shape_arg((r, r if cols is None else cols))
    vals = [0] * (r * c)
    for i in range(min(r, c)):
        vals[i * c + i] = 1
    return _ten(tuple(vals), (r, c))


def identity(size: int) -> tensor[int]:
    """The ``size`` x ``size`` identity matrix (constants)."""
    return eye(size, size)


@overload
def diagonal(vec: vector[int] | tensor[int] | Sequence[int | value[int]]) -> tensor[int]: ...
@overload
def diagonal(vec: vector[Any] | tensor[Any] | Sequence[Any]) -> tensor[float]: ...
def diagonal(vec: Any) -> tensor[Any]:
    """A square matrix with the elements of the 1-D ``vec`` on its diagonal and the constant 0
    elsewhere."""
    if not isinstance(vec, A.ArrayBase):
        vec = tensor(vec)
    if vec.ndim != 1:
        raise ValueError(f"diagonal needs a 1-D vector, got shape {vec.shape}")
    n = len(vec.values)
    vals: list[Any] = [0] * (n * n)
    for i, x in enumerate(vec.values):
        vals[i * n + i] = x
    return _ten(tuple(vals), (n, n))


_VPieceInt: TypeAlias = "vector[int] | value[int] | int"
_VPiece: TypeAlias = "vector[Any] | value[Any] | float"


@overload
def concat(tensors: Sequence[vector[int] | value[int] | int]) -> vector[int]: ...
@overload
def concat(tensors: Sequence[vector[Any] | value[Any] | float]) -> vector[float]: ...
@overload
def concat(tensors: _VPieceInt, *more: _VPieceInt) -> vector[int]: ...
@overload
def concat(tensors: _VPiece, *more: _VPiece) -> vector[float]: ...
@overload
def concat(tensors: Any, *more: Any, axis: int = 0) -> Any: ...
def concat(tensors: Any, *more: Any, axis: int = 0) -> Any:
    """Join vectors (and scalars, as one-element pieces) into a vector, or tensors along
    ``axis`` into a tensor. The pieces are a list or tuple, as in Copapy's
    ``concat(tensors, axis=0)`` (a second positional argument after the list is the
    axis), or separate arguments."""
    arrays: tuple[Any, ...]
    positional_axis = len(more) == 1 and plain_int(more[0]) is not None
    if isinstance(tensors, (list, tuple)) and (not more or positional_axis):
        if more:
            axis = more[0]
        arrays = tuple(tensors)
    else:
        arrays = (tensors, *more)
    if not arrays:
        raise ValueError("concat needs at least one piece")
    if not any(type(p) is tensor for p in arrays):
        out: list[Any] = []
        for p in arrays:
            if isinstance(p, vector):
                out.extend(p.values)
            else:
                s = A.scalar_or_none(p)
                if s is None:
                    out.extend(vector(p).values)
                else:
                    out.append(s)
        return vector(out) if axis == 0 else _bad_axis(axis, (len(out),))
    pieces = [p if isinstance(p, A.ArrayBase) else tensor(p) for p in arrays]
    return _ten(*_core.nd_concat([(p.values, p.shape) for p in pieces], axis))


def _bad_axis(axis: int, shape: tuple[int, ...]) -> Any:
    raise ValueError(f"axis {axis} is out of bounds for pieces of shape {shape}")
