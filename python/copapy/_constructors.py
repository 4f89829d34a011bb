"""The constructors of tensors and vectors: ``zeros ones arange eye identity diagonal
concat``. Their elements are plain Python numbers (constants: no code, no memory) except
where pieces hold values."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeAlias, overload

from . import _core
from . import _elements as A
from ._core import value
from ._tensors import _ten, tensor
from ._vectors import vector


def zeros(shape: int | Sequence[int]) -> tensor[int]:
    """A tensor of the constant 0 (plain numbers: no code, no memory)."""
    return _ten(*_core.nd_filled(shape, 0))


def ones(shape: int | Sequence[int]) -> tensor[int]:
    """A tensor of the constant 1 (plain numbers)."""
    return _ten(*_core.nd_filled(shape, 1))


@overload
def arange(start: int, stop: int | None = None, step: int = 1) -> tensor[int]: ...
@overload
def arange(start: float, stop: float | None = None, step: float = 1) -> tensor[float]: ...
def arange(start: float, stop: float | None = None, step: float = 1) -> tensor[Any]:
    """A 1-D tensor of the constants ``start, start + step, …`` below ``stop`` (each one is the
    previous plus ``step``, as in Copapy). ``arange(n)`` is ``0 … n-1``; at most
    ``_core.ARANGE_MAX`` elements (far longer ranges are a wrong step or bound)."""
    vals = _core.nd_arange(start, stop, step)
    return _ten(vals, (len(vals),))


def eye(rows: int, cols: int | None = None) -> tensor[int]:
    """A matrix with the constant 1 on the diagonal and 0 elsewhere."""
    return _ten(*_core.nd_eye(rows, cols))


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
    return _ten(*_core.nd_diagonal(vec.values))


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
    vals, shape, joined_vectors = _core.nd_concat(tensors, more, axis)
    return vector(vals) if joined_vectors else _ten(vals, shape)
