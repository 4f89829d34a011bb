"""``cp.tensor`` (also ``cp.matrix``): an n-D container of traced values and/or plain numbers.

``cp.vector`` (``_vectors``) is a 1-D tensor with its geometric methods. The methods every
container has (indexing, reductions over axes, ``min``/``max``, ``sort``, ``reshape``,
``T``, ``astype``, the operators, …) are ``_ndmethods.NdMethods``', written once for tensors and
``cp.array`` in the Rust n-d core (``crates/copapy-python/src/ndcore/``), so code never
depends on which storage a value got; this module holds the storage (a tuple of leaves,
optionally packed into an array node: ``_packing``), its hooks for the core (``_like``,
``_from_node``, ``_result_kind``), the types of the operators and of indexing, and products. The
constructors (``zeros ones arange eye identity diagonal concat``) are ``_constructors``'."""

from __future__ import annotations

import math
import operator as _op
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, ClassVar, TypeAlias, overload

from . import _core, _packing
from . import _elements as A
from ._core import value
from ._elements import TNum
from ._ndmethods import NdMethods
from ._typed_ops import Arith, Compare, Div, Subscript

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


class tensor(A.ArrayBase[TNum], NdMethods[TNum]):
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

    @classmethod
    def _from_node(cls, node: Any, shape: tuple[int, ...]) -> tensor[Any]:
        """A container of this kind (a tensor unless 1-D) aliasing array ``node``."""
        return _packed_ten(node, shape, cls if len(shape) == 1 else tensor)

    def __repr__(self) -> str:
        if len(self.values) <= 64:
            return f"tensor({self.tolist()!r})"
        return f"tensor(shape={self.shape}, values=...)"

    # indexing is NdMethods' (``ndcore/index.rs``); its types, declared once (``_typed_ops``)
    __getitem__: Subscript[tensor[TNum], tensor[TNum]]  # type: ignore[assignment]
    __iter__: Callable[[], Iterator[tensor[TNum]]]

    # --- elementwise ----------------------------------------------------------------------

    # the operators' types, written once for every container (``_typed_ops``); the methods
    # themselves are NdMethods'
    __add__: Arith[TNum, tensor[int], tensor[float]]
    __radd__: Arith[TNum, tensor[int], tensor[float]]
    __sub__: Arith[TNum, tensor[int], tensor[float]]
    __rsub__: Arith[TNum, tensor[int], tensor[float]]
    __mul__: Arith[TNum, tensor[int], tensor[float]]
    __rmul__: Arith[TNum, tensor[int], tensor[float]]
    __floordiv__: Arith[TNum, tensor[int], tensor[float]]
    __rfloordiv__: Arith[TNum, tensor[int], tensor[float]]
    __mod__: Arith[TNum, tensor[int], tensor[float]]
    __rmod__: Arith[TNum, tensor[int], tensor[float]]
    __pow__: Arith[TNum, tensor[int], tensor[float]]
    __rpow__: Arith[TNum, tensor[int], tensor[float]]
    __truediv__: Div[TNum, tensor[int], tensor[float]]
    __rtruediv__: Div[TNum, tensor[int], tensor[float]]
    __lt__: Compare[TNum, tensor[int], tensor[float]]
    __le__: Compare[TNum, tensor[int], tensor[float]]
    __gt__: Compare[TNum, tensor[int], tensor[float]]
    __ge__: Compare[TNum, tensor[int], tensor[float]]
    __eq__: Compare[TNum, tensor[int], tensor[float]]  # type: ignore[assignment]
    __ne__: Compare[TNum, tensor[int], tensor[float]]  # type: ignore[assignment]

    __hash__ = None  # type: ignore[assignment]

    def to_numpy(self, target: Any = None) -> Any:
        """The elements as a NumPy array: the constants themselves, or with ``target`` the
        current contents there (float32, int32 or bool, as ``cp.array.to_numpy``)."""
        import numpy as np

        if target is None:
            return np.asarray(self)
        dtype = {"float": np.float32, "int": np.int32, "bool": np.bool_}[self.dtype]
        return np.asarray(target.read_value(self), dtype=dtype).reshape(self.shape)

    def dot(self, other: Any) -> Any:
        """``numpy.dot``: the dot product of 1-D operands, else the matrix product."""
        return _matmul(self, other)

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
    """``x`` ready to be averaged: converted to float if it holds traced int or bool values
    (``mean``'s rule: the sum cannot wrap at 32 bits; plain numbers are summed exactly)."""
    if all(type(v) is not _V or v.dtype == "float" for v in x.values):
        return x
    return x.astype("float")  # type: ignore[no-any-return]
