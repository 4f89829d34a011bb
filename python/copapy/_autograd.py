"""``cp.grad``: reverse-mode automatic differentiation of traced values.

``grad(y, x)`` adds the derivative of ``y`` to the traced graph (in Rust, see
``crates/copapy-compiler/src/autodiff.rs`` for every rule); the result is an ordinary
``cp.value`` that is optimised and compiled with everything else, and may itself be
differentiated or used in a later ``grad`` call (gradient descent unrolled in a loop).

Shapes:

* ``x`` a ``cp.value`` gives a value; a list or tuple gives a list (nested lists
  nest); a ``cp.vector``, ``cp.tensor`` (matrix) or ``cp.quaternion`` gives the same
  kind of object with the same shape (rebuilt with its ``map`` method).
* Entries of ``x`` that are plain numbers get the plain number ``0.0``; values that ``y``
  does not depend on get a constant ``0.0`` value.
* ``y`` a scalar value gives the gradient. ``y`` a vector, list or tuple gives the
  Jacobian: one gradient per element of ``y`` (each shaped like ``x``) in a list, or, when
  both ``y`` and ``x`` are vectors, an ``m x n`` matrix (``cp.tensor``) with
  ``J[i, j] = d y[i] / d x[j]``. A plain-number ``y`` is a constant: all zeros.

Gradients exist for float values only: ``y`` or an entry of ``x`` that is an int or bool
value is a ``TypeError``. Paths through comparisons, ``//``, int conversions and other
piecewise-constant operations contribute nothing. ``abs``, ``minimum``, ``maximum``,
``clamp`` and ``iif`` give subgradients: ``abs`` has derivative 0 at 0; ``minimum`` and
``maximum`` pass the gradient to the operand they return (the second one on a tie).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, overload

from . import _core
from ._core import value
from ._ndarray import array

_Number = int | float


def _is_container(x: Any) -> bool:
    return not isinstance(x, value) and hasattr(x, "values") and hasattr(x, "map")


def _leaves(x: Any, out: list[Any]) -> None:
    """Appends the scalars of ``x`` (values or plain numbers) in order."""
    if isinstance(x, (value, int, float, array)):
        out.append(x)
    elif _is_container(x):
        for e in x.values:
            _leaves(e, out)
    elif isinstance(x, (list, tuple)):
        for e in x:
            _leaves(e, out)
    else:
        raise TypeError(
            "cp.grad differentiates with respect to values, lists of values, vectors, "
            f"matrices or quaternions, got {type(x).__name__}"
        )


def _rebuild(x: Any, grads: Iterator[Any]) -> Any:
    """``x``'s structure with each scalar replaced by the next gradient."""
    if isinstance(x, (value, int, float, array)):
        return next(grads)
    if _is_container(x):
        return x.map(lambda _element: next(grads))
    return [_rebuild(e, grads) for e in x]


def _gradients(y: Any, leaves: list[Any]) -> list[Any]:
    """d y / d leaf for each leaf: a value for value leaves, 0.0 for plain numbers."""
    if isinstance(y, (int, float)) and not isinstance(y, bool):
        return [0.0] * len(leaves)
    if not isinstance(y, value):
        raise TypeError(f"cp.grad differentiates a copapy value, got {type(y).__name__}")
    traced = [e._cp_node if isinstance(e, array) else e for e in leaves if isinstance(e, value | array)]
    it: Iterator[Any] = iter(_core.grad(y, traced))
    return [
        array._of(next(it), e.shape, "float") if isinstance(e, array)
        else next(it) if isinstance(e, value) else 0.0
        for e in leaves
    ]


def _is_vector(x: Any) -> bool:
    try:
        from ._vectors import vector  # noqa: PLC0415 - the module may not exist yet
    except ImportError:
        return False
    return isinstance(x, vector)


@overload
def grad(y: value[Any] | float, x: value[Any]) -> value[float]: ...
@overload
def grad(y: value[Any] | float, x: list[Any] | tuple[Any, ...]) -> list[Any]: ...
@overload
def grad(y: Any, x: Any) -> Any: ...
def grad(y: Any, x: Any) -> Any:
    """Derivative of ``y`` with respect to ``x`` (reverse mode), shaped like ``x``.

    ``y`` is a float ``cp.value`` (or a vector/list of them: a Jacobian); ``x`` is a
    value, a list or tuple of values, a vector, a matrix or a quaternion. See the module
    documentation for shapes and for the rules at kinks.

    Example::

        x = cp.value(0.5)
        dy = cp.grad(cp.sin(x) * x, x)   # cos(x) * x + sin(x), traced
    """
    if isinstance(y, value) or (isinstance(y, (int, float)) and not isinstance(y, bool)):
        if isinstance(x, (value, int, float, array)):
            return _gradients(y, [x])[0]
        leaves: list[Any] = []
        _leaves(x, leaves)
        return _rebuild(x, iter(_gradients(y, leaves)))
    if _is_container(y) or isinstance(y, (list, tuple)):
        outputs: list[Any] = []
        _leaves(y, outputs)
        rows = [grad(yi, x) for yi in outputs]
        if _is_vector(y) and _is_vector(x):
            from ._tensors import tensor  # noqa: PLC0415 - optional until tensors are used

            return tensor([list(r.values) for r in rows])
        return rows
    raise TypeError(f"cp.grad differentiates a copapy value, got {type(y).__name__}")
