"""The methods every container has (``cp.tensor``, ``cp.matrix``, ``cp.vector``,
``cp.array``), written once over both storage modes: a tuple of leaves (values and plain
numbers, which keeps Copapy's sparse-constant folding) or one contiguous array node.
Each is one call into the Rust n-d core (``crates/copapy-python/src/ndcore/``: ``storage.rs``
the switch, ``reduce.rs``, ``sort.rs``, ``cast.rs``, ``product.rs``, ``readout.rs``), which
returns the result in the container's own storage mode through its hooks ``_like``
(leaves), ``_from_node`` (a tensor aliasing an array) and ``_of`` (an array).

Reductions (``sum``, ``mean``, ``min``, ``max``, ``trace``) add or fold their terms in one
documented order on every target and in both modes: term k into partial k % 8, then the
partials pairwise (``_elements``); over axes, each result element reduces its terms in
row-major order of the reduced axes. ``min``/``max`` are NumPy's ``minimum``/``maximum``
folded (a NaN gives NaN); ``sort``/``argsort`` are ``kind='stable'`` with NaNs last."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Generic, Self, overload

from . import _core
from ._core import value
from ._elements import Size, TNum


def _operator(op: str, reflected: bool = False) -> Any:
    """The method of a binary operator (``op`` in the op table's spelling): the n-d core's
    ``nd_binary`` (NumPy's broadcasting; ``NotImplemented`` for operands it cannot take).
    Typed Any, so a class may narrow it (overloads, ``_typed_ops``' protocols)."""

    def method(self: Any, other: Any) -> Any:
        return _core.nd_binary(self, other, op, reflected)

    return method


def _product(op: str, reflected: bool = False) -> Any:
    """``@`` (``op`` 'matmul') or ``dot``: the n-d core's ``nd_product`` (NumPy's matmul of
    1-D and 2-D operands; ``dot`` also takes a scalar, and two containers of one size whose
    shapes do not multiply in row-major order, as Copapy's ``array.dot``). Typed per class."""

    def method(self: Any, other: Any) -> Any:
        return _core.nd_product(self, other, op, reflected)

    return method


class NdMethods(Generic[TNum]):
    """The shared method set; a container class adds storage and typing."""

    __slots__ = ()
    shape: tuple[int, ...]

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> Size:
        """Number of elements (an int, as NumPy's; ``size()`` works too, as Copapy's)."""
        return Size(math.prod(self.shape))

    # the operators, one stencil each for an array (a class narrows their types by
    # overloads); ``**`` with an int constant follows the scalar rule (README, "Powers")
    __add__, __radd__ = _operator("add"), _operator("add", True)
    __sub__, __rsub__ = _operator("sub"), _operator("sub", True)
    __mul__, __rmul__ = _operator("mul"), _operator("mul", True)
    __truediv__, __rtruediv__ = _operator("div"), _operator("div", True)
    __floordiv__, __rfloordiv__ = _operator("floordiv"), _operator("floordiv", True)
    __mod__, __rmod__ = _operator("mod"), _operator("mod", True)
    __pow__, __rpow__ = _operator("pow"), _operator("pow", True)
    __and__, __rand__ = _operator("and"), _operator("and", True)
    __or__, __ror__ = _operator("or"), _operator("or", True)
    __xor__, __rxor__ = _operator("xor"), _operator("xor", True)
    __lshift__, __rlshift__ = _operator("shl"), _operator("shl", True)
    __rshift__, __rrshift__ = _operator("shr"), _operator("shr", True)
    __lt__, __le__ = _operator("lt"), _operator("le")
    __gt__, __ge__ = _operator("gt"), _operator("ge")
    __eq__, __ne__ = _operator("eq"), _operator("ne")
    __hash__ = None  # type: ignore[assignment]
    # products: sums of products in the documented order, one stencil for arrays and packs
    __matmul__, __rmatmul__ = _product("matmul"), _product("matmul", True)
    matmul, dot = _product("matmul"), _product("dot")

    # indexing (ndcore/index.rs): NumPy's basic indices (ints, slices with any step, tuples,
    # ``...``, ``None``) and runtime ``cp.value`` indices, wrapped once if negative and then
    # clamped to their axis; an index of every axis gives the element (a tensor's is 0-d)
    def __getitem__(self, key: Any) -> Any:
        return _core.nd_getitem(self, key)

    def __iter__(self) -> Any:
        return _core.nd_iter(self)

    def __len__(self) -> int:
        return _core.nd_len(self)

    def __bool__(self) -> bool:
        """NumPy's rule: the truth value of the one element, ambiguous for none or more (use
        ``.all()`` or ``.any()``). Traced elements, and so an array's, have none while tracing
        (a TypeError pointing to ``cp.iif``, as for a traced scalar)."""
        return _core.nd_bool(self)

    def __neg__(self) -> Self:
        return _core.nd_unary(self, "neg")  # type: ignore[no-any-return]

    def __pos__(self) -> Self:
        return self

    def __abs__(self) -> Self:
        return _core.nd_unary(self, "abs")  # type: ignore[no-any-return]

    @overload
    def sum(self: NdMethods[int], axis: None = None, keepdims: bool = False) -> int | value[int]: ...
    @overload
    def sum(self: NdMethods[float], axis: None = None, keepdims: bool = False) -> float | value[float]: ...
    @overload
    def sum(self, axis: int | Sequence[int], keepdims: bool = False) -> Self: ...
    def sum(self, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Any:
        """Sum of all elements (a scalar), or over ``axis`` (an int or a tuple of ints: a
        container; ``keepdims`` keeps the summed axes with length 1)."""
        return _core.nd_reduce(self, "sum", axis, keepdims)

    def mean(self, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Any:
        """The sum over the number of terms, in float32 (ints never wrap, as NumPy's); an
        empty mean is NaN, with NumPy's RuntimeWarning."""
        return _core.nd_reduce(self, "mean", axis, keepdims)

    def min(self, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Any:
        """NumPy's ``minimum`` folded in the order of the sums (a NaN gives NaN)."""
        return _core.nd_reduce(self, "min", axis, keepdims)

    def max(self, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Any:
        """NumPy's ``maximum`` folded in the order of the sums (a NaN gives NaN)."""
        return _core.nd_reduce(self, "max", axis, keepdims)

    def trace(self) -> Any:
        """Sum of the diagonal of a square matrix (documented order)."""
        return _core.nd_trace(self)

    def sort(self) -> Self:
        """The sorted copy of a 1-D container, ``np.sort(kind='stable')`` (NaNs last; -0.0
        and +0.0 keep their order): one sorting-network stencil when traced (``cp.sort``)."""
        return _core.nd_sort(self, False)  # type: ignore[no-any-return]

    def argsort(self) -> Any:  # typed per class (an int container of its kind)
        """The int indices that sort a 1-D container, ``np.argsort(kind='stable')``."""
        return _core.nd_sort(self, True)

    def astype(self, dtype: str) -> Any:
        """The elements converted to ``dtype`` ('float', 'int', 'bool', 'byte') by ``cp.cast``'s
        rules: one loop stencil for an array or a container that packs."""
        return _core.nd_astype(self, dtype)

    def transpose(self, *axes: int | Sequence[int]) -> Self:
        """The axes permuted (reversed if none are given), as NumPy; a gathered copy."""
        return _core.nd_transpose(self, axes)  # type: ignore[no-any-return]

    @property
    def T(self) -> Self:
        """The transpose (all axes reversed)."""
        return self.transpose()

    def reshape(self, *shape: int | Sequence[int]) -> Any:  # typed per class
        """The same elements with a new shape (ints or one sequence of them; one may be
        negative, inferred as NumPy does); no code. A vector of more dimensions is a tensor."""
        return _core.nd_reshape_to(self, shape)

    def flatten(self) -> Self:
        """The elements as a 1-D container in row-major order; no code."""
        return _core.nd_flat(self)  # type: ignore[no-any-return]

    ravel = flatten

    def broadcast_to(self, shape: Sequence[int]) -> Any:
        """The elements repeated to ``shape`` by NumPy's broadcasting rules."""
        return _core.nd_broadcast_to(self, tuple(shape))

    def item(self) -> value[TNum] | TNum:
        """The only element of a container with one element."""
        return _core.nd_item(self)  # type: ignore[no-any-return]

    def tolist(self) -> Any:
        """The elements as nested lists (the element itself for a 0-d container)."""
        return _core.nd_tolist(self)

    def get_scalar(self, *key: int) -> value[TNum] | TNum:
        """The element at the given indices (one per dimension)."""
        return _core.nd_get_scalar(self, key)  # type: ignore[no-any-return]

    def element(self, flat_index: int) -> value[TNum] | TNum:
        """The element at ``flat_index`` of the row-major order (negative from the end),
        Copapy's ``array.element``."""
        return _core.nd_element(self, flat_index)  # type: ignore[no-any-return]

    def get_values(self, data: Sequence[Any]) -> Any:
        """Flat element data (one number per element, row-major) nested as lists of this
        container's shape (Copapy's ``array.get_values``)."""
        return _core.nd_get_values(self, data)

    @staticmethod
    def flatten_data(data: Any) -> list[Any]:
        """The numbers of (nested) sequences or a NumPy array in row-major order
        (Copapy's ``array.flatten_data``); ragged or empty data is a ``ValueError``."""
        flat, shape = _core.nd_flatten(data, "array")
        if 0 in shape:
            raise ValueError("an array needs at least one element; empty sequences have no dtype")
        return flat

    def map(self, func: Callable[[Any], Any]) -> Any:
        """A container of the same shape holding ``func(x)`` for each element ``x``."""
        return _core.nd_map(self, func)

    def all(self) -> Any:
        """Whether every element is non-zero: a bool, or a traced bool value (constants
        decide or drop out while tracing; an array: one compare and one reduction)."""
        return _core.nd_all(self, True)

    def any(self) -> Any:
        """Whether any element is non-zero (as ``all``)."""
        return _core.nd_all(self, False)

    def to_numpy(self, target: Any = None) -> Any:
        """The elements as a NumPy array: the constants themselves, or with ``target`` the
        current contents there (float32, int32, bool; uint8 for a byte array)."""
        return _core.nd_to_numpy(self, target)

    def homogenize(self) -> Self:
        """If any element is a value, the plain numbers become ``cp.value`` inputs too (an
        array returns itself: its elements are values already)."""
        return _core.nd_homogenize(self)  # type: ignore[no-any-return]
