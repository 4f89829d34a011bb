"""``cp.array``: an n-d array stored contiguously (row-major) in data memory.

An operation on arrays compiles to one stencil that loops over the elements, so code
size and compile time do not depend on the number of elements. This module holds the
storage (one ``_core.ArrayNode`` with a shape and a dtype; its data from numbers or NumPy
arrays is the core's ``nd_array_data``); the methods every container has (indexing,
reductions, products, ``sort``/``argsort``, ``astype``, reshapes, the operators,
``all``/``any``, ``to_numpy``) are ``_ndmethods.NdMethods``',
written once for ``cp.array`` and the tensors in the Rust n-d core (``ndcore/``).

Reductions and products add in the documented order on every target (``_ndmethods``;
``stencils/README.md``, "Array stencils").

Runtime indices (int or bool values) wrap once if negative and are then clamped to
their dimension, in every position: ``a[i, j]`` is an element (one index stencil),
``a[i]``, ``a[i, :]``, ``a[:, j]`` sub-arrays (one gather stencil whose offset is computed
at run time); static ones are views (one strided copy), as ``ndcore/index.rs`` documents.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from . import _core
from ._core import ArrayNode, Container
from ._ndmethods import NdMethods
from ._optable import is_binary, is_unary

TNum = TypeVar("TNum", int, float)


class array(NdMethods[TNum]):
    """Homogeneous n-dimensional array, stored contiguously in the target's data memory.

    ``cp.array(values, dtype=None)``: ``values`` are nested sequences (or a NumPy array)
    of numbers and/or ``cp.value`` s, rectangular and non-empty. ``dtype`` is inferred
    (float > int > bool) or one of ``'float' 'int' 'bool' 'byte'``. An array of numbers
    is an input: ``Target.write_value`` overwrites it between runs.
    """

    __slots__ = ("_cp_node", "shape", "dtype")
    _cp_node: ArrayNode
    shape: tuple[int, ...]
    dtype: str

    def __init__(self, values: Any, dtype: str | None = None) -> None:
        self._init(*_core.nd_array_data(values, dtype))

    def _init(self, node: ArrayNode, shape: tuple[int, ...], dtype: str) -> None:
        self._cp_node = node
        self.shape = shape
        self.dtype = dtype

    @classmethod
    def _of(cls, node: ArrayNode, shape: tuple[int, ...], dtype: str | None = None) -> array[Any]:
        out: array[Any] = cls.__new__(cls)
        out._init(node, shape, dtype or node.dtype)
        return out

    def __repr__(self) -> str:
        return f"array(shape={self.shape}, dtype={self.dtype})"  # Copapy's form

    if TYPE_CHECKING:  # the methods are NdMethods'; their types for arrays
        def argsort(self) -> array[int]: ...
        def reshape(self, *shape: int | Sequence[int]) -> array[TNum]: ...

    # --- the container protocol --------------------------------------------------------

    def __copapy__(self) -> Container:
        """The container protocol (docs/architecture.md): the node, shape and dtype.
        ``Target.read_value(array)`` gives nested lists, as Copapy returns."""
        return Container.array(self._cp_node, self.shape, self.dtype, self._with_node)

    def _with_node(self, node: ArrayNode) -> array[Any]:
        """An array of this shape around ``node`` (e.g. its gradient)."""
        return array._of(node, self.shape)


def unary(x: array[Any], name: str) -> array[Any]:
    """Math function ``name`` element-wise (one stencil)."""
    if not is_unary(name):
        raise ValueError(f"unknown array function '{name}'")
    return _core.nd_unary(x, name)  # type: ignore[no-any-return]


def binary(name: str, a: Any, b: Any) -> Any:
    """A two-argument math function element-wise, either operand an array."""
    if not is_binary(name):
        raise ValueError(f"unknown array operation '{name}'")
    if isinstance(a, array):
        return _core.nd_binary(a, b, name, False)
    return _core.nd_binary(b, a, name, True)
