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
from ._core import ArrayNode

PACK_THRESHOLD: int = _core.PACK_THRESHOLD
"""The default ``pack_threshold``: vectors and tensors with more traced elements than this
compute through array stencils."""


# the packing switch is the n-d core's (``ndcore/``): the threshold of a container (its
# ``packed=`` flag, else its class's ``pack_threshold``), whether an operation should try
# the array path, and the array of its elements (gathered once, kept on ``con._arr``)
threshold = _core.nd_pack_threshold
wants = _core.nd_wants_pack
array_of = _core.nd_pack


def force_array(con: Any) -> ArrayNode | None:
    """Like ``array_of`` at any length (for the smaller operand of a packed product)."""
    return _core.nd_pack(con, True)


def matmul(a: Any, b: Any, m: int, k: int, p: int) -> ArrayNode | None:
    """``a @ b`` (m x k by k x p) as one array stencil when one operand packs (more
    traced values than its threshold, or ``packed=True``) and the other is all traced too;
    ``packed=False`` on either keeps the product element-wise."""
    if threshold(a) is None and getattr(a, "_packed", None) is False:
        return None
    if threshold(b) is None and getattr(b, "_packed", None) is False:
        return None
    if array_of(a) is None and array_of(b) is None:
        return None
    x, y = force_array(a), force_array(b)
    if x is None or y is None:
        return None
    return _core.array_kernel("matmul", [x, y], [m, k, p])


lookup_array = _core.nd_lookup
"""The array of a container's elements for runtime indexing: its packed array, or its
elements gathered into one (numbers and values, promoted float > int > bool)."""


def dot(a: Any, b: Any) -> Any:
    """``sum(a[k] * b[k])`` as one array stencil, or None when the operands do not pack."""
    x = array_of(a)
    if x is None:
        return None
    y = array_of(b)
    if y is None:
        return None
    return _core.array_kernel("dot", [x, y], [])

