# vector narrows the tensor's operators (vector op vector is a vector, v[i] an element), which
# mypy reports as incompatible overrides and overlapping overloads; both are intended.
# mypy: disable-error-code="override, overload-overlap"
"""``cp.vector``: a 1-D ``cp.tensor`` with its geometric methods (dot, cross, magnitude,
projections, rotation) and Copapy's element access (``v[i]`` is the element itself); every
other method (reductions, ``min``/``max``, ``sort``, ``reshape``, ``T``, …) is the tensor's."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, overload

from . import _core, _packing
from ._core import value
from ._elements import TNum
from ._math import acos, cos, sin, sqrt
from ._ndmethods import NdMethods
from ._tensors import tensor
from ._typed_ops import Arith, Compare, Div, Subscript

U = TypeVar("U", int, float)

epsilon = 1e-20
"""Added to magnitudes before dividing by them (as Copapy does), so a zero vector gives 0, not NaN."""

_SCALARS = (value, int, float)


def _vec(vals: tuple[Any, ...]) -> vector[Any]:
    v: vector[Any] = object.__new__(vector)
    v.values, v.shape = vals, (len(vals),)
    return v


class vector(tensor[TNum]):
    """A 1-D tensor of ``cp.value``s and/or plain Python numbers (mixed freely) with the
    geometric methods; ``v[i]`` is the element itself, ``v @ w`` the dot product. Plain-number
    elements stay plain numbers (``number op number`` is folded while tracing).

    >>> v = cp.vector([cp.value(1.0), 2.0, 3.0])
    >>> (v * 2 + 1).magnitude()  # one traced value
    """

    __slots__ = ()
    pack_threshold: ClassVar[int | None] = _packing.PACK_THRESHOLD
    """Vectors with more traced elements than this compute through array stencils
    (Copapy's class attribute; None turns packing off for vectors without ``packed=True``)."""

    def __init__(self, values: Iterable[TNum | value[TNum]], packed: bool | None = None) -> None:
        """A vector of the given elements (values and/or numbers; NumPy arrays work too).
        ``packed``: None packs more than ``vector.pack_threshold`` (64) traced values of one
        dtype into an array for its operations (``_packing``), True at any length, False never."""
        self._packed = packed
        self.values = _core.nd_vector_leaves(values)
        self.shape = (len(self.values),)

    def __repr__(self) -> str:
        return f"vector({self.values!r})"

    # an index gives the element itself (Copapy's ``v[i]``), a runtime one a clamped lookup
    __getitem__: Subscript[value[TNum] | TNum, vector[TNum]]  # type: ignore[assignment]
    __iter__: Callable[[], Iterator[value[TNum] | TNum]]  # type: ignore[assignment]

    def get_scalar(self, index: int) -> value[TNum] | TNum:
        """The element at ``index`` (Copapy's signature)."""
        return _core.nd_get_scalar(self, (index,))  # type: ignore[no-any-return]

    def _like(self, vals: tuple[Any, ...], shape: tuple[int, ...]) -> tensor[Any]:
        return _vec(vals) if len(shape) == 1 else tensor._like(self, vals, shape)

    def _result_kind(self, other: Any) -> type[tensor[Any]]:
        return tensor if isinstance(other, tensor) and not isinstance(other, vector) else vector

    # the tensor's operators (inherited) typed with vector results (``_typed_ops``)
    __add__: Arith[TNum, vector[int], vector[float]]
    __radd__: Arith[TNum, vector[int], vector[float]]
    __sub__: Arith[TNum, vector[int], vector[float]]
    __rsub__: Arith[TNum, vector[int], vector[float]]
    __mul__: Arith[TNum, vector[int], vector[float]]
    __rmul__: Arith[TNum, vector[int], vector[float]]
    __floordiv__: Arith[TNum, vector[int], vector[float]]
    __rfloordiv__: Arith[TNum, vector[int], vector[float]]
    __mod__: Arith[TNum, vector[int], vector[float]]
    __rmod__: Arith[TNum, vector[int], vector[float]]
    __pow__: Arith[TNum, vector[int], vector[float]]
    __rpow__: Arith[TNum, vector[int], vector[float]]
    __truediv__: Div[TNum, vector[int], vector[float]]
    __rtruediv__: Div[TNum, vector[int], vector[float]]
    __lt__: Compare[TNum, vector[int], vector[float]]
    __le__: Compare[TNum, vector[int], vector[float]]
    __gt__: Compare[TNum, vector[int], vector[float]]
    __ge__: Compare[TNum, vector[int], vector[float]]
    __eq__: Compare[TNum, vector[int], vector[float]]
    __ne__: Compare[TNum, vector[int], vector[float]]
    __hash__ = None  # type: ignore[assignment]

    if TYPE_CHECKING:  # the products are NdMethods'; their types for vectors
        @overload
        def dot(self: vector[int], other: vector[int]) -> int | value[int]: ...
        @overload
        def dot(self, other: vector[Any] | Sequence[Any]) -> float | value[float]: ...
        def dot(self, other: Any) -> Any: ...
        @overload
        def __matmul__(self: vector[int], other: vector[int]) -> int | value[int]: ...
        @overload
        def __matmul__(self, other: vector[Any] | Sequence[float]) -> float | value[float]: ...
        @overload
        def __matmul__(self, other: tensor[Any]) -> tensor[Any]: ...
        def __matmul__(self, other: Any) -> Any: ...
        def argsort(self) -> vector[int]: ...
        def map(self, func: Callable[[Any], value[U] | U]) -> vector[U]: ...

    def cross(self: vector[TNum], other: vector[Any]) -> vector[TNum]:
        """3-D cross product."""
        if len(self.values) != 3 or len(other.values) != 3:
            raise _core.nd_shape_error("cross", "vectors", self.shape, tuple(other.shape))
        a1, a2, a3 = self.values
        b1, b2, b3 = other.values
        return _vec((a2 * b3 - a3 * b2, a3 * b1 - a1 * b3, a1 * b2 - a2 * b1))

    def magnitude(self) -> float | value[float]:
        """Euclidean length: ``sqrt`` of the sum of the squares (documented order)."""
        return sqrt(self.dot(self))

    norm = magnitude

    def normalize(self) -> vector[float]:
        """This vector divided by ``magnitude() + 1e-20`` (a zero vector stays zero), as Copapy."""
        return self / (self.magnitude() + epsilon)



def dot(v1: Any, v2: Any) -> Any:
    """``numpy.dot`` for what copapy holds (containers, nested lists, scalars)."""
    if isinstance(v1, _SCALARS):
        return v1 * v2
    return _core.nd_product(v1 if isinstance(v1, NdMethods) else tensor(v1), v2, "dot")


def cross(v1: Any, v2: Any) -> vector[Any]:
    """Cross product of two 3-D vectors (vectors, 1-D tensors, lists or tuples)."""
    a = v1 if type(v1) is vector else vector(v1)
    return a.cross(v2 if type(v2) is vector else vector(v2))


def distance(v1: vector[float], v2: vector[float]) -> float | value[float]:
    """Euclidean distance ``(v1 - v2).magnitude()``."""
    return (v1 - v2).magnitude()


def scalar_projection(v1: vector[float], v2: vector[float]) -> float | value[float]:
    """Length of the projection of v1 onto v2: ``v1 @ v2 / (|v2| + 1e-20)``."""
    return v1.dot(v2) / (v2.magnitude() + epsilon)


def vector_projection(v1: vector[float], v2: vector[float]) -> vector[float]:
    """Projection of v1 onto v2: ``v2 * (v1 @ v2 / (|v2|**2 + 1e-20))``."""
    scale = v1.dot(v2) / (v2.magnitude() ** 2 + epsilon)
    return v2 * scale


def angle_between(v1: vector[float], v2: vector[float]) -> float | value[float]:
    """Angle in radians between two vectors: ``acos(v1 @ v2 / (|v1| |v2| + 1e-20))``."""
    cos_angle = v1.dot(v2) / (v1.magnitude() * v2.magnitude() + epsilon)
    return acos(cos_angle)


def rotate_vector(v: vector[float], axis: vector[float], angle: float | value[float]) -> vector[float]:
    """Rotate the 3-D vector ``v`` about ``axis`` by ``angle`` radians (Rodrigues' formula)."""
    k = axis.normalize()
    c, s = cos(angle), sin(angle)
    return v * c + k.cross(v) * s + k * k.dot(v) * (1 - c)
