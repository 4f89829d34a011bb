"""The typing of the containers' operators, written once for ``tensor``, ``vector`` (and any
container that wants it): each operator is declared as an attribute whose type is one of the
callable protocols below, parameterised by the container's element type ``E`` and by the
container of ints ``I`` and of floats ``F`` it gives (Python's typing has no higher-kinded
types, so a class names its own int and float forms). ``vector[int] + 1`` is then
``vector[int]``, ``vector[int] * 2.5`` ``vector[float]``, ``tensor[int] / 2`` ``tensor[float]``
and ``t < 0`` ``tensor[int]``, from one declaration per operator and class. Indexing is
typed the same way (``Subscript``): ``v[0]`` is an element, ``v[1:]`` a vector.

At run time the operators and indexing are ``NdMethods``' methods; only mypy reads these
types.
"""

from __future__ import annotations

from collections.abc import Sequence
from types import EllipsisType
from typing import Any, Protocol, SupportsIndex, TypeAlias, TypeVar, overload

from ._core import value

E = TypeVar("E", covariant=True)
"""The element type of the container the operator belongs to (int or float)."""
I = TypeVar("I", covariant=True)  # noqa: E741 - the int container, beside F
"""The container of ints the operator takes and gives (``tensor[int]``, ``vector[int]``)."""
F = TypeVar("F", covariant=True)
"""The container of floats the operator takes and gives (``tensor[float]``, ``vector[float]``)."""
S = TypeVar("S", covariant=True)
"""What a slice (or a tuple of indices) of the container gives."""

IntOperand: TypeAlias = "int | value[int] | Sequence[int | value[int]]"
"""What keeps an int container int under ``+ - * // % **`` (besides the int container)."""
AnyOperand: TypeAlias = "float | value[Any] | Sequence[Any]"
"""Scalars and nested sequences a container computes with (besides containers)."""


# covariant in the containers so that vector may narrow the tensor's results (as its own
# overloads did before); mypy notes that this is unsafe for the int operand's type
class Arith(Protocol[E, I, F]):  # type: ignore[misc]
    """``+ - * // % **`` and their reflected forms: int with int stays int, else float."""

    @overload
    def __call__(self: Arith[int, I, F], other: IntOperand | I, /) -> I: ...
    @overload
    def __call__(self, other: AnyOperand | I | F, /) -> F: ...


class Div(Protocol[E, I, F]):
    """``/`` and its reflected form: always float."""

    def __call__(self, other: AnyOperand | I | F, /) -> F: ...


class Compare(Protocol[E, I, F]):
    """``< <= > >= == !=``: int (0 or 1) elements."""

    def __call__(self, other: AnyOperand | I | F, /) -> I: ...


class Subscript(Protocol[E, S]):
    """``c[key]``: an int (or an int ``cp.value``) gives ``E`` (an element, or a tensor's
    sub-tensor), a slice, a tuple, ``...`` or ``None`` gives ``S``."""

    @overload
    def __call__(self, key: SupportsIndex | value[int], /) -> E: ...
    @overload
    def __call__(self, key: slice | tuple[Any, ...] | EllipsisType | None, /) -> S: ...
