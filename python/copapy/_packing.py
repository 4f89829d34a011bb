"""Packing: vectors and tensors of many traced values compute through array stencils.

A vector or tensor with more than ``pack_threshold`` elements (a class attribute, as in
Copapy: ``cp.vector.pack_threshold = 16`` changes it, None turns packing off;
``packed=True`` packs any length, ``packed=False`` never), all of them traced values of one
dtype, is gathered into a ``cp.array`` the first time an operation needs it (input values
are placed inside the array, so this costs no code), and element-wise operations,
``@``/``dot`` and ``sum`` become one array stencil each instead of one stencil per element.
The result is again a vector, whose elements alias the result array (no code), so the next
operation finds the array without gathering anything.

Results have the same bits as the unpacked path: element-wise operations follow the same
scalar semantics, and vectors sum in the same documented order as arrays (``_elements``).
Tensors pack the same way for element-wise operations with a scalar or a tensor of the
same shape, ``sum()`` and ``@`` (one matmul stencil when either operand packs and the
other is all traced too). Containers with plain-number elements, mixed dtypes or
``packed=False`` stay element-wise.
"""

from __future__ import annotations

from typing import Any

from . import _core
from ._array import array
from ._core import ArrayNode, value
from ._elements import element_dtype

PACK_THRESHOLD: int = _core.PACK_THRESHOLD
"""The default ``pack_threshold``: vectors and tensors with more traced elements than this
compute through array stencils."""


# the packing switch is the n-d core's (``ndcore/pack.rs``): the array of a container's
# elements (gathered once, kept on ``con._arr``) when they are more than its threshold
array_of = _core.nd_pack


def runtime_index(vec: Any, index: value[Any]) -> value[Any]:
    """``vec[index]`` for an int value: the element at the index wrapped once if negative,
    then clamped to the vector (gathered into an array if it is not one: a lookup table)."""
    if index.dtype == "float":
        raise TypeError("vector indices must be int or bool values, not float values")
    return _core.array_kernel("index", [lookup_array(vec), index], [])


def lookup_array(con: Any) -> ArrayNode:
    """The array of a container's elements for runtime indexing: its packed array, or its
    elements gathered into one (numbers and values, promoted float > int > bool)."""
    node = array_of(con)
    if node is None:
        node = _core.array_pack(element_dtype(con.values), list(con.values))
        con._arr = node
    return node


def runtime_subscript(ten: Any, keys: tuple[Any, ...]) -> tuple[ArrayNode, tuple[int, ...]]:
    """``ten[keys]`` with runtime (value) indices among ``keys``, computed as a cp.array
    index (wrapped once, then clamped): the result's array and shape."""
    node = lookup_array(ten)
    out = array._of(node, tuple(ten.shape), node.dtype)[keys]
    if isinstance(out, array):
        return out._cp_node, out.shape
    return _core.array_pack(node.dtype, [out]), ()
