"""``cp.tensor`` (also ``cp.matrix``): an n-D container of traced values and/or plain numbers,
and the constructors ``zeros ones arange eye identity diagonal concat``."""

from __future__ import annotations

import math
import operator as _op
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, ClassVar, SupportsIndex, TypeAlias, TypeVar, cast, overload

from . import _arrays as A
from . import _core, _packing
from ._arrays import TNum
from ._core import value
from ._shapes import check_shape, plain_int, reshape_dims
from ._shapes import dim as _dim
from ._vectors import vector

U = TypeVar("U", int, float)

_TIntLike: TypeAlias = "tensor[int] | vector[int] | value[int] | int"
_TAnyLike: TypeAlias = "tensor[Any] | vector[Any] | value[Any] | float | Sequence[Any]"
_TensorSource: TypeAlias = (
    "TNum | value[TNum] | vector[TNum] | tensor[TNum] | Sequence[TNum | value[TNum]]"
    " | Sequence[Sequence[TNum | value[TNum]]] | Sequence[Sequence[Sequence[TNum | value[TNum]]]]"
    " | Iterable[Any]"
)

_new = object.__new__
_V = value
_SCALARS = (value, int, float)


def _ten(vals: tuple[Any, ...], shape: tuple[int, ...]) -> tensor[Any]:
    t: tensor[Any] = _new(tensor)
    t.values = vals
    t.shape = shape
    return t


def _packed_ten(node: Any, shape: tuple[int, ...]) -> tensor[Any]:
    """A tensor of the elements of array ``node`` (aliases, no code), packed by it."""
    t = _ten(tuple(_core.array_elements(node)), shape)
    t._arr = node
    return t


def _flatten(x: Any, out: list[Any]) -> tuple[int, ...]:
    """Appends the elements of a (nested) source to ``out`` and returns its shape."""
    if isinstance(x, _SCALARS):
        out.append(x)
        return ()
    if isinstance(x, A.ArrayBase):
        out.extend(x.values)
        return x.shape
    s = A.scalar_or_none(x)
    if s is not None:
        out.append(s)
        return ()
    if hasattr(x, "tolist") and hasattr(x, "shape"):  # NumPy array
        _core.check_dtype(x)
        x = x.tolist()
    if isinstance(x, (str, bytes)) or not isinstance(x, Iterable):
        raise TypeError(f"tensor elements must be copapy values or numbers, not {A.type_name(x)}")
    items = list(x)
    if all(isinstance(i, _SCALARS) for i in items):
        out.extend(items)
        return (len(items),)
    subs = [_flatten(i, out) for i in items]
    for s2 in subs[1:]:
        if s2 != subs[0]:
            raise ValueError(f"ragged nested sequence: its rows have shapes {subs[0]} and {s2}")
    return (len(items),) + (subs[0] if subs else ())


def _as_index(k: Any, n: int, axis: int) -> int:
    try:
        i = _op.index(k)
    except TypeError:
        raise TypeError(
            f"tensor indices must be integers, slices or tuples of them, not {A.type_name(k)}"
        ) from None
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of range for axis {axis} of size {n}")
    return i % n if i < 0 else i


class tensor(A.ArrayBase[TNum]):
    """An n-dimensional array (``cp.matrix`` is the same class) of ``cp.value``s and/or plain
    Python numbers, stored flat in row-major order (``values``) with a ``shape``.

    Elementwise arithmetic and comparisons broadcast as NumPy does (scalars, vectors, tensors
    and nested lists); a shape mismatch is a ``ValueError`` naming both shapes. Plain-number
    elements stay plain numbers (``number op number`` is evaluated by Python, as in Copapy),
    so ``zeros``, ``ones``, ``eye`` and sparse constant matrices cost only their non-zero
    entries; in products a constant 0 drops its term and a constant 1 is skipped.

    ``a @ b`` is the dot product (1-D @ 1-D, a scalar), matrix-vector, vector-matrix and
    matrix-matrix product. ``.sum()``, ``@``, ``trace()`` and ``mean()`` add their terms
    in **one documented order**, the same as ``cp.array`` on every target: eight interleaved
    partial sums (term k into partial k % 8), combined pairwise (``_arrays``).
    Plain-number terms are summed in Python first and added once at the end.

    As in Copapy, indexing with an integer gives a tensor of one dimension less (a 0-d tensor
    for an element of a 1-D tensor); ``get_scalar(i, j)`` gives the element itself.
    """

    __slots__ = ("_arr", "_packed")
    _arr: Any
    _packed: bool | None
    pack_threshold: ClassVar[int | None] = _packing.PACK_THRESHOLD
    """Tensors with more traced elements than this compute through array stencils
    (Copapy's class attribute; None turns packing off for tensors without ``packed=True``)."""

    def __init__(
        self, values: _TensorSource[TNum], shape: Sequence[int] | None = None, packed: bool | None = None
    ) -> None:
        """A tensor from a scalar (0-d), a vector, a tensor, a NumPy array or nested
        sequences; with ``shape``, from a flat sequence of ``prod(shape)`` elements.

        ``packed`` as for ``vector``: None packs by ``tensor.pack_threshold``, True at any
        size, False never."""
        self._packed = packed
        if isinstance(values, A.ArrayBase):
            flat, vshape = values.values, values.shape
        elif isinstance(values, _SCALARS):
            flat, vshape = (values,), ()
        else:
            out: list[Any] = []
            vshape = _flatten(values, out)
            flat = tuple(out)
        if shape is not None:
            new_shape = tuple(_op.index(d) for d in shape)
            if any(d < 0 for d in new_shape) or A.prod(new_shape) != len(flat):
                raise ValueError(f"cannot make a tensor of shape {new_shape} from {len(flat)} elements")
            vshape = new_shape
        self.values = flat
        self.shape = vshape

    def _with_values(self, vals: tuple[Any, ...]) -> tensor[Any]:
        return _ten(vals, self.shape)

    def __repr__(self) -> str:
        if len(self.values) <= 64:
            return f"tensor({self.tolist()!r})"
        return f"tensor(shape={self.shape}, values=...)"

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def size(self) -> int:
        """Number of elements."""
        return len(self.values)

    def item(self) -> value[TNum] | TNum:
        """The only element of a tensor with one element."""
        if len(self.values) != 1:
            raise ValueError(f"item() needs a tensor with one element, this one has shape {self.shape}")
        return self.values[0]

    def tolist(self) -> Any:
        """The elements as nested lists (the element itself for a 0-d tensor)."""
        if not self.shape:
            return self.values[0]
        return _nest(self.values, self.shape)

    # --- indexing -------------------------------------------------------------------------

    def get_scalar(self, *key: int) -> value[TNum] | TNum:
        """The element at the given indices (one per dimension)."""
        if len(key) != len(self.shape):
            raise IndexError(
                f"get_scalar needs {len(self.shape)} indices for shape {self.shape}, got {len(key)}"
            )
        flat = 0
        for axis, (k, n) in enumerate(zip(key, self.shape, strict=False)):
            flat = flat * n + _as_index(k, n, axis)
        return self.values[flat]

    def __getitem__(self, key: SupportsIndex | slice | tuple[SupportsIndex | slice, ...]) -> tensor[TNum]:
        shape = self.shape
        if not shape:
            raise TypeError("a 0-d tensor cannot be indexed")
        if isinstance(key, int):
            i = _as_index(key, shape[0], 0)
            sub = shape[1:]
            n = A.prod(sub)
            return _ten(self.values[i * n:(i + 1) * n], sub)
        keys = key if isinstance(key, tuple) else (key,)
        if len(keys) > len(shape):
            raise IndexError(f"too many indices ({len(keys)}) for a tensor of shape {shape}")
        if any(isinstance(k, value) for k in keys):
            # runtime indices: wrapped once if negative, then clamped (a lookup table)
            return _packed_ten(*_packing.runtime_subscript(self, keys))
        dims: list[Sequence[int]] = []
        new_shape: list[int] = []
        for axis, k in enumerate(keys):
            n = shape[axis]
            if isinstance(k, slice):
                r = range(*k.indices(n))
                dims.append(r)
                new_shape.append(len(r))
            else:
                dims.append((_as_index(k, n, axis),))
        for axis in range(len(keys), len(shape)):
            dims.append(range(shape[axis]))
            new_shape.append(shape[axis])
        vals = self.values
        return _ten(tuple([vals[i] for i in A.gather_indices(dims, A.strides_of(shape))]), tuple(new_shape))

    def __iter__(self) -> Iterator[tensor[TNum]]:
        if not self.shape:
            raise TypeError("iteration over a 0-d tensor")
        sub = self.shape[1:]
        n = A.prod(sub)
        vals = self.values
        for i in range(self.shape[0]):
            yield _ten(vals[i * n:(i + 1) * n], sub)

    # --- elementwise ----------------------------------------------------------------------

    def _binop(self, other: Any, op: Callable[[Any, Any], Any], name: str, rev: bool = False) -> Any:
        if _packing.wants(self) and (
            isinstance(other, _SCALARS) or (type(other) is tensor and other.shape == self.shape)
        ):
            node = _packing.binop(self, other, name, rev)
            if node is not None:
                return _packed_ten(node, self.shape)
        if isinstance(other, _SCALARS):
            if rev:
                return _ten(A.map_scalar_r(op, other, self.values), self.shape)
            return _ten(A.map_scalar(op, self.values, other), self.shape)
        if not isinstance(other, A.ArrayBase):
            s = A.scalar_or_none(other)
            if s is not None:
                return self._binop(s, op, name, rev)
            if isinstance(other, (str, bytes)) or not isinstance(other, Iterable):
                return NotImplemented
            other = tensor(other)
        a, b = self.values, other.values
        sa, sb = self.shape, other.shape
        if sa != sb:
            if rev:
                shape = A.broadcast_shape(sb, sa, name, "tensors")
            else:
                shape = A.broadcast_shape(sa, sb, name, "tensors")
            if sa != shape:
                a = tuple(A.broadcast_values(a, sa, shape))
            if sb != shape:
                b = tuple(A.broadcast_values(b, sb, shape))
        else:
            shape = sa
        if rev:
            return _ten(A.map2(op, b, a), shape)
        return _ten(A.map2(op, a, b), shape)

    @overload
    def __add__(self: tensor[int], other: _TIntLike) -> tensor[int]: ...
    @overload
    def __add__(self, other: _TAnyLike) -> tensor[float]: ...
    def __add__(self, other: Any) -> Any:
        return self._binop(other, _op.add, "add")

    @overload
    def __radd__(self: tensor[int], other: value[int] | int) -> tensor[int]: ...
    @overload
    def __radd__(self, other: value[Any] | float) -> tensor[float]: ...
    def __radd__(self, other: Any) -> Any:
        return self._binop(other, _op.add, "add", True)

    @overload
    def __sub__(self: tensor[int], other: _TIntLike) -> tensor[int]: ...
    @overload
    def __sub__(self, other: _TAnyLike) -> tensor[float]: ...
    def __sub__(self, other: Any) -> Any:
        return self._binop(other, _op.sub, "sub")

    @overload
    def __rsub__(self: tensor[int], other: value[int] | int) -> tensor[int]: ...
    @overload
    def __rsub__(self, other: value[Any] | float) -> tensor[float]: ...
    def __rsub__(self, other: Any) -> Any:
        return self._binop(other, _op.sub, "sub", True)

    @overload
    def __mul__(self: tensor[int], other: _TIntLike) -> tensor[int]: ...
    @overload
    def __mul__(self, other: _TAnyLike) -> tensor[float]: ...
    def __mul__(self, other: Any) -> Any:
        return self._binop(other, _op.mul, "mul")

    @overload
    def __rmul__(self: tensor[int], other: value[int] | int) -> tensor[int]: ...
    @overload
    def __rmul__(self, other: value[Any] | float) -> tensor[float]: ...
    def __rmul__(self, other: Any) -> Any:
        return self._binop(other, _op.mul, "mul", True)

    def __truediv__(self, other: _TAnyLike) -> tensor[float]:
        return self._binop(other, _op.truediv, "truediv")  # type: ignore[no-any-return]

    def __rtruediv__(self, other: value[Any] | float) -> tensor[float]:
        return self._binop(other, _op.truediv, "truediv", True)  # type: ignore[no-any-return]

    @overload
    def __floordiv__(self: tensor[int], other: _TIntLike) -> tensor[int]: ...
    @overload
    def __floordiv__(self, other: _TAnyLike) -> tensor[float]: ...
    def __floordiv__(self, other: Any) -> Any:
        return self._binop(other, _op.floordiv, "floordiv")

    @overload
    def __rfloordiv__(self: tensor[int], other: value[int] | int) -> tensor[int]: ...
    @overload
    def __rfloordiv__(self, other: value[Any] | float) -> tensor[float]: ...
    def __rfloordiv__(self, other: Any) -> Any:
        return self._binop(other, _op.floordiv, "floordiv", True)

    @overload
    def __mod__(self: tensor[int], other: _TIntLike) -> tensor[int]: ...
    @overload
    def __mod__(self, other: _TAnyLike) -> tensor[float]: ...
    def __mod__(self, other: Any) -> Any:
        return self._binop(other, _op.mod, "mod")

    @overload
    def __rmod__(self: tensor[int], other: value[int] | int) -> tensor[int]: ...
    @overload
    def __rmod__(self, other: value[Any] | float) -> tensor[float]: ...
    def __rmod__(self, other: Any) -> Any:
        return self._binop(other, _op.mod, "mod", True)

    @overload
    def __pow__(self: tensor[int], other: _TIntLike) -> tensor[int]: ...
    @overload
    def __pow__(self, other: _TAnyLike) -> tensor[float]: ...
    def __pow__(self, other: Any) -> Any:
        return self._binop(other, _op.pow, "pow")

    @overload
    def __rpow__(self: tensor[int], other: value[int] | int) -> tensor[int]: ...
    @overload
    def __rpow__(self, other: value[Any] | float) -> tensor[float]: ...
    def __rpow__(self, other: Any) -> Any:
        return self._binop(other, _op.pow, "pow", True)

    def __neg__(self) -> tensor[TNum]:
        return _ten(tuple(map(_op.neg, self.values)), self.shape)

    def __pos__(self) -> tensor[TNum]:
        return self

    def __abs__(self) -> tensor[TNum]:
        return _ten(tuple(map(abs, self.values)), self.shape)

    def __lt__(self, other: _TAnyLike) -> tensor[int]:
        return self._binop(other, _op.lt, "lt")  # type: ignore[no-any-return]

    def __le__(self, other: _TAnyLike) -> tensor[int]:
        return self._binop(other, _op.le, "le")  # type: ignore[no-any-return]

    def __gt__(self, other: _TAnyLike) -> tensor[int]:
        return self._binop(other, _op.gt, "gt")  # type: ignore[no-any-return]

    def __ge__(self, other: _TAnyLike) -> tensor[int]:
        return self._binop(other, _op.ge, "ge")  # type: ignore[no-any-return]

    def __eq__(self, other: _TAnyLike) -> tensor[int]:  # type: ignore[override]
        return self._binop(other, _op.eq, "eq")  # type: ignore[no-any-return]

    def __ne__(self, other: _TAnyLike) -> tensor[int]:  # type: ignore[override]
        return self._binop(other, _op.ne, "ne")  # type: ignore[no-any-return]

    __hash__ = None  # type: ignore[assignment]

    def map(self, func: Callable[[Any], value[U] | U]) -> tensor[U]:
        """A tensor of the same shape holding ``func(x)`` for each element ``x``."""
        return _ten(tuple(map(func, self.values)), self.shape)

    def homogenize(self) -> tensor[TNum]:
        """If any element is a value, the plain numbers become ``cp.value`` inputs too."""
        if any(type(x) is _V for x in self.values):
            return _ten(tuple(x if type(x) is _V else value(cast(Any, x)) for x in self.values), self.shape)
        return self

    # --- shape ----------------------------------------------------------------------------

    def reshape(self, *new_shape: int | Sequence[int]) -> tensor[TNum]:
        """The same elements with a new shape; one dimension may be negative (inferred), as
        in NumPy."""
        dims = reshape_dims(new_shape, len(self.values), f"a tensor of shape {self.shape}")
        return _ten(self.values, dims)

    def flatten(self) -> tensor[TNum]:
        """The elements as a 1-D tensor (row-major order)."""
        return _ten(self.values, (len(self.values),))

    def transpose(self, *axes: int | Sequence[int]) -> tensor[TNum]:
        """The axes permuted (reversed if none are given)."""
        nd = len(self.shape)
        if len(axes) == 1 and not isinstance(axes[0], int):
            perm = tuple(_op.index(a) for a in axes[0])
        elif axes:
            perm = tuple(_op.index(a) for a in axes)  # type: ignore[arg-type]
        else:
            perm = tuple(range(nd - 1, -1, -1))
        perm = tuple(a + nd if a < 0 else a for a in perm)
        if sorted(perm) != list(range(nd)):
            raise ValueError(f"axes {perm} do not permute the axes of a tensor of shape {self.shape}")
        if nd < 2 or perm == tuple(range(nd)):
            return self
        st = A.strides_of(self.shape)
        idx = A.gather_indices([range(self.shape[a]) for a in perm], [st[a] for a in perm])
        vals = self.values
        return _ten(tuple([vals[i] for i in idx]), tuple(self.shape[a] for a in perm))

    @property
    def T(self) -> tensor[TNum]:
        """The transpose (all axes reversed)."""
        return self.transpose()

    # --- reductions and products ----------------------------------------------------------

    def _norm_axes(self, axis: int | Sequence[int]) -> list[int]:
        nd = len(self.shape)
        one = plain_int(axis)
        axes: list[Any] = [one] if one is not None else list(cast(Sequence[int], axis))
        out: list[int] = []
        for item in axes:
            a = _op.index(item)
            if not -nd <= a < nd:
                raise ValueError(f"axis {a} is out of bounds for a tensor of shape {self.shape}")
            a %= nd
            if a not in out:
                out.append(a)
        return sorted(out)

    @overload
    def sum(self: tensor[int], axis: None = None, keepdims: bool = False) -> int | value[int]: ...
    @overload
    def sum(self: tensor[float], axis: None = None, keepdims: bool = False) -> float | value[float]: ...
    @overload
    def sum(self, axis: int | Sequence[int], keepdims: bool = False) -> tensor[TNum]: ...
    def sum(self, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Any:
        """Sum of all elements (a scalar), or along the given axis/axes (a tensor; a scalar if
        every axis is summed, as in Copapy). Terms are added in the documented order."""
        if axis is None:
            s = _packing.total(self) if _packing.wants(self) else None
            if s is None:
                s = A.sum_elements(self.values)
            return _ten((s,), (1,) * len(self.shape)) if keepdims else s
        axes = self._norm_axes(axis)
        shape = self.shape
        kept = [d for d in range(len(shape)) if d not in axes]
        if not kept and not keepdims:
            return A.sum_elements(self.values)
        order = kept + axes
        st = A.strides_of(shape)
        idx = A.gather_indices([range(shape[d]) for d in order], [st[d] for d in order])
        vals = self.values
        gathered = [vals[i] for i in idx]
        r = A.prod(shape[d] for d in axes)
        nout = A.prod(shape[d] for d in kept)
        if r == 0:
            out = tuple([0] * nout)
        else:
            out = tuple([A.sum_elements(gathered[j * r:(j + 1) * r]) for j in range(nout)])
        if keepdims:
            return _ten(out, tuple(1 if d in axes else shape[d] for d in range(len(shape))))
        return _ten(out, tuple(shape[d] for d in kept))

    def mean(self, axis: int | Sequence[int] | None = None) -> Any:
        """Mean of all elements, or along the given axis/axes: the sum divided by the count,
        in float (``A.mean_terms``: int and bool values are converted to float32 first, so
        the mean never wraps). An empty mean is NaN, with NumPy's ``RuntimeWarning``."""
        n = len(self.values) if axis is None else A.prod(self.shape[a] for a in self._norm_axes(axis))
        total = A.mean_terms(self).sum(axis)
        if n == 0:
            A.warn_empty_mean()
            if isinstance(total, tensor):
                return _ten((math.nan,) * len(total.values), total.shape)
            return math.nan
        return total / n

    def trace(self) -> value[TNum] | TNum:
        """Sum of the diagonal of a square matrix (documented order)."""
        if len(self.shape) != 2 or self.shape[0] != self.shape[1]:
            raise ValueError(f"trace needs a square matrix, got shape {self.shape}")
        n = self.shape[0]
        return A.sum_elements(self.values[:: n + 1]) if n else 0

    def matmul(self, other: Any) -> Any:
        """Matrix product ``self @ other`` (see ``__matmul__``)."""
        return _matmul(self, other)

    @overload
    def __matmul__(self: tensor[int], other: tensor[int] | vector[int]) -> tensor[int]: ...
    @overload
    def __matmul__(self, other: tensor[Any] | vector[Any] | Sequence[Any]) -> tensor[float]: ...
    def __matmul__(self, other: Any) -> Any:
        """Matrix product. 2-D @ 2-D gives a matrix, 2-D @ 1-D and 1-D @ 2-D a 1-D tensor, and
        1-D @ 1-D the dot product, a scalar (typed as a tensor for brevity; use ``vector`` for
        dot products). Each entry is a sum of products in the documented order."""
        if isinstance(other, _SCALARS):
            raise ValueError("matmul: an operand is a scalar; use * to scale")
        return _matmul(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        if isinstance(other, _SCALARS):
            raise ValueError("matmul: an operand is a scalar; use * to scale")
        return _matmul(other, self)


def _nest(vals: Sequence[Any], shape: tuple[int, ...]) -> list[Any]:
    if len(shape) == 1:
        return list(vals)
    step = A.prod(shape[1:])
    return [_nest(vals[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def _matmul(a: Any, b: Any) -> Any:
    if not isinstance(a, A.ArrayBase):
        a = tensor(a)
    if not isinstance(b, A.ArrayBase):
        b = tensor(b)
    sa, sb = a.shape, b.shape
    if not sa or not sb:
        raise ValueError(f"matmul: an operand is 0-d (shapes {sa} and {sb}); use * to scale")
    if len(sa) > 2 or len(sb) > 2:
        raise NotImplementedError(f"matmul of tensors with more than 2 dimensions (shapes {sa} and {sb})")
    k = sa[-1]
    if sb[0] != k:
        raise A.shape_error("matmul", "tensors", sa, sb)
    av, bv = a.values, b.values
    if len(sa) == 1 and len(sb) == 1:
        return A.dot_elements(av, bv)
    if _packing.wants(a) or _packing.wants(b):
        m, p = (sa[0] if len(sa) == 2 else 1), (sb[1] if len(sb) == 2 else 1)
        node = _packing.matmul(a, b, m, k, p)
        if node is not None:
            shape = tuple(d for d, keep in ((m, len(sa) == 2), (p, len(sb) == 2)) if keep)
            return _packed_ten(node, shape)
    rows = [av[i * k:(i + 1) * k] for i in range(sa[0])] if len(sa) == 2 else [av]
    n = sb[1] if len(sb) == 2 else 1
    cols = [bv[j::n] for j in range(n)] if len(sb) == 2 else [bv]
    rfast = [A.all_traced(r) for r in rows]
    cfast = [A.all_traced(c) for c in cols]
    dot = A.dot_elements
    pairs_c = list(zip(cols, cfast, strict=True))
    out = tuple([dot(r, c, rf and cf) for r, rf in zip(rows, rfast, strict=True) for c, cf in pairs_c])
    if len(sa) == 2 and len(sb) == 2:
        return _ten(out, (sa[0], n))
    return _ten(out, (len(out),))


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
    return _ten((0,) * A.prod(dims), dims)


def ones(shape: int | Sequence[int]) -> tensor[int]:
    """A tensor of the constant 1 (plain numbers)."""
    dims = _shape_arg(shape)
    return _ten((1,) * A.prod(dims), dims)


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
    nd = pieces[0].ndim
    if nd == 0:
        raise ValueError("concat: 0-d tensors cannot be joined; use vectors or 1-D tensors")
    ax = axis + nd if axis < 0 else axis
    if not 0 <= ax < nd:
        _bad_axis(axis, pieces[0].shape)
    base = pieces[0].shape
    for p in pieces[1:]:
        if p.ndim != nd or p.shape[:ax] != base[:ax] or p.shape[ax + 1:] != base[ax + 1:]:
            raise ValueError(f"cannot concatenate tensors of shapes {base} and {p.shape} along axis {ax}")
    outer = A.prod(base[:ax])
    vals: list[Any] = []
    chunks = [(p.values, A.prod(p.shape[ax:])) for p in pieces]
    for o in range(outer):
        for pv, n in chunks:
            vals.extend(pv[o * n:(o + 1) * n])
    shape = base[:ax] + (sum(p.shape[ax] for p in pieces),) + base[ax + 1:]
    return _ten(tuple(vals), shape)


def _bad_axis(axis: int, shape: tuple[int, ...]) -> Any:
    raise ValueError(f"axis {axis} is out of bounds for pieces of shape {shape}")
