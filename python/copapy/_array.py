"""``cp.array``: an n-d array stored contiguously (row-major) in data memory.

An operation on arrays compiles to one stencil that loops over the elements, so code
size and compile time do not depend on the number of elements. This module holds the
storage (one ``_core.ArrayNode`` with a shape and a dtype; its data from numbers or NumPy
arrays is the core's ``nd_array_data``) and runtime indexing; the methods every container
has (reductions, products, ``sort``/``argsort``, ``astype``, reshapes, the operators,
``all``/``any``, ``to_numpy``) are ``_ndmethods.NdMethods``',
written once for ``cp.array`` and the tensors in the Rust n-d core (``ndcore/``).

Reductions and products add in the documented order on every target (``_ndmethods``;
``stencils/README.md``, "Array stencils").

Runtime indices (int or bool values) wrap once if negative and are then clamped to
their dimension, in every position: ``a[i, j]`` is an element, ``a[i]``, ``a[i, :]``,
``a[:, j]`` sub-arrays (one gather stencil whose offset is computed at run time).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from . import _core
from ._core import ArrayNode, Container, value
from ._core import nd_plain_int as plain_int
from ._elements import type_name
from ._ndmethods import NdMethods
from ._optable import is_binary, is_unary

TNum = TypeVar("TNum", int, float)




def _clamp(i: value[Any], dim: int) -> Any:
    """A runtime index wrapped once if negative, then clamped to ``0 .. dim - 1``."""
    return _core.math_binary("min", _core.math_binary("max", i + (i < 0) * dim, 0), dim - 1)


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

    def __iter__(self) -> Any:
        """Elements (1-D: values aliasing the array, no code) or rows (sub-arrays)."""
        return (self[k] for k in range(self.shape[0]))

    def __bool__(self) -> bool:
        raise TypeError(
            "the truth value of an array is ambiguous: reduce it first, e.g. (a > 0).sum() > 0"
        )


    # --- elements and views ------------------------------------------------------------

    def _flat_index(self, index: tuple[Any, ...]) -> int:
        offset: int = _core.nd_view(index, self.shape, "array")[0]
        return offset

    def __getitem__(self, key: Any) -> Any:
        index = key if isinstance(key, tuple) else (key,)
        if len(index) > self.ndim:
            raise IndexError(f"too many indices ({len(index)}) for an array of {self.ndim} dimensions")
        if len(index) == self.ndim and all(plain_int(i) is not None for i in index):
            return _core.array_element(self._cp_node, self._flat_index(index))
        for k in index:
            if isinstance(k, slice) and any(isinstance(b, value) for b in (k.start, k.stop, k.step)):
                raise TypeError(
                    "slice bounds must be plain integers: a runtime (value) index selects one "
                    "position of a dimension, e.g. a[i] or a[i, :]"
                )
        runtime = any(isinstance(i, value) for i in index)
        if runtime and len(index) == self.ndim and not any(isinstance(i, slice) for i in index):
            return self._runtime_element(index)
        if runtime:
            return self._runtime_subarray(index)
        # a sub-array: one strided copy
        offset, shape, strides = _core.nd_view(index, self.shape, "array")
        if 0 in shape:
            raise ValueError("the slice selects no elements: arrays cannot be empty")
        return _core.nd_take(self, offset, shape, strides)

    def _runtime_element(self, index: tuple[Any, ...]) -> value[Any]:
        """The element at indices some of which are values: each runtime index wraps once
        if negative and is clamped to its dimension (a lookup table never reads outside
        the array); the stencil clamps the flat index again."""
        flat: Any = 0
        stride = 1
        for i, dim in reversed(list(zip(index, self.shape, strict=True))):
            if isinstance(i, value):
                if i.dtype == "float":
                    raise TypeError("array indices must be int or bool values, not float values")
                k: Any = _clamp(i, dim) if self.ndim > 1 else i
            elif (n := plain_int(i)) is not None:
                k = self._flat_index_dim(n, dim)
            else:
                raise TypeError(f"array indices must be integers or int values, not {type_name(i)}")
            flat = flat + k * stride
            stride *= dim
        return _core.array_kernel("index", [self._cp_node, flat], [])

    def _runtime_subarray(self, index: tuple[Any, ...]) -> array[Any]:
        """A sub-array at indices some of which are values (each wrapped once if negative,
        then clamped to its dimension): one gather whose offset is computed at run time."""
        src = _core.nd_view((), self.shape, "array")[2]  # the row-major strides
        offset: Any = 0
        lo = hi = 0
        shape: list[int] = []
        strides: list[int] = []
        for d, dim in enumerate(self.shape):
            k = index[d] if d < len(index) else slice(None)
            if isinstance(k, slice):
                r = range(*k.indices(dim))
                if not r:
                    raise ValueError("the slice selects no elements: arrays cannot be empty")
                lo, hi = lo + r.start * src[d], hi + r.start * src[d]
                offset = offset + r.start * src[d]
                shape.append(len(r))
                strides.append(r.step * src[d])
            elif isinstance(k, value):
                if k.dtype == "float":
                    raise TypeError("array indices must be int or bool values, not float values")
                clamped = _clamp(k, dim)
                offset = offset + clamped * src[d]
                hi += (dim - 1) * src[d]
            elif (n := plain_int(k)) is not None:
                at = self._flat_index_dim(n, dim) * src[d]
                lo, hi, offset = lo + at, hi + at, offset + at
            else:
                raise TypeError(f"array indices must be integers, slices or int values, not {type_name(k)}")
        dims = _core.nd_merged(tuple(shape), strides)
        if len(dims) > 4:
            raise NotImplementedError(
                f"a runtime-indexed sub-array of shape {tuple(shape)} has more than 4 "
                "non-contiguous dimensions: index it in two steps"
            )
        walk: list[int] = [x for size_stride in dims for x in size_stride]
        node = _core.array_kernel("gather", [self._cp_node, offset], [lo, hi, *walk])
        return array._of(node, tuple(shape), self.dtype)

    @staticmethod
    def _flat_index_dim(k: int, dim: int) -> int:
        if not -dim <= k < dim:
            raise IndexError(f"index {k} is out of range for a dimension of size {dim}")
        return k % dim

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
