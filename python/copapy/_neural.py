"""Activation functions for small neural layers: ``relu`` and ``sigmoid``.

Both take a ``cp.value``, a plain Python number, or a container with a ``map`` method
(``cp.vector``, ``cp.tensor``/``cp.matrix``, ``cp.quaternion``) and apply elementwise.

* ``relu(x)`` is ``numpy.maximum(x, 0)``: ``x`` where ``x > 0``, else ``0`` of the same type
  (so ``relu(-0.0)`` is ``+0.0``), and NaN stays NaN. (Copapy computes ``x * (x > 0)``, which
  differs only in the sign of a zero result and in giving NaN for ``-inf``.)
* ``sigmoid(x)`` is ``1 / (1 + exp(-x))`` in float32 (int inputs are converted); it saturates
  to exactly 0 and 1 for large ``|x|`` instead of overflowing, and NaN stays NaN.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, TypeVar, overload

from . import _math
from ._core import value

if TYPE_CHECKING:
    from ._tensors import tensor
    from ._vectors import vector

U = TypeVar("U", int, float)


def _is_container(x: object) -> bool:
    return not isinstance(x, value) and hasattr(x, "map")


@overload
def relu(x: value[U]) -> value[U]: ...
@overload
def relu(x: vector[U]) -> vector[U]: ...
@overload
def relu(x: tensor[U]) -> tensor[U]: ...
@overload
def relu(x: U) -> U: ...
def relu(x: Any) -> Any:
    """Rectified linear unit: ``maximum(x, 0)`` elementwise (NaN propagates)."""
    if isinstance(x, value):
        return _math.maximum(x, 0)
    if _is_container(x):
        return x.map(relu)
    if isinstance(x, bool):
        return int(x)
    if isinstance(x, int):
        return x if x > 0 else 0
    if isinstance(x, float):
        return x if x > 0 or x != x else 0.0
    raise TypeError(f"relu expects a number, cp.value or container, got {type(x).__name__}")


def _plain_sigmoid(x: float) -> float:
    if x != x:
        return x
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x) if x > -745.0 else 0.0  # exp(-x) would overflow; same limit, no exception
    return e / (1.0 + e)


@overload
def sigmoid(x: value[Any]) -> value[float]: ...
@overload
def sigmoid(x: vector[Any]) -> vector[float]: ...
@overload
def sigmoid(x: tensor[Any]) -> tensor[float]: ...
@overload
def sigmoid(x: float) -> float: ...
def sigmoid(x: Any) -> Any:
    """Logistic function ``1 / (1 + exp(-x))`` elementwise, in (0, 1)."""
    if isinstance(x, value):
        return 1.0 / (1.0 + _math.exp(-x))
    if _is_container(x):
        return x.map(sigmoid)
    if isinstance(x, int | float):
        return _plain_sigmoid(float(x))
    raise TypeError(f"sigmoid expects a number, cp.value or container, got {type(x).__name__}")
