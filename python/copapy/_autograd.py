"""``cp.grad``: reverse-mode automatic differentiation of traced values.

``grad(x, y)`` (Copapy's names: ``x`` is differentiated with respect to ``y``) adds the
derivative of ``x`` to the traced graph (in Rust, see
``crates/copapy-compiler/src/autodiff.rs`` for every rule); the result is an ordinary
``cp.value`` that is optimised and compiled with everything else, and may itself be
differentiated or used in a later ``grad`` call (gradient descent unrolled in a loop).

Shapes (``x`` the differentiated output, ``y`` the variables, as Copapy names them):

* ``y`` a ``cp.value`` gives a value; a list or tuple gives a list (nested lists
  nest); a ``cp.vector``, ``cp.tensor`` (matrix), ``cp.quaternion``, ``cp.array`` or any
  container with ``__copapy__`` gives the same kind of object with the same shape
  (made by its descriptor's ``rebuild``; docs/architecture.md, "Container protocol").
* Entries of ``y`` that are plain numbers get the plain number ``0.0``; values that ``x``
  does not depend on get a constant ``0.0`` value.
* ``x`` a scalar value gives the gradient. ``x`` a vector, list or tuple gives the
  Jacobian: one gradient per element of ``x`` (each shaped like ``y``) in a list, or, when
  both ``x`` and ``y`` are vectors, an ``m x n`` matrix (``cp.tensor``) with
  ``J[i, j] = d x[i] / d y[j]``. A plain-number ``x`` is a constant: all zeros.

Gradients exist for float values only: ``x`` or an entry of ``y`` that is an int or bool
value is a ``TypeError``. Paths through comparisons, ``//``, int conversions and other
piecewise-constant operations contribute nothing. ``abs``, ``minimum``, ``maximum``,
``clamp`` and ``iif`` give subgradients: ``abs`` has derivative 0 at 0; ``minimum`` and
``maximum`` pass the gradient to the operand they return (the second one on a tie).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, overload

from . import _core
from ._core import Container, value
from ._core import nd_describe as describe
from ._elements import plain
from ._tensors import tensor
from ._vectors import vector

_Number = int | float


def _leaves(x: Any, out: list[Any]) -> None:
    """Appends the scalars of ``x`` (values, plain numbers, or the descriptor of an array
    container) in order."""
    if isinstance(plain(x), (value, int, float)):  # NumPy scalars are plain numbers too
        out.append(x)
        return
    c = describe(x)
    if c is not None:
        if c.kind == "array":
            out.append(c)
        else:
            for e in c.leaves or ():
                _leaves(e, out)
    elif isinstance(x, (list, tuple)):
        for e in x:
            _leaves(e, out)
    else:
        raise TypeError(
            "cp.grad differentiates with respect to values, lists of values, vectors, "
            f"matrices, quaternions, arrays or other copapy containers, got {type(x).__name__}"
        )


def _rebuild(x: Any, grads: Iterator[Any]) -> Any:
    """``x``'s structure with each scalar replaced by the next gradient (containers rebuilt
    through their descriptor's ``rebuild``; without one, a list or a bare node)."""
    if isinstance(plain(x), (value, int, float)):
        return next(grads)
    c = describe(x)
    if c is None:
        return [_rebuild(e, grads) for e in x]
    if c.kind == "array":
        g = next(grads)
        return c.rebuild(g) if c.rebuild is not None else g
    parts = tuple(_rebuild(e, grads) for e in c.leaves or ())
    if c.rebuild is None:
        return list(parts)
    return c.rebuild(parts[0] if c.kind == "element" else parts)


def _gradients(y: Any, leaves: list[Any]) -> list[Any]:
    """d y / d leaf for each leaf: a value for value leaves, an ArrayNode for array
    descriptors, 0.0 for plain numbers."""
    y = plain(y)
    if isinstance(y, (int, float)) and not isinstance(y, bool):
        return [0.0] * len(leaves)
    if not isinstance(y, value):
        raise TypeError(f"cp.grad differentiates a copapy value, got {type(y).__name__}")
    traced: list[Any] = [
        e.node if isinstance(e, Container) else e for e in leaves if isinstance(e, value | Container)
    ]
    it: Iterator[Any] = iter(_core.grad(y, traced))
    return [next(it) if isinstance(e, value | Container) else 0.0 for e in leaves]


def _is_vector(x: Any) -> bool:
    return isinstance(x, vector)


@overload
def grad(x: value[Any] | float, y: value[Any]) -> value[float]: ...
@overload
def grad(x: value[Any] | float, y: list[Any] | tuple[Any, ...]) -> list[Any]: ...
@overload
def grad(x: Any, y: Any) -> Any: ...
def grad(x: Any, y: Any) -> Any:
    """Derivative of ``x`` with respect to ``y`` (reverse mode), shaped like ``y``.

    Copapy's parameter names: ``x`` is what is differentiated, a float ``cp.value`` (or a
    vector/list of them: a Jacobian); ``y`` holds the variables, a value, a list or tuple
    of values, a vector, a matrix or a quaternion. See the module documentation for shapes
    and for the rules at kinks.

    Example::

        t = cp.value(0.5)
        dt = cp.grad(cp.sin(t) * t, t)   # cos(t) * t + sin(t), traced
    """
    return _grad(x, y)


def _expands(out: Any) -> bool:
    """Whether ``out`` is differentiated element by element (a Jacobian): lists, tuples
    and containers of values (an array output is not supported)."""
    if isinstance(out, (list, tuple)):
        return True
    c = describe(out)
    return c is not None and c.kind != "array"


def _grad(out: Any, wrt: Any) -> Any:
    out = plain(out)  # a NumPy scalar is a plain number (its derivative is 0)
    if isinstance(out, value) or (isinstance(out, (int, float)) and not isinstance(out, bool)):
        if isinstance(plain(wrt), (value, int, float)):
            return _gradients(out, [wrt])[0]
        leaves: list[Any] = []
        _leaves(wrt, leaves)
        return _rebuild(wrt, iter(_gradients(out, leaves)))
    if _expands(out):
        outputs: list[Any] = []
        _leaves(out, outputs)
        if any(isinstance(o, Container) for o in outputs):
            raise TypeError(
                "cp.grad differentiates a copapy value, got an array: reduce it first, e.g. .sum()"
            )
        rows = [_grad(o, wrt) for o in outputs]
        if _is_vector(out) and _is_vector(wrt):
            return tensor([list(r.values) for r in rows])
        return rows
    raise TypeError(f"cp.grad differentiates a copapy value, got {type(out).__name__}")
