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

from . import _core

PACK_THRESHOLD: int = _core.PACK_THRESHOLD
"""The default ``pack_threshold``: vectors and tensors with more traced elements than this
compute through array stencils."""


# the packing switch is the n-d core's (``ndcore/pack.rs``: ``nd_pack``)
lookup_array = _core.nd_lookup
"""The array of a container's elements for runtime indexing: its packed array, or its
elements gathered into one (numbers and values, promoted float > int > bool)."""
