"""Filters over a window of samples: ``mean``, ``median``, ``argsort``, ``sort``.

Compiled code has no data-dependent branches, so ``median`` and ``argsort`` on traced values
run a fixed *sorting network* (Batcher's odd-even merge sort, O(n log² n) compare-exchange
steps for any n) built from ``cp.minimum``/``cp.maximum`` (median) or ``cp.iif`` (argsort).
The network is chosen from the window length while tracing; the optimiser then drops every
compare-exchange whose result is not used (the median needs only part of the network).
With only plain numbers as input the result is computed in Python right away.

Semantics (tested against NumPy):

* ``mean(v)`` is ``numpy.mean`` in float32: ``v.sum() / len(v)`` in the vector's summation
  order, with int and bool values converted to float32 first, so the sum never wraps at 32
  bits (NumPy accumulates int means in float64). An empty ``v`` gives NaN with NumPy's
  ``RuntimeWarning``.
* ``median(v)`` is ``numpy.median``: the middle element for odd ``n``; for even ``n`` the
  mean of the two middle ones, ``(a + b) / 2`` in float32 (``a * 0.5 + b * 0.5`` for ints,
  which cannot wrap). A NaN anywhere gives NaN. (Copapy returns one of the two middle
  elements for even ``n``, depending on the input order; for odd ``n`` both agree.)
* ``argsort(v)`` is ``numpy.argsort(v, kind='stable')``: indices that sort ``v`` ascending,
  equal elements keep their input order, NaNs go last (in their input order). The result is
  a ``cp.vector`` of ints. (Copapy gives wrong indices when elements are equal.)
* ``convolve(a, v, mode)`` is ``numpy.convolve`` (``mode`` ``'full'``, ``'same'`` or
  ``'valid'``): ``full[k] = sum_i a[i] * v[k - i]``, the products added left to right in
  increasing ``i`` (NumPy adds in another order: a few ulp apart in float32).
* ``gaussian_filter(input, sigma, mode='reflect', cval=0.0, truncate=4.0, radius=None)``
  is ``scipy.ndimage.gaussian_filter`` (order 0): one 1-D correlation per axis, axes in
  increasing order, with SciPy's kernel (radius ``int(truncate * sigma + 0.5)``, weights
  ``exp(-0.5 * x**2 / sigma**2)`` normalised to sum 1, computed in float64 and rounded to
  float32 once); taps added in increasing offset. ``sigma`` is one number or one per axis;
  an axis with sigma 0 is left alone. Boundary modes: ``'reflect'`` (d c b a | a b c d),
  ``'mirror'`` (d c b | a b c d), ``'nearest'`` (a a a | a b c d), ``'wrap'``
  (b c d | a b c d) and ``'constant'`` (``cval``), as SciPy defines them. SciPy computes in
  float64, so the float32 result is within a few ulp of it.

All these are built from scalar operations, so ``cp.grad`` differentiates through them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, overload

from . import _array, _math
from ._array import array
from ._core import value
from ._elements import plain
from ._interp import elements_and_shape, rebuild
from ._vectors import vector

__all__ = ["argsort", "convolve", "gaussian_filter", "homogenize_vector", "mean", "median", "sort",
           "sorting_network", "stable_sort_network"]


def sorting_network(n: int) -> list[tuple[int, int]]:
    """Compare-exchange pairs ``(i, j)``, ``i < j``, of Batcher's odd-even merge sort for ``n``
    inputs: applying ``a[i], a[j] = min(a[i], a[j]), max(a[i], a[j])`` in order sorts ``a``."""
    pairs: list[tuple[int, int]] = []
    p = 1
    while p < n:
        k = p
        while k >= 1:
            for j in range(k % p, n - k, 2 * k):
                for i in range(min(k, n - j - k)):
                    if (i + j) // (2 * p) == (i + j + k) // (2 * p):
                        pairs.append((i + j, i + j + k))
            k //= 2
        p *= 2
    return pairs


def _as_list(samples: Iterable[Any], what: str, allow_empty: bool = False) -> list[Any]:
    values = getattr(samples, "values", None)  # a 1-D tensor iterates as 0-d tensors
    # NumPy scalars as the Python numbers they stand for
    items = [plain(s) for s in (values if isinstance(values, tuple) else samples)]
    if not items and not allow_empty:
        raise ValueError(f"{what} of an empty vector")
    for s in items:
        if not isinstance(s, value | int | float):
            raise TypeError(f"{what} expects a vector of numbers or cp.value, got an element of type "
                            f"{type(s).__name__}")
    return items


def _is_nan(x: Any) -> bool:
    return bool(x != x)


def _is_traced(items: list[Any]) -> bool:
    return any(isinstance(s, value) for s in items)


def homogenize_vector(input_values: Iterable[Any]) -> list[Any]:
    """All elements as ``cp.value`` if any of them is one, else all plain numbers (as Copapy)."""
    items = list(input_values)
    if _is_traced(items):
        return [s if isinstance(s, value) else value(s) for s in items]
    return items


@overload
def mean(input_vector: vector[float] | Iterable[value[float] | float]) -> value[float] | float: ...
@overload
def mean(input_vector: vector[Any] | Iterable[Any]) -> value[float] | float: ...
def mean(input_vector: Any) -> Any:
    """Arithmetic mean: ``sum / len`` in float (int values are converted first, so it never
    wraps); NaN for no elements, as NumPy."""
    vec = input_vector if isinstance(input_vector, vector) else vector(_as_list(input_vector, "mean", True))
    return vec.mean()


def _plain_median(items: list[Any]) -> Any:
    if any(_is_nan(s) for s in items):
        return float("nan")
    ordered = sorted(items)
    n = len(ordered)
    if n % 2:
        return ordered[n // 2]
    return (ordered[n // 2 - 1] + ordered[n // 2]) / 2


@overload
def median(input_vector: vector[float] | Iterable[value[float] | float]) -> value[float] | float: ...
@overload
def median(input_vector: vector[Any] | Iterable[Any]) -> value[Any] | float: ...
def median(input_vector: Any) -> Any:
    """Median as ``numpy.median`` (see the module documentation), branch-free when traced."""
    items = _as_list(input_vector, "median")
    if not _is_traced(items):
        return _plain_median(items)
    n = len(items)
    wires = list(items)
    for i, j in sorting_network(n):
        lo, hi = wires[i], wires[j]
        wires[i], wires[j] = _math.minimum(lo, hi), _math.maximum(lo, hi)
    if n % 2:
        return wires[n // 2]
    a, b = wires[n // 2 - 1], wires[n // 2]
    if all(isinstance(s, int) or (isinstance(s, value) and s.dtype != "float") for s in items):
        return a * 0.5 + b * 0.5
    return (a + b) / 2


def _plain_argsort(items: list[Any]) -> list[int]:
    return sorted(range(len(items)), key=lambda i: (_is_nan(items[i]), 0 if _is_nan(items[i]) else items[i]))


def _goes_after(ka: Any, ia: Any, kb: Any, ib: Any) -> Any:
    """Whether (ka, ia) sorts after (kb, ib): by key with NaN last, then by index."""
    index_after = ib < ia
    key_after = kb < ka
    same_key = kb == ka
    a_nan = ka != ka
    b_not_nan = kb == kb
    return key_after | (same_key & index_after) | (a_nan & (b_not_nan | index_after))


def stable_sort_network(items: list[Any]) -> tuple[list[Any], list[Any]]:
    """The elements sorted ascending (NaNs last, equal elements in input order) and the
    indices they came from, by the sorting network with branch-free swaps (``cp.iif``).
    Nodes of the half the caller does not use are dropped by the optimiser."""
    keys: list[Any] = list(items)
    index: list[Any] = list(range(len(items)))
    for i, j in sorting_network(len(items)):
        swap = _goes_after(keys[i], index[i], keys[j], index[j])
        keys[i], keys[j] = _math.iif(swap, keys[j], keys[i]), _math.iif(swap, keys[i], keys[j])
        index[i], index[j] = _math.iif(swap, index[j], index[i]), _math.iif(swap, index[i], index[j])
    return keys, index


@overload
def argsort(input_vector: array[Any]) -> array[int]: ...
@overload
def argsort(input_vector: vector[Any] | Iterable[Any]) -> vector[int]: ...
def argsort(input_vector: Any) -> Any:
    """Indices that sort the input, as ``numpy.argsort(kind='stable')`` (NaNs last): a
    ``cp.array`` of ints for a 1-D ``cp.array`` (one sorting-network stencil), else a vector."""
    if isinstance(input_vector, _array.array):
        return input_vector.argsort()
    items = _as_list(input_vector, "argsort")
    if not _is_traced(items):
        return vector(_plain_argsort(items))
    return vector(stable_sort_network(items)[1])


def sort(input_vector: Any) -> Any:
    """The elements in ascending order, as ``numpy.sort(kind='stable')`` (NaNs last),
    branch-free when traced. A 1-D ``cp.array`` gives a ``cp.array`` (one sorting-network
    stencil), a vector or 1-D tensor the same kind of container, anything else a vector."""
    if isinstance(input_vector, _array.array):
        return input_vector.sort()
    if getattr(input_vector, "ndim", 1) != 1:
        raise ValueError(f"sort needs a 1-D vector, got shape {input_vector.shape}")
    items = _as_list(input_vector, "sort")
    if _is_traced(items):
        ordered = stable_sort_network(items)[0]
    else:
        ordered = [items[i] for i in _plain_argsort(items)]
    if hasattr(input_vector, "_with_values"):
        return input_vector._with_values(tuple(ordered))
    return vector(ordered)


_CONV_MODES = ("full", "same", "valid")


def _terms_sum(terms: list[Any]) -> Any:
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return total


def convolve(a: Any, v: Any, mode: str = "full") -> Any:
    """Discrete linear convolution of two 1-D inputs, ``numpy.convolve`` (see the module
    documentation for the order of the sums). The result has the kind of ``a`` (a vector
    stays a vector; a sequence or ``cp.array`` gives a ``cp.array``)."""
    if mode not in _CONV_MODES:
        raise ValueError(f"mode must be 'full', 'same' or 'valid', not {mode!r}")
    xa, sa = elements_and_shape(a, "a")
    xv, sv = elements_and_shape(v, "v")
    if len(sa) != 1 or len(sv) != 1:
        raise ValueError(f"convolve needs 1-D inputs, got a of shape {sa} and v of shape {sv}")
    if not xa or not xv:
        raise ValueError("convolve of an empty input: a and v need at least one element")
    if len(xv) > len(xa):  # NumPy swaps so the longer input is the signal
        xa, xv = xv, xa
    n, m = len(xa), len(xv)
    full = [_terms_sum([xa[i] * xv[k - i] for i in range(max(0, k - m + 1), min(n, k + 1))])
            for k in range(n + m - 1)]
    start, length = {"full": (0, n + m - 1), "same": ((m - 1) // 2, n), "valid": (m - 1, n - m + 1)}[mode]
    out = [e if isinstance(e, value) else float(e) for e in full[start:start + length]]
    return rebuild(a, out, (length,))


_GAUSS_MODES = ("reflect", "mirror", "nearest", "wrap", "constant")


def _gaussian_kernel(sigma: float, radius: int) -> list[float]:
    weights = [math.exp(-0.5 * (x * x) / (sigma * sigma)) for x in range(-radius, radius + 1)]
    total = math.fsum(weights)
    return [w / total for w in weights]


def _source_index(i: int, n: int, mode: str) -> int | None:
    """Where position ``i`` (possibly outside ``0..n-1``) reads from, as scipy.ndimage's
    boundary modes extend the input; None for ``'constant'`` outside."""
    if 0 <= i < n:
        return i
    if mode == "constant":
        return None
    if mode == "nearest":
        return 0 if i < 0 else n - 1
    if mode == "wrap":
        return i % n
    if mode == "reflect":
        period = 2 * n
        k = i % period
        return k if k < n else period - 1 - k
    if n == 1:  # mirror of one element
        return 0
    period = 2 * n - 2
    k = i % period
    return k if k < n else period - k


def gaussian_filter(input: Any, sigma: Any, mode: str = "reflect", cval: float = 0.0,
                    truncate: float = 4.0, radius: Any = None) -> Any:
    """Gaussian smoothing of a vector, tensor, ``cp.array`` or nested sequence, as
    ``scipy.ndimage.gaussian_filter`` with ``order=0`` (module documentation). The result
    has the shape of ``input`` and its kind (a sequence gives a ``cp.array``)."""
    if mode not in _GAUSS_MODES:
        raise ValueError(f"mode must be one of {', '.join(map(repr, _GAUSS_MODES))}, not {mode!r}")
    items, shape = elements_and_shape(input, "input")
    if not shape:
        raise ValueError("gaussian_filter needs an input of at least one dimension, got a scalar")
    ndim = len(shape)
    sigmas = list(sigma) if isinstance(sigma, Sequence) else [sigma] * ndim
    radii = list(radius) if isinstance(radius, Sequence) else [radius] * ndim
    if len(sigmas) != ndim or len(radii) != ndim:
        raise ValueError(f"sigma and radius need one entry per axis ({ndim}) or one number, got "
                         f"{len(sigmas)} and {len(radii)}")
    if any(not isinstance(s, int | float) or not math.isfinite(s) or s < 0 for s in sigmas):
        raise ValueError(f"sigma must be finite numbers >= 0, got {sigma!r}")
    data: list[Any] = [e if isinstance(e, value) else float(e) for e in items]
    strides = [math.prod(shape[d + 1:]) for d in range(ndim)]
    for axis in range(ndim):
        sd = float(sigmas[axis])
        if sd <= 1e-15:
            continue
        r = int(truncate * sd + 0.5) if radii[axis] is None else int(radii[axis])
        if r < 0:
            raise ValueError(f"radius must be >= 0, got {radii[axis]!r}")
        weights = _gaussian_kernel(sd, r)
        n, st = shape[axis], strides[axis]
        out: list[Any] = []
        for flat in range(len(data)):
            pos = flat // st % n
            base = flat - pos * st
            terms: list[Any] = []
            for k, w in enumerate(weights):
                src = _source_index(pos + k - r, n, mode)
                terms.append(w * (float(cval) if src is None else data[base + src * st]))
            out.append(_terms_sum(terms))
        data = out
    return rebuild(input, data, shape)
