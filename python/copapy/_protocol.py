"""The container protocol between Python containers and the Rust core.

A container class (``vector``, ``tensor``, ``quaternion``, ``array``, or a user's own)
defines ``__copapy__(self)`` returning a ``copapy._core.Container``:

* ``Container.element(leaf, rebuild=None)``: one value or number in a wrapper;
* ``Container.sequence(leaves, shape=None, rebuild=None)``: values and numbers in
  row-major order, ``shape`` multiplying out to their count;
* ``Container.array(node, shape=None, dtype=None, rebuild=None)``: the ``ArrayNode`` of a
  contiguous array, seen with ``shape`` and ``dtype``.

``rebuild`` makes the same kind of container from new contents (a number, a tuple in leaf
order, or an ``ArrayNode``); ``Target.read_value`` and ``cp.grad`` use it. With it,
``Target.compile``, ``read_value``, ``write_value``, ``names=``, ``@cp.jit`` results and
``cp.grad`` accept the container. See docs/architecture.md, "Container protocol".

``flatten_data`` is the ``write_value`` conversion of data for a container of leaves;
``copapy/__init__.py`` registers it, with the classes ``@cp.jit`` builds from NumPy
arguments, with the Rust core once at import (``_core.register_containers``).
"""

from __future__ import annotations

from . import _core

describe = _core.nd_describe
"""``x``'s descriptor if its class takes part in the protocol, else None (a ``__copapy__``
that returns anything but a ``Container`` is a TypeError)."""

flatten_data = _core.nd_flatten_data
"""``flatten_data(data, shape, what)``: the numbers of ``data`` (nested lists/tuples, a NumPy
array, a container of numbers) in row-major order, checked against ``shape``."""
