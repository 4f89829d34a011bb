"""``cp.array``: an n-d array stored contiguously (row-major) in data memory.

An operation on arrays compiles to one stencil that loops over the elements, so code
size and compile time do not depend on the number of elements. This module holds the
storage (one ``_core.ArrayNode`` with a shape and a dtype), its construction from data
and the products; the methods every container has (indexing, reductions over axes,
``sort``/``argsort``, ``astype``, reshapes, the operators) are ``_ndmethods.NdMethods``',
written once for ``cp.array`` and the tensors in the Rust n-d core (``ndcore/``).

Reductions (``sum``, ``mean``, ``min``, ``max``, ``dot``, ``@``) add in one fixed order on
every target (see ``stencils/README.md``, "Array stencils"): element k goes into partial
sum k % 8, then the partials are combined pairwise (l + 4, then l + 2, then the last two);
over axes, each result element reduces its terms in row-major order of the reduced axes.
``min``/``max`` fold NumPy's ``minimum``/``maximum`` in the same order (a NaN gives NaN).

Runtime indices (int or bool values) wrap once if negative and are then clamped to
their dimension, in every position: ``a[i, j]`` is an element (one index stencil),
``a[i]``, ``a[i, :]``, ``a[:, j]`` sub-arrays (one gather stencil whose offset is computed
at run time); static ones are views (one strided copy), as ``ndcore/index.rs`` documents.

``sort``/``argsort`` (1-D) are ``np.sort``/``np.argsort(kind='stable')``: one
sorting-network stencil; NaNs last (in input order), -0.0 and +0.0 equal (so they keep
their input order).
"""

from __future__ import annotations

import sys
from array import array as _pyarray
from collections.abc import Sequence
from typing import Any, TypeVar

from . import _core
from ._core import ArrayNode, Container, ElementTypeError, value
from ._elements import Size, element_dtype, scalar_or_none, type_name
from ._ndmethods import NdMethods
from ._optable import is_binary, is_unary

TNum = TypeVar("TNum", int, float)


_DTYPES = ("float", "int", "bool", "byte")
_SCALARS = (value, int, float)


def _stored(dtype: str) -> str:
    """The element type operations see: bools are 0/1 ints; byte arrays are stored one
    byte per element and read as ints (widened by one loop stencil on use)."""
    return "int" if dtype == "byte" else dtype


def _is_numpy(x: Any) -> bool:
    return hasattr(x, "__array_interface__") and hasattr(x, "dtype") and hasattr(x, "shape")


def _flatten(data: Any, out: list[Any]) -> tuple[int, ...]:
    """Appends the elements of nested sequences to ``out``; returns their shape (the n-d
    core's ``nd_flatten``; an array has at least one element)."""
    flat, shape = _core.nd_flatten(data, "array")
    if 0 in shape:
        raise ValueError("an array needs at least one element; empty sequences have no dtype")
    out.extend(flat)
    return shape


def _pack_numbers(flat: Sequence[Any], dtype: str) -> bytes:
    """Numbers as little-endian 4-byte elements of ``dtype``, with clear range errors."""
    buf: _pyarray[Any]
    if dtype == "float":
        buf = _pyarray("f", [float(x) for x in flat])
    else:
        lo, hi = {"bool": (0, 1), "byte": (0, 255), "int": (-(2**31), 2**31 - 1)}[dtype]
        ints = []
        for x in flat:
            if isinstance(x, float):
                raise ElementTypeError(f"a {dtype} array cannot hold the float {x!r}: use dtype='float'")
            i = int(x)
            if not lo <= i <= hi:
                raise ValueError(f"{i} does not fit a {dtype} array (from {lo} to {hi})")
            ints.append(i)
        buf = _pyarray("i", ints)
    if sys.byteorder == "big":
        buf.byteswap()
    return buf.tobytes()


def _numpy_bytes(data: Any, dtype: str) -> bytes:
    """A NumPy array's elements as little-endian 4-byte elements, one bulk conversion."""
    import numpy as np

    _core.check_dtype(data)  # before any conversion: NumPy would cast complex, parse text
    kind = data.dtype.kind
    if dtype != "float" and kind == "f":
        raise ElementTypeError(f"cannot store float data in a {dtype} array: convert it explicitly")
    if dtype != "float" and kind != "b" and data.size:
        lo, hi = {"bool": (0, 1), "byte": (0, 255), "int": (-(2**31), 2**31 - 1)}[dtype]
        if int(data.min()) < lo or int(data.max()) > hi:
            raise ValueError(f"the data does not fit a {dtype} array (from {lo} to {hi})")
    target = "<f4" if dtype == "float" else "<i4"
    return bytes(np.ascontiguousarray(data, dtype=target).tobytes())


def _data_node(dtype: str, raw: bytes) -> ArrayNode:
    """An input array from little-endian 4-byte elements; a byte array keeps one byte of
    each (the low one: the elements were checked to be 0..255)."""
    if dtype == "byte":
        return _core.array_bytes(raw[::4])
    return _core.array_data(dtype, raw)


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
        if dtype is not None and dtype not in _DTYPES:
            raise ValueError(f"unknown dtype {dtype!r}: use one of {', '.join(map(repr, _DTYPES))}")
        if _is_numpy(values):
            _core.check_dtype(values)
            kind = values.dtype.kind
            inferred = "float" if kind == "f" else "bool" if kind == "b" else "int"
            if values.size == 0 or values.ndim == 0:
                raise ValueError("an array needs at least one dimension and one element")
            _core.nd_check_shape((values.size,))
            dtype = dtype or inferred
            node = _data_node(dtype, _numpy_bytes(values, dtype))
            self._init(node, tuple(int(d) for d in values.shape), dtype)
            return
        flat: list[Any] = []
        shape = _flatten(values, flat)
        if not shape:
            raise ValueError("an array needs at least one dimension: use cp.value for a scalar")
        _core.nd_check_shape((len(flat),))
        inferred = element_dtype(flat)
        dtype = dtype or inferred
        if dtype in ("int", "bool", "byte") and inferred == "float":
            raise ElementTypeError(f"float elements cannot go into a {dtype} array: use dtype='float'")
        if dtype == "bool" and inferred == "int":
            raise ElementTypeError("int elements cannot go into a bool array: compare them, e.g. x != 0")
        if any(isinstance(x, value) for x in flat):
            node = _core.array_pack(_stored(dtype), flat)
            if dtype == "byte":  # stored as bytes, saturating (values are not known yet)
                node = _core.array_kernel("narrow", [node], [])
        else:
            node = _data_node(dtype, _pack_numbers(flat, dtype))
        self._init(node, shape, dtype)

    def _init(self, node: ArrayNode, shape: tuple[int, ...], dtype: str) -> None:
        self._cp_node = node
        self.shape = shape
        self.dtype = dtype

    @classmethod
    def _of(cls, node: ArrayNode, shape: tuple[int, ...], dtype: str | None = None) -> array[Any]:
        out: array[Any] = cls.__new__(cls)
        out._init(node, shape, dtype or node.dtype)
        return out

    # --- properties --------------------------------------------------------------------

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> Size:
        """Number of elements (an int, as NumPy's; ``size()`` works too, as Copapy's tensors)."""
        return Size(len(self._cp_node))

    def __repr__(self) -> str:
        return f"array(shape={self.shape}, dtype={self.dtype})"  # Copapy's form

    def __bool__(self) -> bool:
        raise TypeError(
            "the truth value of an array is ambiguous: reduce it first, e.g. (a > 0).sum() > 0"
        )


    # --- reductions and products (the rest: NdMethods) ------------------------------

    def all(self) -> value[int]:
        """Whether every element is non-zero, a bool value (one compare and one reduction)."""
        out: value[int] = (self != 0).min() != 0
        return out

    def any(self) -> value[int]:
        """Whether any element is non-zero, a bool value (one compare and one reduction)."""
        out: value[int] = (self != 0).max() != 0
        return out

    def dot(self, other: array[Any]) -> value[Any]:
        """The sum of the products of corresponding elements (sum in the fixed order).

        As Copapy's ``array.dot``, any two arrays with the same number of elements are
        taken in row-major order (NumPy's ``vdot``; for 1-D arrays NumPy's ``dot``). For
        matrix products use ``@`` / ``matmul``."""
        if not isinstance(other, array):
            raise TypeError(f"dot() takes an array, not {type_name(other)}")
        if self.size != other.size:
            raise ValueError(
                f"cannot take the dot product of arrays of shapes {self.shape} and {other.shape}: "
                "dot takes two arrays of the same length (number of elements); for a matrix "
                "product use @"
            )
        return _core.array_kernel("dot", [self._cp_node, other._cp_node], [])

    def __matmul__(self, other: Any) -> Any:
        if not isinstance(other, array):
            return NotImplemented
        if self.ndim == 1 and other.ndim == 1:
            return self.dot(other)
        if self.ndim > 2 or other.ndim > 2:
            raise NotImplementedError(
                f"matmul of shapes {self.shape} and {other.shape}: only 1-D and 2-D arrays so far"
            )
        m, k = (1, self.shape[0]) if self.ndim == 1 else self.shape
        k2, p = (other.shape[0], 1) if other.ndim == 1 else other.shape
        if k != k2:
            raise ValueError(
                f"cannot matrix-multiply arrays of shapes {self.shape} and {other.shape}: "
                f"{k} columns against {k2} rows"
            )
        shape = tuple(d for d, keep in ((m, self.ndim == 2), (p, other.ndim == 2)) if keep)
        return array._of(_core.array_kernel("matmul", [self._cp_node, other._cp_node], [m, k, p]), shape)

    matmul = __matmul__

    def __rmatmul__(self, other: Any) -> Any:
        """``data @ array`` for nested sequences or NumPy data (an array of numbers first)."""
        if isinstance(other, array) or scalar_or_none(other) is not None:
            return NotImplemented
        return array(other) @ self

    # --- the container protocol --------------------------------------------------------

    def __copapy__(self) -> Container:
        """The container protocol (docs/architecture.md): the node, shape and dtype.
        ``Target.read_value(array)`` gives nested lists, as Copapy returns."""
        return Container.array(self._cp_node, self.shape, self.dtype, self._with_node)

    def _with_node(self, node: ArrayNode) -> array[Any]:
        """An array of this shape around ``node`` (e.g. its gradient)."""
        return array._of(node, self.shape)

    def to_numpy(self, target: Any) -> Any:
        """The array's current contents on ``target`` as a NumPy array (one bulk read;
        float32, int32, bool, or uint8 for a byte array)."""
        import numpy as np

        raw = target._read_array(self._cp_node)
        if self._cp_node.itemsize == 1:
            return np.frombuffer(raw, dtype=np.uint8)[: self.size].reshape(self.shape).copy()
        out = np.frombuffer(raw, dtype="<f4" if self._cp_node.dtype == "float" else "<i4")
        out = out.reshape(self.shape)
        if self.dtype == "bool":
            return out != 0
        return out.astype(out.dtype.newbyteorder("="))


def encode_data(data: Any, shape: tuple[int, ...], dtype: str) -> bytes:
    """``Target.write_value`` data for an array of ``shape`` and ``dtype``: nested lists or a
    NumPy array as little-endian 4-byte elements, with clear shape and range errors."""
    if _is_numpy(data):
        if tuple(data.shape) != shape:
            raise ValueError(f"cannot write data of shape {tuple(data.shape)} to an array of shape {shape}")
        return _numpy_bytes(data, dtype)
    flat: list[Any] = []
    got = _flatten(data, flat)
    if got != shape:
        raise ValueError(f"cannot write data of shape {got} to an array of shape {shape}")
    if any(isinstance(x, value) for x in flat):
        raise TypeError("write_value needs numbers, not copapy values")
    return _pack_numbers(flat, dtype)


def is_array(x: Any) -> bool:
    return isinstance(x, array)


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


def iif(cond: array[Any], a: Any, b: Any) -> array[Any]:
    """``a`` where ``cond`` is non-zero, else ``b``, element-wise (NumPy's ``where``: the
    three broadcast together); never leaks the other side. The result is a float array if
    either side is float, a bool array if both are bool, else an int array."""
    if not isinstance(cond, array):
        c = scalar_or_none(cond)
        if c is None:
            raise TypeError(
                f"the condition of iif must be an array, a value or a number, not {type_name(cond)}"
            )
        # a scalar condition broadcasts as NumPy's where does: a one-element array
        cond = array([c if isinstance(c, value) else bool(c)])
    if cond.dtype == "float":
        cond = cond != 0  # as the scalar iif: any non-zero float (NaN too) is true
    shape = cond.shape
    for x in (a, b):
        if isinstance(x, array) and x.shape != shape:
            shape = _core.nd_broadcast(shape, x.shape, "select between")
    cond = cond.broadcast_to(shape)
    ops = []
    for x in (a, b):
        if isinstance(x, array):
            ops.append(x.broadcast_to(shape)._cp_node)
        else:
            s = scalar_or_none(x)
            if s is None:
                raise TypeError(f"iif operands must be arrays, values or numbers, not {type_name(x)}")
            ops.append(s)
    return array._of(_core.array_select(cond._cp_node, ops[0], ops[1]), shape)


def sort(x: array[Any]) -> array[Any]:
    """``np.sort(x, kind='stable')`` of a 1-D array (``array.sort``)."""
    return x.sort()


def argsort(x: array[Any]) -> array[int]:
    """``np.argsort(x, kind='stable')`` of a 1-D array as an int array (``array.argsort``)."""
    return x.argsort()  # type: ignore[no-any-return]
