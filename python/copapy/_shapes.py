"""Shapes as NumPy takes them, and the one size limit of ``cp.array``, ``cp.zeros``,
``cp.ones`` and ``cp.eye``: shared by ``_ndarray`` and ``_tensors`` so both refuse the same
specs with the same messages."""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import Any

from . import _core


def _prod(dims: Iterable[int]) -> int:
    out = 1
    for d in dims:
        out *= d
    return out


MAX_SIZE: int = _core.ARRAY_MAX_LEN
"""Most elements of one array (2**26): offsets stay far inside the 4 GiB of the program
format. ``cp.zeros``, ``cp.ones`` and ``cp.eye`` have the same limit."""


def check_size(n: int) -> None:
    """Refuses ``n`` elements beyond ``MAX_SIZE``, before anything that large is built."""
    if n > MAX_SIZE:
        raise ValueError(f"an array of {n} elements is too large (at most {MAX_SIZE})")


def check_shape(dims: tuple[int, ...]) -> None:
    """Refuses a shape beyond ``MAX_SIZE`` elements; as NumPy, a shape with a zero dimension
    is refused too if its other dimensions multiply beyond the limit (NumPy's limit is its
    address space, ``(0, 2**31, 2**31)`` is "too big" there)."""
    nonzero = _prod(d for d in dims if d)
    if 0 not in dims:
        check_size(nonzero)
    elif nonzero > MAX_SIZE:
        raise ValueError(f"a shape of {dims} is too large: its non-zero dimensions multiply to "
                         f"{nonzero} elements, more than the {MAX_SIZE} an array can have")


def plain_int(x: Any) -> int | None:
    """``x`` as a Python int when it is an integer as NumPy takes one for an index, an axis or
    a count: an int or any object with ``__index__`` (NumPy's integer scalars, ``np.int64(1)``),
    never a bool (NumPy refuses ``True`` and ``np.True_`` there too); None for anything else.
    The one test of "is an integer" for indices, axes and sizes, so NumPy integer scalars act
    as Python ints everywhere."""
    if isinstance(x, bool):
        return None
    if isinstance(x, int):
        return int(x)
    if not hasattr(type(x), "__index__"):
        return None
    try:
        return operator.index(x)
    except TypeError:  # np.bool_ has __index__ but refuses it
        return None


def dim(d: Any) -> int:
    """One dimension as NumPy takes it: an int or anything with ``__index__``, not a bool."""
    if isinstance(d, bool):  # as NumPy: True is not a dimension
        raise TypeError("an integer is required for a dimension, not a bool")
    try:
        return operator.index(d)
    except TypeError:
        raise TypeError(f"dimensions must be integers, not {type(d).__name__}") from None


def reshape_dims(spec: tuple[Any, ...], size: int, what: str) -> tuple[int, ...]:
    """NumPy's reshape rules for the arguments ``spec`` (ints, or one sequence of ints) of
    ``what`` (named in messages) with ``size`` elements: one dimension may be negative
    (any negative number, as NumPy takes it) and is inferred; the product must be ``size``."""
    if not spec:
        raise TypeError("reshape() needs the new shape: ints or one sequence of ints")
    one_sequence = len(spec) == 1 and not isinstance(spec[0], int) and hasattr(spec[0], "__iter__")
    items = spec[0] if one_sequence else spec
    dims = tuple(dim(d) for d in items)
    unknown = [i for i, d in enumerate(dims) if d < 0]
    if len(unknown) > 1:
        raise ValueError("can only specify one unknown dimension (a negative number) in a reshape")
    known = _prod(d for d in dims if d >= 0)
    if unknown:
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape {what} into shape {dims}")
        i = unknown[0]
        dims = dims[:i] + (size // known,) + dims[i + 1:]
    elif known != size:
        raise ValueError(f"cannot reshape {what} into shape {dims}")
    check_shape(dims)
    return dims
