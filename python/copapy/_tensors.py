"""``cp.tensor`` (also ``cp.matrix``): an n-D container of traced values and/or plain numbers.

``cp.vector`` (``_vectors``) is a 1-D tensor with its geometric methods. The methods every
container has (indexing, reductions, products, ``sort``, ``reshape``, ``T``, ``astype``,
the operators, …) are ``_ndmethods.NdMethods``', written once for tensors and ``cp.array``
in the Rust n-d core (``ndcore/``); this module holds the storage (a tuple of leaves,
optionally packed into an array node: ``_packing``), its hooks for the core (``_like``,
``_from_node``, ``_result_kind``) and the methods' types. The constructors
(``zeros ones arange eye identity diagonal concat``) are ``_constructors``'."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias, overload

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
    numbers, stored flat in row-major order (``values``) with a ``shape``. Operators broadcast
    as NumPy's; plain-number elements stay plain numbers (folded while tracing), so ``zeros``,
    ``eye`` and sparse constant matrices cost only their non-zero entries (in products a
    constant 0 drops its term, a constant 1 is skipped). Sums (``sum``, ``@``, ``trace``,
    ``mean``) add in the documented order, as ``cp.array``'s. As in Copapy, ``t[i]`` is a
    tensor of one dimension less; ``get_scalar(i, j)`` is the element itself.

    >>> m = cp.tensor([[cp.value(1.0), 0.0], [0.0, 2.0]])
    >>> y = m @ [3.0, 4.0]  # one traced multiplication; the constant terms fold
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
        self.values, self.shape = _core.nd_tensor_leaves(values, shape)

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

    if TYPE_CHECKING:  # the methods are NdMethods'; their types for tensors
        @overload
        def __matmul__(self: tensor[int], other: tensor[int]) -> tensor[int]: ...
        @overload
        def __matmul__(self, other: tensor[Any] | Sequence[Any]) -> tensor[float]: ...
        def __matmul__(self, other: Any) -> Any: ...
        @overload
        def matmul(self: tensor[int], other: tensor[int]) -> tensor[int]: ...
        @overload
        def matmul(self, other: tensor[Any] | Sequence[Any]) -> tensor[float]: ...
        def matmul(self, other: Any) -> Any: ...
        def __rmatmul__(self, other: Sequence[Any]) -> tensor[Any]: ...
        def dot(self, other: Any) -> Any: ...
        def argsort(self) -> tensor[int]: ...
        def reshape(self, *shape: int | Sequence[int]) -> tensor[TNum]: ...
