"""Elements of ``cp.tensor``, ``cp.vector`` and ``cp.quaternion`` and ``ArrayBase``, what they
share: a flat, row-major ``values`` tuple with a ``shape``, and the container protocol
(``__copapy__``, docs/architecture.md). Each element is a ``cp.value`` or a plain Python
number (a constant: ``number op number`` is Python arithmetic, as in Copapy, and creates no
graph node). Element checks, promotion, casts and the summation order (``_ndmethods``) are
the Rust n-d core's (``ndcore/``: ``_core.nd_*``).
"""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from . import _core
from ._core import Container, value

TNum = TypeVar("TNum", int, float)
"""Element type of a vector or tensor: ``int`` (int32 or bool values) or ``float``."""

_V = value


def type_name(x: object) -> str:
    return type(x).__name__


scalar_or_none = _core.nd_scalar
"""``x`` as an element (value or Python number), or None if it is not a scalar; NumPy
scalars and 0-d arrays become Python numbers."""


def plain(x: Any) -> Any:
    """``x`` with a NumPy scalar (``np.int64(3)``, ``np.float32(0.5)``) replaced by the Python
    number it stands for, so plain-number code paths treat both alike; anything else as it is."""
    s = scalar_or_none(x)
    return x if s is None else s


element_dtype = _core.nd_dtype
"""The promoted type of numbers and values: float over int over bool."""


class Size(int):
    """The number of elements of a container: an int, as NumPy's ``a.size`` property, that can
    also be called, as Copapy 0.0.7's ``tensor.size()`` method, so code written for either runs
    on every container."""

    __slots__ = ()

    def __call__(self) -> int:
        return int(self)


class ArrayBase(Generic[TNum]):
    """What ``cp.vector`` and ``cp.tensor`` share: a flat row-major ``values`` tuple and a
    ``shape``; NumPy conversion of constant contents; the container protocol."""

    __slots__ = ("values", "shape")
    values: tuple[value[TNum] | TNum, ...]
    shape: tuple[int, ...]

    # NumPy defers to our reflected operators (``ndarray + vector`` calls ``vector.__radd__``)
    # instead of converting the container into an array of objects.
    __array_ufunc__ = None

    def __copy__(self) -> ArrayBase[TNum]:
        return self._with_values(self.values)

    def __deepcopy__(self, memo: dict[int, Any]) -> ArrayBase[TNum]:
        # the elements (values and Python numbers) are immutable
        return self._with_values(self.values)

    @property
    def dtype(self) -> str:
        """Type of the elements as NumPy would promote them: ``'float'`` if any element is
        a float (also for no elements), else ``'int'`` if any is an int, else ``'bool'``."""
        return element_dtype(self.values)

    def _with_values(self, vals: tuple[Any, ...]) -> ArrayBase[Any]:
        raise NotImplementedError

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        import numpy as np

        for x in self.values:
            if type(x) is _V:
                raise TypeError(
                    f"this {type(self).__name__} holds traced values, not numbers: compile it and "
                    "convert the result of Target.read_value(...) instead"
                )
        return np.array(self.values, dtype=dtype).reshape(self.shape)

    def __copapy__(self) -> Container:
        """The container protocol (docs/architecture.md): the elements, the shape, and how to make
        the same kind of container from new elements."""
        return Container.sequence(self.values, self.shape, self._with_values)
