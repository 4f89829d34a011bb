"""Copapy's newest numerics: ``interp``, ``lerp``, ``ravel``, and the shared element
helpers of ``filters.convolve`` / ``filters.gaussian_filter``.

Everything here is built from scalar operations (``+ - * /``, ``minimum``/``maximum``,
``iif``), so ``cp.grad`` differentiates through it and the results are the same bits on
every target. The float operations happen in one documented order, so a NumPy float32
reference computing in the same order gives the same bits (tests/numerics/test_interp.py).

``interp(x, xp, fp)`` is ``numpy.interp`` (clamped ends, ``xp`` strictly increasing):
with ``xc = clamp(x, xp[0], xp[-1])`` and segment ``j`` the last with ``xp[j] <= xc``,
the result is ``fp[j] + slope[j] * (xc - xp[j])``, ``slope[j] = (fp[j+1] - fp[j]) /
(xp[j+1] - xp[j])`` (folded at trace time, rounded once to float32, when ``xp`` and ``fp``
are numbers); at and beyond ``xp[-1]`` it is ``fp[-1]``. The segment is chosen by a chain
of ``n - 1`` branch-free selects, so the cost is O(len(xp)) per position. NumPy computes in
float64: our float32 result is within a few ulp of it (exactly ``fp[j]`` at ``x == xp[j]``).
A NaN ``x`` gives NaN with every method.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._array import array
from ._core import value
from ._math import iif, maximum, minimum
from ._tensors import tensor
from ._vectors import vector

__all__ = ["elements_and_shape", "interp", "lerp", "ravel", "rebuild"]

_METHODS = ("linear", "previous", "nearest")


def _to_list(x: Any) -> Any:
    tolist = getattr(x, "tolist", None)
    return tolist() if callable(tolist) and not hasattr(x, "__copapy__") else x


def elements_and_shape(x: Any, name: str) -> tuple[list[Any], tuple[int, ...]]:
    """The elements (row-major) and the shape of a vector, tensor, ``cp.array``, NumPy
    array or nested sequence; a scalar is shape ``()``."""
    if isinstance(x, array):
        return [x.element(k) for k in range(x.size)], tuple(x.shape)
    values = getattr(x, "values", None)
    if isinstance(values, tuple):  # vector, tensor
        return list(values), tuple(getattr(x, "shape", (len(values),)))
    x = _to_list(x)
    if isinstance(x, value | int | float):
        return [x], ()
    if not isinstance(x, Sequence) or isinstance(x, str | bytes):
        raise TypeError(f"{name} must be a number, a cp.value, a vector, a tensor, a cp.array or a "
                        f"sequence of numbers, not {type(x).__name__}")
    out: list[Any] = []
    shape = _nested(x, out, name)
    return out, shape


def _nested(x: Any, out: list[Any], name: str) -> tuple[int, ...]:
    x = _to_list(x)
    if isinstance(x, value | int | float):
        out.append(x)
        return ()
    if isinstance(x, Sequence) and not isinstance(x, str | bytes):
        shapes = {_nested(e, out, name) for e in x}
        if len(shapes) > 1:
            raise ValueError(f"{name} is ragged: its rows have different shapes {sorted(shapes)}")
        return (len(x), *(shapes.pop() if shapes else ()))
    raise TypeError(f"{name} must contain numbers or cp.value, not {type(x).__name__}")


def rebuild(like: Any, items: list[Any], shape: tuple[int, ...]) -> Any:
    """``items`` in the kind of container ``like`` is (a vector stays a vector, a tensor a
    tensor, anything else becomes a ``cp.array``, as Copapy returns for sequences)."""
    if isinstance(like, vector) and len(shape) == 1:
        return vector(items)
    if isinstance(like, tensor):
        return tensor(items, shape)
    if any(isinstance(e, value) for e in items):
        items = [e if isinstance(e, value) else value(float(e)) for e in items]
    return array(items, "float").reshape(shape)


def _float(e: Any) -> Any:
    if isinstance(e, value):
        return e if e.dtype == "float" else e * 1.0
    return float(e)


def _table(v: Any, name: str) -> list[Any]:
    items, shape = elements_and_shape(v, name)
    if len(shape) != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {shape}")
    return [_float(e) for e in items]


def _interp_one(x: Any, xp: list[Any], fp: list[Any], method: str) -> Any:
    n = len(xp)
    if not isinstance(x, value) and not any(isinstance(e, value) for e in (*xp, *fp)):
        return _interp_number(float(x), xp, fp, method)
    xc = minimum(maximum(_float(x), xp[0]), xp[-1])
    if method == "linear":
        segment = [fp[j] + (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]) * (xc - xp[j]) for j in range(n - 1)]
    elif method == "previous":
        segment = list(fp[:-1])
    else:
        segment = [iif(xc - xp[j] < xp[j + 1] - xc, fp[j], fp[j + 1]) for j in range(n - 1)]
    result = segment[0]
    for j in range(1, n - 1):
        result = iif(xc >= xp[j], segment[j], result)
    result = iif(xc >= xp[-1], fp[-1], result)
    # a NaN x compares false everywhere: 'linear' carries it through its arithmetic, the
    # table lookups select it explicitly (the same NaN as with plain numbers)
    return result if method == "linear" else iif(xc != xc, xc, result)


def _interp_number(x: float, xp: list[Any], fp: list[Any], method: str) -> float:
    if x != x:
        return x
    if x <= xp[0]:
        return float(fp[0])
    if x >= xp[-1]:
        return float(fp[-1])
    j = max(k for k in range(len(xp) - 1) if xp[k] <= x)
    if method == "previous":
        return float(fp[j])
    if method == "nearest":
        return float(fp[j] if x - xp[j] < xp[j + 1] - x else fp[j + 1])
    return float(fp[j] + (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]) * (x - xp[j]))


def interp(x: Any, xp: Any, fp: Any, method: str = "linear") -> Any:
    """One-dimensional table interpolation, ``numpy.interp`` for ``method='linear'`` (see
    the module documentation for the order of operations).

    ``x``: a number, value, vector, tensor or ``cp.array`` (the result has its kind and
    shape); ``xp``: strictly increasing points (numbers or values, at least two);
    ``fp``: the table values at ``xp``. Outside ``[xp[0], xp[-1]]`` the first or last
    ``fp`` is returned. ``method``: ``'linear'``, ``'previous'`` (the value of the last
    point not larger than ``x``) or ``'nearest'`` (ties go to the upper point, as Copapy)."""
    if method not in _METHODS:
        raise ValueError(f"unknown method {method!r}, expected one of {', '.join(map(repr, _METHODS))}")
    grid, table = _table(xp, "xp"), _table(fp, "fp")
    if len(grid) != len(table):
        raise ValueError(f"xp and fp must have the same number of elements, got {len(grid)} and {len(table)}")
    if len(grid) < 2:
        raise ValueError(f"xp needs at least two points, got {len(grid)}")
    numbers = [g for g in grid if not isinstance(g, value)]
    if len(numbers) == len(grid) and not all(b > a for a, b in zip(grid, grid[1:], strict=False)):
        raise ValueError("xp must be strictly increasing")
    if isinstance(x, value | int | float) and not isinstance(x, bool):
        return _interp_one(x, grid, table, method)
    items, shape = elements_and_shape(x, "x")
    return rebuild(x, [_interp_one(e, grid, table, method) for e in items], shape)


def lerp(*args: Any) -> Any:
    """Linear interpolation, in two forms.

    ``lerp(table, t)``: the element of a 1-D table at the fractional index ``t`` (a
    number, value or container of them), ``t`` clamped to ``[0, len(table) - 1]``
    (Copapy's table lookup): ``interp(t, range(len(table)), table)``.

    ``lerp(a, b, t)``: ``a + (b - a) * t`` (elementwise for containers), not clamped."""
    if len(args) == 2:
        table, t = args
        items = _table(table, "table")
        if len(items) < 2:
            raise ValueError(f"table needs at least two elements, got {len(items)}")
        return interp(t, [float(k) for k in range(len(items))], items)
    if len(args) == 3:
        a, b, t = args
        return a + (b - a) * t
    raise TypeError(f"lerp takes (table, t) or (a, b, t), got {len(args)} arguments")


def ravel(a: Any) -> Any:
    """The elements of ``a`` in row-major order as a 1-D container of the same kind
    (``numpy.ravel``): a ``cp.array`` gives a ``cp.array`` (no code), a tensor a 1-D
    tensor, a vector itself, a nested sequence a list."""
    if isinstance(a, array):
        return a.ravel()
    if isinstance(a, tensor):
        return a.flatten()
    if isinstance(a, vector):
        return a
    items, _ = elements_and_shape(a, "a")
    return items
