"""Activation functions for small neural layers: ``relu`` and ``sigmoid``.

Both take a ``cp.value``, a plain Python number, a ``cp.array`` (one array stencil per
operation) or a container with a ``map`` method (``cp.vector``, ``cp.tensor``/``cp.matrix``,
``cp.quaternion``) and apply elementwise.

* ``relu(x)`` is ``numpy.maximum(x, 0)``: ``x`` where ``x > 0``, else ``0`` of the same type
  (so ``relu(-0.0)`` is ``+0.0``), and NaN stays NaN. (Copapy computes ``x * (x > 0)``, which
  differs only in the sign of a zero result and in giving NaN for ``-inf``.)
* ``sigmoid(x)`` is ``1 / (1 + exp(-x))`` in float32 (int inputs are converted); it saturates
  to exactly 0 and 1 for large ``|x|`` instead of overflowing, and NaN stays NaN. It is an op
  of the table (stencils/optable.py, one stencil with the bits of that expression), made in
  ``_math`` like ``cp.exp`` and re-exported here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar, overload

from . import _math
from ._array import array
from ._core import value
from ._elements import plain
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
def relu(x: array[U]) -> array[U]: ...
@overload
def relu(x: U) -> U: ...
def relu(x: Any) -> Any:
    """Rectified linear unit: ``maximum(x, 0)`` elementwise (NaN propagates)."""
    if isinstance(x, value | array):
        return _math.maximum(x, 0)
    if _is_container(x):
        return x.map(relu)
    x = plain(x)  # a NumPy scalar as the Python number it stands for
    if isinstance(x, bool):
        return int(x)
    if isinstance(x, int):
        return x if x > 0 else 0
    if isinstance(x, float):
        return x if x > 0 or x != x else 0.0
    raise TypeError(f"relu expects a number, cp.value or container, got {type(x).__name__}")


if TYPE_CHECKING:
    # the types by container; at run time sigmoid is the op table's function from _math
    # (stencils/optable.py: one stencil), which maps containers elementwise
    @overload
    def sigmoid(x: value[Any]) -> value[float]: ...
    @overload
    def sigmoid(x: vector[Any]) -> vector[float]: ...
    @overload
    def sigmoid(x: tensor[Any]) -> tensor[float]: ...
    @overload
    def sigmoid(x: array[Any]) -> array[float]: ...
    @overload
    def sigmoid(x: float) -> float: ...
    def sigmoid(x: Any) -> Any:
        """Logistic function ``1 / (1 + exp(-x))`` elementwise, in (0, 1)."""
else:
    sigmoid = _math.sigmoid


def softmax(x: Any) -> Any:
    """``exp(x - max(x)) / sum(exp(x - max(x)))`` of a 1-D ``cp.array``, vector or 1-D
    tensor (Copapy's ``nn.softmax``): floats in (0, 1) that sum to 1; subtracting the
    largest element first keeps ``exp`` from overflowing. The result has the type of ``x``."""
    if not isinstance(x, array) and not (_is_container(x) and hasattr(x, "shape")):
        raise TypeError(f"softmax takes a cp.array, vector or tensor, not {type(x).__name__}")
    if len(x.shape) != 1:
        raise ValueError(f"softmax takes a 1-D input, got shape {tuple(x.shape)}: index a row first")
    e = _math.exp(x - _math.max(x))
    return e / e.sum()


def _float_array(x: Any) -> array[float]:
    """``x`` (an array or nested numbers) as a float array; int elements converted."""
    a = x if isinstance(x, array) else array(x, "float")
    return a if a.dtype == "float" else a * 1.0


def linear(x: Any, weight: Any, bias: Any = None) -> Any:
    """A fully connected layer ``weight @ x + bias`` (Copapy's ``nn.linear``).

    ``x`` is ``(in_features,)`` or ``(batch, in_features)``, ``weight``
    ``(out_features, in_features)``, ``bias`` ``(out_features,)`` or None. Everything is
    computed in float. A ``cp.array`` input gives a ``cp.array`` (one matmul stencil), a
    vector a vector, a tensor a tensor; weights and bias may be nested lists."""
    xa: Any
    w: Any
    b: Any
    if isinstance(x, array):
        xa = x if x.dtype == "float" else x * 1.0
        w = _float_array(weight)
        b = None if bias is None else _float_array(bias)
    elif isinstance(x, vector | tensor):
        xa, w = x, tensor(weight)
        b = None if bias is None else tensor(bias)
    else:
        raise TypeError(f"linear takes a cp.array, vector or tensor input, not {type(x).__name__}")
    if len(xa.shape) not in (1, 2) or len(w.shape) != 2:
        raise ValueError(
            "linear takes a 1-D or 2-D input and 2-D weights, "
            f"got shapes {tuple(xa.shape)} and {tuple(w.shape)}"
        )
    if xa.shape[-1] != w.shape[1]:
        raise ValueError(
            f"an input of {xa.shape[-1]} features does not fit weights of shape {tuple(w.shape)}"
        )
    if b is not None and tuple(b.shape) != (w.shape[0],):
        raise ValueError(f"a bias of shape {tuple(b.shape)} does not fit {w.shape[0]} output features")
    out: Any = w @ xa if len(xa.shape) == 1 else xa @ w.T
    if b is not None:
        out = out + b
    return vector(out) if isinstance(x, vector) else out
