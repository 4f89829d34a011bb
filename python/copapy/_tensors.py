"""``cp.tensor`` (also ``cp.matrix``): an n-D container of traced values and/or plain numbers.

``cp.vector`` (``_vectors``) is a 1-D tensor with its geometric methods; every method here
(reductions over axes, ``min``/``max``, ``sort``, ``reshape``, ``T``, ``astype``, …) works on
both, with the same names and semantics as ``cp.array``'s, so code never depends on which
storage a value got. Shapes, axes, broadcasting, indexing, nested data and the summation
order are the Rust n-d core's (``_core.nd_*``, ``crates/copapy-python/src/ndcore/``);
elements ``_elements``'; the array-stencil path for large containers ``_packing``'.
The constructors (``zeros ones arange eye identity diagonal concat``) are ``_constructors``'."""

from __future__ import annotations

import math
import operator as _op
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, ClassVar, SupportsIndex, TypeAlias, TypeVar, cast, overload

from . import _core, _packing
from . import _elements as A
from ._array import array
from ._core import nd_gather as _gather
from ._core import value
from ._elements import TNum

U = TypeVar("U", int, float)

_TIntLike: TypeAlias = "tensor[int] | value[int] | int"
_TAnyLike: TypeAlias = "tensor[Any] | value[Any] | float | Sequence[Any]"
_TensorSource: TypeAlias = (
    "TNum | value[TNum] | tensor[TNum] | Sequence[TNum | value[TNum]]"
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


def _packed_ten(node: Any, shape: tuple[int, ...], cls: type[tensor[Any]] | None = None) -> tensor[Any]:
    """A tensor (or ``cls``) of the elements of array ``node`` (aliases, no code), packed by it."""
    t: tensor[Any] = _new(cls or tensor)
    t.values = tuple(_core.array_elements(node))
    t.shape = shape
    t._arr = node
    return t


def _elementwise(op: Callable[[Any, Any], Any], name: str, rev: bool = False) -> Callable[..., Any]:
    """The method of a binary operator without narrower typing: ``tensor._binop`` with ``op``."""

    def method(self: tensor[Any], other: Any) -> Any:
        return self._binop(other, op, name, rev)

    return method


def _nan_fold(a: Any, b: Any, which: str) -> Any:
    """NumPy's ``minimum``/``maximum`` of two elements: traced ones by one stencil, numbers
    in Python (a NaN wins, as in NumPy)."""
    if type(a) is _V or type(b) is _V:
        return _core.math_binary("min" if which == "min" else "max", a, b)
    if a != a or b != b:
        return a if a != a else b
    return min(a, b) if which == "min" else max(a, b)


def _nan_last(x: Any) -> tuple[bool, Any]:
    return (x != x, 0 if x != x else x)


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
    partial sums (term k into partial k % 8), combined pairwise (``_elements``).
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
        else:
            leaves, vshape = _core.nd_flatten(values, "tensor")
            flat = tuple(leaves)
        if shape is not None:
            new_shape = tuple(_op.index(d) for d in shape)
            if any(d < 0 for d in new_shape) or math.prod(new_shape) != len(flat):
                raise ValueError(f"cannot make a tensor of shape {new_shape} from {len(flat)} elements")
            vshape = new_shape
        self.values = flat
        self.shape = vshape

    def _with_values(self, vals: tuple[Any, ...]) -> tensor[Any]:
        return self._like(vals, self.shape)

    def _like(self, vals: tuple[Any, ...], shape: tuple[int, ...]) -> tensor[Any]:
        """A container of this kind (a vector stays a vector while 1-D) from new contents."""
        return _ten(vals, shape)

    def _result_kind(self, other: Any) -> type[tensor[Any]]:
        """The class of ``self op other`` (a vector only between vectors and sequences)."""
        return tensor

    def _from_node(self, node: Any, shape: tuple[int, ...]) -> tensor[Any]:
        return _packed_ten(node, shape, type(self) if len(shape) == 1 else tensor)

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
        return _core.nd_nest(list(self.values), self.shape)

    # --- indexing -------------------------------------------------------------------------

    def get_scalar(self, *key: int) -> value[TNum] | TNum:
        """The element at the given indices (one per dimension)."""
        if len(key) != len(self.shape):
            raise IndexError(
                f"get_scalar needs {len(self.shape)} indices for shape {self.shape}, got {len(key)}"
            )
        return self.values[_core.nd_view(key, self.shape, "tensor")[0]]

    def __getitem__(self, key: SupportsIndex | slice | tuple[SupportsIndex | slice, ...]) -> tensor[TNum]:
        shape = self.shape
        if not shape:
            raise TypeError("a 0-d tensor cannot be indexed")
        keys = key if isinstance(key, tuple) else (key,)
        if any(isinstance(k, value) for k in keys):
            # runtime indices: wrapped once if negative, then clamped (a lookup table)
            return _packed_ten(*_packing.runtime_subscript(self, keys))
        offset, sub, strides = _core.nd_view(key, shape, "tensor")
        return _ten(_gather(self.values, offset, sub, strides), sub)

    def __iter__(self) -> Iterator[tensor[TNum]]:
        if not self.shape:
            raise TypeError("iteration over a 0-d tensor")
        sub = self.shape[1:]
        n = math.prod(sub)
        vals = self.values
        for i in range(self.shape[0]):
            yield _ten(vals[i * n:(i + 1) * n], sub)

    # --- elementwise ----------------------------------------------------------------------

    def _binop(self, other: Any, op: Callable[[Any, Any], Any], name: str, rev: bool = False) -> Any:
        """``self op other`` (``other op self`` if ``rev``) element by element, broadcast as
        NumPy; one array stencil when the container packs (``_packing``)."""
        kind = self._result_kind(other)
        if _packing.wants(self) and (
            isinstance(other, _SCALARS) or (isinstance(other, tensor) and other.shape == self.shape)
        ):
            node = _packing.binop(self, other, name, rev)
            if node is not None:
                return _packed_ten(node, self.shape, kind)
        make = _ten if kind is tensor else self._like
        if isinstance(other, _SCALARS):
            if rev:
                return make(tuple([op(other, x) for x in self.values]), self.shape)
            return make(tuple([op(x, other) for x in self.values]), self.shape)
        if not isinstance(other, tensor):
            if isinstance(other, A.ArrayBase):
                return NotImplemented  # a quaternion: its own reflected method decides
            s = A.scalar_or_none(other)
            if s is not None:
                return self._binop(s, op, name, rev)
            if isinstance(other, (str, bytes)) or not isinstance(other, Iterable):
                return NotImplemented
            other = tensor(other)
        a, b = self.values, other.values
        sa, sb = self.shape, other.shape
        shape = sa
        if sa != sb:
            what = "vectors" if kind is not tensor else "tensors"
            shape = _core.nd_broadcast(sb, sa, name, what) if rev else _core.nd_broadcast(sa, sb, name, what)
            if sa != shape:
                a = _gather(a, 0, shape, _core.nd_broadcast_strides(sa, shape, what))
            if sb != shape:
                b = _gather(b, 0, shape, _core.nd_broadcast_strides(sb, shape, what))
        if len(shape) != 1:
            make = _ten
        return make(tuple(map(op, b, a) if rev else map(op, a, b)), shape)

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
        return self._like(tuple(map(_op.neg, self.values)), self.shape)

    def __pos__(self) -> tensor[TNum]:
        return self

    def __abs__(self) -> tensor[TNum]:
        return self._like(tuple(map(abs, self.values)), self.shape)

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

    # bitwise operators of int and bool elements, as ``cp.array``'s
    __and__, __rand__ = _elementwise(_op.and_, "and"), _elementwise(_op.and_, "and", True)
    __or__, __ror__ = _elementwise(_op.or_, "or"), _elementwise(_op.or_, "or", True)
    __xor__, __rxor__ = _elementwise(_op.xor, "xor"), _elementwise(_op.xor, "xor", True)
    __lshift__, __rlshift__ = _elementwise(_op.lshift, "lshift"), _elementwise(_op.lshift, "lshift", True)
    __rshift__, __rrshift__ = _elementwise(_op.rshift, "rshift"), _elementwise(_op.rshift, "rshift", True)

    def map(self, func: Callable[[Any], value[U] | U]) -> tensor[U]:
        """A tensor of the same shape holding ``func(x)`` for each element ``x``."""
        return self._like(tuple(map(func, self.values)), self.shape)

    def homogenize(self) -> tensor[TNum]:
        """If any element is a value, the plain numbers become ``cp.value`` inputs too."""
        if any(type(x) is _V for x in self.values):
            vals = tuple(x if type(x) is _V else value(cast(Any, x)) for x in self.values)
            return self._like(vals, self.shape)
        return self

    # --- shape ----------------------------------------------------------------------------

    def reshape(self, *new_shape: int | Sequence[int]) -> tensor[TNum]:
        """The same elements with a new shape; one dimension may be negative (inferred), as
        in NumPy."""
        dims = _core.nd_reshape(new_shape, len(self.values), f"a tensor of shape {self.shape}")
        return _ten(self.values, dims)

    def flatten(self) -> tensor[TNum]:
        """The elements as a 1-D container (row-major order)."""
        return self._like(self.values, (len(self.values),))

    ravel = flatten

    def transpose(self, *axes: int | Sequence[int]) -> tensor[TNum]:
        """The axes permuted (reversed if none are given)."""
        perm = _core.nd_permutation(axes, len(self.shape), f"a tensor of shape {self.shape}")
        if perm == list(range(len(self.shape))):
            return self
        shape, strides = _core.nd_transposed(self.shape, perm)
        return _ten(_gather(self.values, 0, shape, strides), shape)

    @property
    def T(self) -> tensor[TNum]:
        """The transpose (all axes reversed)."""
        return self.transpose()

    def broadcast_to(self, shape: Sequence[int]) -> tensor[TNum]:
        """The elements repeated to ``shape`` by NumPy's broadcasting rules."""
        target = tuple(shape)
        strides = _core.nd_broadcast_strides(self.shape, target, "a tensor")
        return self._like(_gather(self.values, 0, target, strides), target)

    def astype(self, dtype: str) -> tensor[Any]:
        """The elements converted to ``dtype`` ('float', 'int', 'bool', 'byte'; the rules of
        ``cp.cast``): one loop stencil when the container packs, else one per traced element."""
        node = _packing.array_of(self)
        if node is not None:
            if dtype == "byte":
                out = _core.array_unary("tobyte", node)
            elif node.dtype == dtype:
                return self
            else:
                out = _core.array_cast(node, dtype)
            return self._from_node(out, self.shape)
        return self._like(tuple(A.cast_scalar(v, dtype) for v in self.values), self.shape)

    def to_numpy(self, target: Any = None) -> Any:
        """The elements as a NumPy array: the constants themselves, or with ``target`` the
        current contents there (float32, int32 or bool, as ``cp.array.to_numpy``)."""
        import numpy as np

        if target is None:
            return np.asarray(self)
        dtype = {"float": np.float32, "int": np.int32, "bool": np.bool_}[self.dtype]
        return np.asarray(target.read_value(self), dtype=dtype).reshape(self.shape)

    # --- reductions and products ----------------------------------------------------------

    def _reduce(self, axis: Any, keepdims: bool, whole: Callable[[Sequence[Any]], Any],
                packed: Callable[[Any], Any] | None) -> Any:
        """A reduction of every element (``axis=None``) or over axes, in the documented
        order (``_core.nd_groups``); one array stencil for a packed whole."""
        shape = self.shape
        axes = _core.nd_axes(axis, len(shape), f"a tensor of shape {shape}")
        if axes is None or len(axes) == len(shape):
            s = packed(self) if packed is not None and _packing.wants(self) else None
            if s is None:
                s = whole(self.values)
            return _ten((s,), (1,) * len(shape)) if keepdims else s
        if not axes:
            return self
        out = tuple([whole(terms) for terms in _core.nd_groups(self.values, shape, axes)])
        if keepdims:
            return _ten(out, tuple(1 if d in axes else n for d, n in enumerate(shape)))
        return self._like(out, tuple(n for d, n in enumerate(shape) if d not in axes))

    @overload
    def sum(self: tensor[int], axis: None = None, keepdims: bool = False) -> int | value[int]: ...
    @overload
    def sum(self: tensor[float], axis: None = None, keepdims: bool = False) -> float | value[float]: ...
    @overload
    def sum(self, axis: int | Sequence[int], keepdims: bool = False) -> tensor[TNum]: ...
    def sum(self, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Any:
        """Sum of all elements (a scalar), or along the given axis/axes (a tensor; a scalar if
        every axis is summed, as in Copapy). Terms are added in the documented order."""
        return self._reduce(axis, keepdims, A.sum_elements, _packing.total)

    def _extreme(self, which: str, axis: Any, keepdims: bool) -> Any:
        if not self.values:
            raise ValueError(f"zero-size tensor of shape {self.shape} has no {which}imum")

        def whole(xs: Sequence[Any]) -> Any:
            return _core.nd_tree_fold(xs, lambda a, b: _nan_fold(a, b, which))

        def packed(t: tensor[Any]) -> Any:
            node = _packing.array_of(t)
            return None if node is None else _core.array_kernel(
                "min" if which == "min" else "max", [node], [])

        return self._reduce(axis, keepdims, whole, packed)

    def min(self, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Any:
        """The smallest element, or along the given axis/axes: NumPy's ``minimum`` folded in
        the order of the sums (a NaN gives NaN), as ``cp.array.min``."""
        return self._extreme("min", axis, keepdims)

    def max(self, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Any:
        """The largest element, or along the given axis/axes: NumPy's ``maximum`` folded in
        the order of the sums (a NaN gives NaN), as ``cp.array.max``."""
        return self._extreme("max", axis, keepdims)

    def mean(self, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Any:
        """Mean of all elements, or along the given axis/axes: the sum divided by the count,
        in float (``float_terms``: int and bool values are converted to float32 first, so
        the mean never wraps). An empty mean is NaN, with NumPy's ``RuntimeWarning``."""
        axes = _core.nd_axes(axis, len(self.shape), f"a tensor of shape {self.shape}")
        n = len(self.values) if axes is None else math.prod(self.shape[a] for a in axes)
        total = float_terms(self).sum(axis, keepdims)
        if n == 0:
            A.warn_empty_mean()
            if isinstance(total, tensor):
                return _ten((math.nan,) * len(total.values), total.shape)
            return math.nan
        return total / n

    def _sorted(self, indices: bool) -> tensor[Any]:
        if len(self.shape) != 1:
            raise ValueError(f"sort and argsort take a 1-D container, got shape {self.shape}: "
                             "flatten it or index a row")
        vals = self.values
        if not any(type(x) is _V for x in vals):
            order = sorted(range(len(vals)), key=lambda i: _nan_last(vals[i]))
            return self._like(tuple(order) if indices else tuple(vals[i] for i in order), self.shape)
        node = _core.array_kernel("argsort" if indices else "sort", [_packing.lookup_array(self)], [])
        return self._from_node(node, self.shape)

    def sort(self) -> tensor[TNum]:
        """The sorted copy of a 1-D container, as ``np.sort(kind='stable')`` (NaNs last):
        one sorting-network stencil when traced (the same as ``cp.sort``)."""
        return self._sorted(False)

    def argsort(self) -> tensor[int]:
        """The indices that sort a 1-D container, as ``np.argsort(kind='stable')``."""
        return self._sorted(True)

    def dot(self, other: Any) -> Any:
        """``numpy.dot``: the dot product of 1-D operands, else the matrix product."""
        return _matmul(self, other)

    def element(self, flat_index: int) -> value[TNum] | TNum:
        """The element at ``flat_index`` of the row-major order (negative from the end), as
        ``cp.array.element``."""
        n = len(self.values)
        i = _op.index(flat_index)
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of range for {n} elements")
        return self.values[i]

    def get_values(self, data: Sequence[Any]) -> Any:
        """Flat element data (one number per element, row-major) nested as lists of this
        container's shape, as ``cp.array.get_values``."""
        flat = list(data)
        if len(flat) != len(self.values):
            raise ValueError(f"get_values needs {len(self.values)} elements for shape {self.shape}, "
                             f"got {len(flat)}")
        return _core.nd_nest(flat, self.shape)

    flatten_data = staticmethod(array.flatten_data)

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
    def __matmul__(self: tensor[int], other: tensor[int]) -> tensor[int]: ...
    @overload
    def __matmul__(self, other: tensor[Any] | Sequence[Any]) -> tensor[float]: ...
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
        raise _core.nd_shape_error("matmul", "tensors", sa, sb)
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
    dot = A.dot_elements
    out = tuple([dot(r, c) for r in rows for c in cols])
    if len(sa) == 2 and len(sb) == 2:
        return _ten(out, (sa[0], n))
    return _ten(out, (len(out),))




def float_terms(x: tensor[Any]) -> tensor[Any]:
    """``x`` ready to be averaged: if it holds int or bool values, ``x`` converted to float
    (one stencil per value, or one loop for a packed container), so the sum is a float sum
    and cannot wrap at 32 bits; NumPy too accumulates int means in floating point (float64;
    copapy's mean is float32, the sum in the documented order of the converted terms). Plain
    numbers need nothing: Python sums them exactly."""
    if all(type(v) is not _V or v.dtype == "float" for v in x.values):
        return x
    return x.astype("float")
