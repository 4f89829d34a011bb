"""The one shape module of every container (``tensor``, ``vector``, ``cp.array`` and the
packing bridge): shapes and axes as NumPy takes them (with NumPy's errors), broadcasting,
strides and gathers, transposes, the order of reductions over axes, flat-to-nested lists,
and the one size limit of ``cp.array``, ``cp.zeros``, ``cp.ones`` and ``cp.eye``. Written
once, so every container refuses the same specs with the same messages."""

from __future__ import annotations

import operator
from collections.abc import Iterable, Sequence
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


# --- the shape algebra every container uses (tensor, vector, cp.array, packing) --------------

prod = _prod

OP_VERBS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide", "div": "divide",
    "floordiv": "floor-divide", "mod": "take the remainder of", "pow": "raise",
    "lt": "compare", "le": "compare", "gt": "compare", "ge": "compare", "eq": "compare",
    "ne": "compare", "matmul": "matrix-multiply", "dot": "take the dot product of",
    "cross": "take the cross product of",
}


def shape_error(op: str, kind: str, a: tuple[int, ...], b: tuple[int, ...]) -> ValueError:
    """The one message for operands whose shapes do not fit: names the operation and both shapes."""
    return ValueError(f"cannot {OP_VERBS.get(op, op)} {kind} of shapes {a} and {b}: they do not broadcast")


class AxisError(ValueError, IndexError):
    """An axis outside the dimensions, a ``ValueError`` and an ``IndexError`` as NumPy's."""


def strides_of(shape: Sequence[int]) -> list[int]:
    """Row-major strides in elements."""
    st = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        st[i] = st[i + 1] * shape[i + 1]
    return st


def gather_indices(dims: Sequence[Sequence[int]], strides: Sequence[int], base: int = 0) -> list[int]:
    """Flat indices of the row-major product of per-dimension index lists."""
    idx = [base]
    for d, s in zip(dims, strides, strict=False):
        if len(d) == 1:
            off = d[0] * s
            if off:
                idx = [i + off for i in idx]
        else:
            offs = [k * s for k in d]
            idx = [i + o for i in idx for o in offs]
    return idx


def broadcast_shape(a: tuple[int, ...], b: tuple[int, ...], op: str = "combine",
                    kind: str = "arrays") -> tuple[int, ...]:
    """NumPy's broadcast of two shapes; a ``ValueError`` naming both when they do not fit."""
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
    out = []
    for x, y in zip(pa, pb, strict=True):
        if x != y and x != 1 and y != 1:
            raise shape_error(op, kind, a, b)
        out.append(y if x == 1 else x)
    return tuple(out)


def broadcast_strides(shape: tuple[int, ...], target: tuple[int, ...]) -> list[int]:
    """Strides that read an array of ``shape`` as the broadcast shape ``target``: 0 along
    the dimensions it is repeated over."""
    pad = len(target) - len(shape)
    own = strides_of(shape)
    return [0 if i < pad or shape[i - pad] == 1 else own[i - pad] for i in range(len(target))]


def broadcast_indices(shape: tuple[int, ...], target: tuple[int, ...]) -> list[int]:
    """Flat indices of the elements of an array of ``shape`` repeated to ``target``."""
    return gather_indices([range(t) for t in target], broadcast_strides(shape, target))


def permutation(axes: tuple[Any, ...], ndim: int, what: str) -> tuple[int, ...]:
    """``transpose``'s axes (ints, or one sequence of them; none reverses) as a permutation
    of ``range(ndim)``, negatives from the end."""
    one_sequence = len(axes) == 1 and not isinstance(axes[0], int) and hasattr(axes[0], "__iter__")
    items = axes[0] if one_sequence else axes
    if not items:
        return tuple(range(ndim - 1, -1, -1))
    perm = tuple(d + ndim if d < 0 else d for d in (dim(a) for a in items))
    if sorted(perm) != list(range(ndim)):
        raise ValueError(f"axes {tuple(items)} do not permute the axes of {what}")
    return perm


def normalize_axes(axis: Any, ndim: int, what: str) -> tuple[int, ...] | None:
    """``axis`` (None, an int or a tuple/list of ints, negatives from the end) as sorted
    non-negative axes, None for all of them; NumPy's errors: a bool or float is a
    ``TypeError``, an axis given twice a ``ValueError``, one outside the dimensions an
    ``AxisError``. ``what`` names the container in messages."""
    if axis is None:
        return None
    items = axis if isinstance(axis, (tuple, list)) else (axis,)
    out: list[int] = []
    for item in items:
        a = plain_int(item)
        if a is None:
            raise TypeError(f"axis must be None, an int or a tuple of ints, not {type(item).__name__}")
        if not -ndim <= a < ndim:
            raise AxisError(f"axis {a} is out of bounds for {what}: out of range -{ndim} .. {ndim - 1}")
        if a % ndim in out:
            raise ValueError(f"axis {a} is given twice: each axis can be reduced once")
        out.append(a % ndim)
    return tuple(sorted(out))


def reduction_order(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[list[int], list[int]]:
    """The flat indices of ``shape`` with the kept axes first and the reduced ``axes`` last,
    so the terms of each result element are consecutive, in row-major order of the reduced
    axes (the documented order of reductions over axes), and the kept axes."""
    kept = [d for d in range(len(shape)) if d not in axes]
    order = kept + list(axes)
    st = strides_of(shape)
    return gather_indices([range(shape[d]) for d in order], [st[d] for d in order]), kept


def nest(flat: Sequence[Any], shape: tuple[int, ...]) -> Any:
    """Row-major elements as nested lists of ``shape`` (the element itself for ``()``)."""
    if not shape:
        return flat[0]
    if len(shape) == 1:
        return list(flat)
    step = _prod(shape[1:])
    return [nest(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]
