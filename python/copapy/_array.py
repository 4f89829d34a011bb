"""``cp.array``: an n-d array stored contiguously (row-major) in data memory.

An operation on arrays compiles to one stencil that loops over the elements, so code
size and compile time do not depend on the number of elements. The Rust core sees
flat arrays only (``_core.ArrayNode``); shapes, dtype names and NumPy's rules live here.

Reductions (``sum``, ``dot``, ``@``) add in one fixed order on every target (see
``stencils/README.md``, "Array stencils"): element k goes into partial sum k % 8, then the
partials are combined pairwise (l + 4, then l + 2, then the last two).

Reductions over axes (``sum``, ``mean``, ``min``, ``max`` with an int or a tuple
``axis``): each result element reduces its terms in row-major order of the reduced axes
(taken in increasing axis order, whatever order the tuple gives them in), as one sequence
in the fixed order above; ``axis=None`` is every axis. ``min``/``max`` fold NumPy's
``minimum``/``maximum`` in the same order (a NaN anywhere gives NaN).

Runtime indices (int or bool values) wrap once if negative and are then clamped to
their dimension, in every position: ``a[i, j]`` is an element, ``a[i]``, ``a[i, :]``,
``a[:, j]`` sub-arrays (one gather stencil whose offset is computed at run time).

``sort``/``argsort`` (1-D) are ``np.sort``/``np.argsort(kind='stable')``: one
sorting-network stencil; NaNs last (in input order), -0.0 and +0.0 equal (so they keep
their input order).
"""

from __future__ import annotations

import math
import sys
from array import array as _pyarray
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from . import _core
from ._core import ArrayNode, Container, ElementTypeError, value
from ._core import nd_plain_int as plain_int
from ._elements import element_dtype, scalar_or_none, type_name
from ._optable import BinaryOp, UnaryOp, is_binary, is_unary

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


def _clamp(i: value[Any], dim: int) -> Any:
    """A runtime index wrapped once if negative, then clamped to ``0 .. dim - 1``."""
    return _core.math_binary("min", _core.math_binary("max", i + (i < 0) * dim, 0), dim - 1)


def _operator(op: BinaryOp, reflected: bool = False) -> Callable[[array[Any], Any], Any]:
    """The method of a binary operator: ``array._binary`` with ``op``."""

    def method(self: array[Any], o: Any) -> Any:
        return self._binary(op, o, reflected)

    return method


class array(Generic[TNum]):
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
                node = _core.array_to_bytes(node)
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
    def size(self) -> int:
        return len(self._cp_node)

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        return f"array(shape={self.shape}, dtype={self.dtype})"  # Copapy's form

    def __iter__(self) -> Any:
        """Elements (1-D: values aliasing the array, no code) or rows (sub-arrays)."""
        return (self[k] for k in range(self.shape[0]))

    def __bool__(self) -> bool:
        raise TypeError(
            "the truth value of an array is ambiguous: reduce it first, e.g. (a > 0).sum() > 0"
        )

    __hash__ = None  # type: ignore[assignment]

    # --- elements and views ------------------------------------------------------------

    def _flat_index(self, index: tuple[Any, ...]) -> int:
        offset: int = _core.nd_view(index, self.shape, "array")[0]
        return offset

    def element(self, flat_index: int) -> value[TNum]:
        """The element at ``flat_index`` of the row-major order (negative from the end),
        an alias into the array: no code (Copapy's ``array.element``)."""
        flat = plain_int(flat_index)
        if flat is None:
            raise TypeError(f"element() takes an int flat index, not {type_name(flat_index)}")
        return _core.array_element(self._cp_node, self._flat_index_dim(flat, self.size))

    def get_values(self, data: Sequence[Any]) -> list[Any]:
        """Flat element data (``size`` numbers in row-major order) nested as lists of
        this array's shape (Copapy's ``array.get_values``)."""
        flat = list(data)
        if len(flat) != self.size:
            raise ValueError(f"get_values needs {self.size} elements for shape {self.shape}, got {len(flat)}")
        nested: list[Any] = _core.nd_nest(flat, self.shape)
        return nested

    @staticmethod
    def flatten_data(data: Any) -> list[Any]:
        """The numbers of (nested) sequences or a NumPy array in row-major order
        (Copapy's ``array.flatten_data``); ragged data is a ``ValueError``."""
        flat: list[Any] = []
        _flatten(data, flat)
        return flat

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
        return self._gather(shape, strides, offset)

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

    def reshape(self, *shape: Any) -> array[TNum]:
        """The same elements with a new shape (ints or one sequence of them; one may be
        negative, inferred as NumPy does); no code."""
        dims = _core.nd_reshape(shape, self.size, f"an array of size {self.size}")
        if not dims:
            raise ValueError(
                "an array needs at least one dimension: use a[0] or .element(0) for its one element"
            )
        return array._of(self._cp_node, dims, self.dtype)

    def flatten(self) -> array[TNum]:
        """A 1-D array of the elements in row-major order; no code."""
        return self.reshape(self.size)

    ravel = flatten

    def astype(self, dtype: str) -> array[Any]:
        """The elements converted to ``dtype`` ('float', 'int', 'bool', 'byte'; the rules of
        ``cp.cast``): one loop stencil, none if the array has that dtype already. A byte
        array is read as ints (widened on use) and stored saturating."""
        if dtype == self.dtype:
            return self
        if dtype == "byte":
            return array._of(_core.array_to_bytes(self._cp_node), self.shape, "byte")
        return array._of(_core.array_cast(self._cp_node, dtype), self.shape, dtype)

    # --- element-wise ------------------------------------------------------------------

    def _gather(self, shape: tuple[int, ...], strides: Sequence[int], offset: int = 0) -> array[Any]:
        """A new array of ``shape`` whose element at index ``i`` is this array's flat
        element ``offset + sum(i[d] * strides[d])``: one strided-copy stencil (dimensions
        of size 1 dropped, contiguous ones merged; more than 4 left are gathered element
        by element, code growing with the size)."""
        dims = _core.nd_merged(shape, strides)
        if offset == 0 and dims == [(self.size, 1)]:
            return array._of(self._cp_node, shape, self.dtype)  # the same elements: no copy
        if len(dims) <= 4:
            walk: list[int] = [x for size_stride in dims for x in size_stride]
            node = _core.array_kernel("strided", [self._cp_node], [offset, *walk])
            return array._of(node, shape, self.dtype)
        flat = _core.nd_view_indices(offset, shape, strides)
        elements = [_core.array_element(self._cp_node, k) for k in flat]
        return array._of(_core.array_pack(self._cp_node.dtype, elements), shape, self.dtype)

    def _expand(self, shape: tuple[int, ...]) -> array[Any]:
        """This array repeated to a broadcast shape (gathered; code grows with the size)."""
        if shape == self.shape:
            return self
        return self._gather(shape, _core.nd_broadcast_strides(self.shape, shape, "an array"))

    def transpose(self, *axes: Any) -> array[TNum]:
        """The axes permuted (reversed if none are given), as NumPy; a gathered copy."""
        order = _core.nd_permutation(axes, self.ndim, f"an array of shape {self.shape}")
        if order == list(range(self.ndim)):
            return self
        return self._gather(*_core.nd_transposed(self.shape, order))

    @property
    def T(self) -> array[TNum]:
        """The transpose (axes reversed)."""
        return self.transpose()

    def broadcast_to(self, shape: Sequence[int]) -> array[TNum]:
        """This array repeated to ``shape`` by NumPy's broadcasting rules; a gathered copy."""
        target = tuple(shape)
        return self._gather(target, _core.nd_broadcast_strides(self.shape, target, "an array"))

    def _binary(self, op: BinaryOp, other: Any, reflected: bool = False) -> Any:
        if isinstance(other, array):
            if other.shape != self.shape:
                shape = _core.nd_broadcast(self.shape, other.shape, op)
                return self._expand(shape)._binary(op, other._expand(shape), reflected)
            b: Any = other._cp_node
        else:
            b = scalar_or_none(other)
            if b is None:
                return NotImplemented
        a, b = (b, self._cp_node) if reflected else (self._cp_node, b)
        return array._of(_core.array_binary(op, a, b), self.shape)

    # the operators: one array stencil each (``_binary``); ``**`` with an int constant is ``_powi``
    __add__ = _operator("add")
    __radd__ = _operator("add", reflected=True)
    __sub__ = _operator("sub")
    __rsub__ = _operator("sub", reflected=True)
    __mul__ = _operator("mul")
    __rmul__ = _operator("mul", reflected=True)
    __truediv__ = _operator("div")
    __rtruediv__ = _operator("div", reflected=True)
    __floordiv__ = _operator("floordiv")
    __rfloordiv__ = _operator("floordiv", reflected=True)
    __mod__ = _operator("mod")
    __rmod__ = _operator("mod", reflected=True)
    __and__ = _operator("and")
    __rand__ = _operator("and", reflected=True)
    __or__ = _operator("or")
    __ror__ = _operator("or", reflected=True)
    __xor__ = _operator("xor")
    __rxor__ = _operator("xor", reflected=True)
    __lshift__ = _operator("shl")
    __rlshift__ = _operator("shl", reflected=True)
    __rshift__ = _operator("shr")
    __rrshift__ = _operator("shr", reflected=True)
    __lt__ = _operator("lt")
    __le__ = _operator("le")
    __gt__ = _operator("gt")
    __ge__ = _operator("ge")
    __rpow__ = _operator("pow", reflected=True)

    def __eq__(self, o: Any) -> Any:
        return self._binary("eq", o)

    def __ne__(self, o: Any) -> Any:
        return self._binary("ne", o)

    def __pow__(self, o: Any) -> Any:
        n = scalar_or_none(o)
        if isinstance(n, int) and not isinstance(n, bool):
            return self._powi(n)
        return self._binary("pow", o)

    def _powi(self, n: int) -> array[Any]:
        """``self ** n`` for an integer constant as the scalar rule does it (README,
        "Powers"): multiplications left to right for ``|n| < 8`` (Copapy's order), square
        and multiply above, ``1 / x ** -n`` for negative ``n``, ones for ``n == 0``; so an
        int array stays int (wrapping) and a float one gets the scalar bits, not ``powf``'s."""
        if n == 0:
            ones = [1.0 if self.dtype == "float" else 1] * self.size
            return array(ones, "float" if self.dtype == "float" else "int").reshape(self.shape)
        base: array[Any] = self * 1 if self.dtype == "bool" else self  # bools count as ints
        m = -n if n < 0 else n
        if m < 8:
            acc = base
            for _ in range(m - 1):
                acc = acc * base
        else:
            acc_or_none: array[Any] | None = None
            while True:
                if m & 1:
                    acc_or_none = base if acc_or_none is None else acc_or_none * base
                m >>= 1
                if m == 0:
                    break
                base = base * base
            assert acc_or_none is not None
            acc = acc_or_none
        return acc if n > 0 else 1.0 / acc

    def _unary(self, op: UnaryOp) -> array[Any]:
        return array._of(_core.array_unary(op, self._cp_node), self.shape)

    def __neg__(self) -> array[TNum]:
        return self._unary("neg")

    def __pos__(self) -> array[TNum]:
        return self

    def __abs__(self) -> array[TNum]:
        return self._unary("abs")

    # --- reductions --------------------------------------------------------------------

    def _axes(self, axis: Any) -> tuple[int, ...] | None:
        return _core.nd_axes(axis, self.ndim, f"an array of shape {self.shape}")

    def _rows(self, axes: tuple[int, ...]) -> tuple[array[Any], int, int, tuple[int, ...], tuple[int, ...]]:
        """This array as a (rows, n) array whose rows hold the terms of each result
        element in row-major order of ``axes``: kept axes first (a transposed copy only if
        the reduced axes are not already last); also the result's shape without and with
        the reduced axes kept as 1."""
        kept = [d for d in range(self.ndim) if d not in axes]
        n = math.prod(self.shape[d] for d in axes)
        src: array[Any] = self if kept == list(range(len(kept))) else self.transpose(kept + list(axes))
        plain = tuple(self.shape[d] for d in kept)
        keep = tuple(1 if d in axes else self.shape[d] for d in range(self.ndim))
        return src.reshape(self.size // n, n), self.size // n, n, plain, keep

    def sum(self, axis: Any = None, keepdims: bool = False) -> Any:
        """Sum of all elements (a value), or over ``axis`` (an int or a tuple of ints: an
        array), in the fixed order of the module docstring; ``keepdims`` keeps the summed
        axes with length 1."""
        axes = self._axes(axis)
        if axes is not None and len(axes) == self.ndim:
            axes = None
        if axes is None:
            total = _core.array_kernel("sum", [self._cp_node], [])
            if not keepdims:
                return total
            return array._of(_core.array_pack(total.dtype, [total]), (1,) * self.ndim)
        if not axes:
            return self
        if len(axes) == 1:
            return self._sum_axis(axes[0], keepdims)
        rows, m, n, plain, keep = self._rows(axes)
        # a dot product with ones per output element: x * 1 is x exactly, so each entry
        # is the documented sum of its terms
        ones = array([1] * n, "float" if self._cp_node.dtype == "float" else "int")
        node = _core.array_kernel("matmul", [rows._cp_node, ones._cp_node], [m, n, 1])
        return array._of(node, keep if keepdims else plain)

    def _sum_axis(self, axis: int, keepdims: bool) -> array[Any]:
        kept = self.shape[:axis] + ((1,) if keepdims else ()) + self.shape[axis + 1:]
        n = self.shape[axis]
        before = math.prod(self.shape[:axis])
        after = self.size // (before * n)
        src: array[Any] = self
        if before > 1 and after > 1:  # a middle axis: move it last first
            order = [d for d in range(self.ndim) if d != axis] + [axis]
            src = self.transpose(order)
            before, after = self.size // n, 1
        dtype = "float" if self._cp_node.dtype == "float" else "int"
        ones = array([1] * n, dtype)
        if after == 1:
            flat = src.reshape(before, n)._cp_node
            node = _core.array_kernel("matmul", [flat, ones._cp_node], [before, n, 1])
        else:
            flat = src.reshape(n, after)._cp_node
            node = _core.array_kernel("matmul", [ones._cp_node, flat], [1, n, after])
        return array._of(node, kept)

    def _count(self, axis: Any) -> int:
        axes = self._axes(axis)
        return self.size if axes is None else math.prod(self.shape[d] for d in axes)

    def _extreme(self, which: str, axis: Any, keepdims: bool) -> Any:
        axes = self._axes(axis)
        if axes is not None and len(axes) == self.ndim:
            axes = None
        if axes is None:
            out = _core.array_kernel("min" if which == "min" else "max", [self._cp_node], [])
            if not keepdims:
                return out
            return array._of(_core.array_pack(self._cp_node.dtype, [out]), (1,) * self.ndim, self.dtype)
        if not axes:
            return self
        rows, m, n, plain, keep = self._rows(axes)
        node = _core.array_kernel("rows_min" if which == "min" else "rows_max", [rows._cp_node], [m, n])
        return array._of(node, keep if keepdims else plain, self.dtype)

    def min(self, axis: Any = None, keepdims: bool = False) -> Any:
        """The smallest element (a value), or over ``axis`` (an int or a tuple of ints: an
        array): NumPy's ``minimum`` folded in the order of the sums, a NaN gives NaN."""
        return self._extreme("min", axis, keepdims)

    def max(self, axis: Any = None, keepdims: bool = False) -> Any:
        """The largest element (a value), or over ``axis`` (an int or a tuple of ints: an
        array): NumPy's ``maximum`` folded in the order of the sums, a NaN gives NaN."""
        return self._extreme("max", axis, keepdims)

    def mean(self, axis: Any = None, keepdims: bool = False) -> Any:
        """The sum (all elements or over ``axis``) divided by the number of its terms, in
        float: an int, bool or byte array is converted to float32 first, so the mean never
        wraps (NumPy accumulates int means in floating point too; copapy's is float32)."""
        src = self
        if self.dtype != "float":
            src = array._of(_core.array_cast(self._cp_node, "float"), self.shape, "float")
        return src.sum(axis, keepdims) / float(self._count(axis))

    # --- the methods every container has (tensor and vector too) ----------------------

    def item(self) -> value[TNum]:
        """The only element of a one-element array (an alias: no code)."""
        if self.size != 1:
            raise ValueError(f"item() needs an array with one element, this one has shape {self.shape}")
        return _core.array_element(self._cp_node, 0)

    def tolist(self) -> list[Any]:
        """The elements (values aliasing the array: no code) as nested lists of the shape."""
        nested: list[Any] = _core.nd_nest(_core.array_elements(self._cp_node), self.shape)
        return nested

    def get_scalar(self, *key: int) -> value[TNum]:
        """The element at the given indices (one per dimension)."""
        if len(key) != self.ndim:
            raise IndexError(f"get_scalar needs {self.ndim} indices for shape {self.shape}, got {len(key)}")
        return _core.array_element(self._cp_node, self._flat_index(key))

    def map(self, func: Callable[[Any], Any]) -> array[Any]:
        """An array of the same shape holding ``func(x)`` for each element ``x`` (traced
        element by element, then gathered: code grows with the size)."""
        return array([func(x) for x in _core.array_elements(self._cp_node)]).reshape(self.shape)

    def homogenize(self) -> array[TNum]:
        """The array itself: its elements are values already (``tensor.homogenize``)."""
        return self

    def all(self) -> value[int]:
        """Whether every element is non-zero, a bool value (one compare and one reduction)."""
        out: value[int] = (self != 0).min() != 0
        return out

    def any(self) -> value[int]:
        """Whether any element is non-zero, a bool value (one compare and one reduction)."""
        out: value[int] = (self != 0).max() != 0
        return out

    def trace(self) -> value[TNum]:
        """Sum of the diagonal of a square matrix (one gather and one sum)."""
        if self.ndim != 2 or self.shape[0] != self.shape[1]:
            raise ValueError(f"trace needs a square matrix, got shape {self.shape}")
        n = self.shape[0]
        diagonal: value[TNum] = self._gather((n,), [n + 1]).sum()
        return diagonal

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

    def sort(self) -> array[TNum]:
        """``cp.sort(self)``: the sorted copy of a 1-D array (Copapy's ``array.sort``)."""
        return sort(self)

    def argsort(self) -> array[int]:
        """``cp.argsort(self)``: the indices that sort a 1-D array, stable (Copapy's
        ``array.argsort``)."""
        return argsort(self)

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
        """The container protocol (``_protocol``): the node, shape and dtype.
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
    return x._unary(name)


def binary(name: str, a: Any, b: Any) -> Any:
    """A two-argument math function element-wise, either operand an array."""
    if not is_binary(name):
        raise ValueError(f"unknown array operation '{name}'")
    if isinstance(a, array):
        return a._binary(name, b)
    return b._binary(name, a, True)


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
    cond = cond._expand(shape)
    ops = []
    for x in (a, b):
        if isinstance(x, array):
            ops.append(x._expand(shape)._cp_node)
        else:
            s = scalar_or_none(x)
            if s is None:
                raise TypeError(f"iif operands must be arrays, values or numbers, not {type_name(x)}")
            ops.append(s)
    return array._of(_core.array_select(cond._cp_node, ops[0], ops[1]), shape)


def _sort_node(x: array[Any], argsort: bool) -> ArrayNode:
    if x.ndim != 1:
        raise ValueError(
            f"sort and argsort take a 1-D array, got shape {x.shape}: flatten it or index a row"
        )
    return _core.array_kernel("argsort" if argsort else "sort", [x._cp_node], [])


def sort(x: array[Any]) -> array[Any]:
    """``np.sort(x, kind='stable')`` of a 1-D array (NaNs last): one sorting-network stencil,
    its time independent of the data."""
    return array._of(_sort_node(x, False), x.shape, x.dtype)


def argsort(x: array[Any]) -> array[int]:
    """``np.argsort(x, kind='stable')`` of a 1-D array (NaNs last, ties in index order) as an
    int array: one sorting-network stencil."""
    return array._of(_sort_node(x, True), x.shape, "int")
