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

import math
from collections.abc import Iterable
from typing import Any

from . import _core
from ._core import Container
from ._elements import type_name


def describe(x: Any) -> Container | None:
    """``x``'s descriptor if its class takes part in the protocol, else None."""
    method = getattr(type(x), "__copapy__", None)
    if method is None:
        return None
    c = method(x)
    if not isinstance(c, Container):
        raise TypeError(
            f"{type(x).__name__}.__copapy__() must return a copapy._core.Container, "
            f"got a {type(c).__name__}"
        )
    return c


_NOT_SEQUENCES = (str, bytes, dict, set, frozenset)
"""Iterables that are never a list of numbers: text, and containers without an order."""


def flatten_data(data: Any, shape: tuple[int, ...], what: str) -> list[Any]:
    """Numbers of ``data`` (nested lists/tuples, a NumPy array, a vector or tensor of
    numbers) in row-major order, checked against ``shape``."""
    is_data = describe(data) is not None or hasattr(data, "shape") or isinstance(data, Iterable)
    if isinstance(data, _NOT_SEQUENCES) or not is_data:
        raise TypeError(f"writing to {what} of shape {shape} needs a list or array of numbers, "
                        f"got a {type_name(data)}")
    if hasattr(data, "tolist") and hasattr(data, "shape"):  # NumPy data: its numbers as they are
        _core.check_dtype(data)  # before tolist(): complex, datetime, text, objects
        dshape = tuple(data.shape)
        flat = list(data.reshape(-1).tolist()) if dshape else [data.item()]
    else:
        flat, dshape = _core.nd_flatten(data, "data")
    if dshape != shape:
        raise ValueError(
            f"cannot write data of shape {dshape} to {what} of shape {shape}: "
            f"it takes {math.prod(shape)} numbers in that shape"
        )
    return flat
