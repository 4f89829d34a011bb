"""Streaming digital filters with SciPy's names and semantics: design with ``scipy.signal``,
deploy with copapy.

``sosfilt(sos, x, zi=zi)`` and ``lfilter(b, a, x, zi=zi)`` return ``(y, zf)`` as SciPy
does when ``zi`` is given (only ``y`` without it, starting from rest). ``x`` is one sample
(a number or ``cp.value``) or a block (a vector, ``cp.array``, tensor, list or NumPy array
of them, processed in order); ``y`` has the length of ``x`` and its kind (a list or NumPy
array gives a ``cp.array``, or a list of floats when everything is a plain number). One compiled run
processes one sample or one block; the state ``zf`` is carried to the next run with
``updates={z: z_next}`` (``zi`` made of named ``cp.value`` s, see ``state``) or returned to
the caller.

Coefficients are NumPy arrays / sequences of numbers (constants folded into the program:
a 0 drops its term, as everywhere in copapy) or of ``cp.value`` s (tunable at run time: named
inputs of the program file). SciPy's rules for them: ``sos`` is ``(n_sections, 6)`` with
``sos[:, 3] == 1``; ``lfilter`` divides ``b`` and ``a`` by ``a[0]`` (at trace time for
numbers, rounded once to float32) and refuses ``a[0] == 0``. Unstable or non-finite
coefficients are accepted, as SciPy accepts them.

Order of the float32 operations (what the NumPy references in the tests repeat to get the
same bits), both transposed direct form II as SciPy's own loops:

* ``sosfilt``, per sample and section: ``y = b0*x + z0``; ``z0 = (b1*x - a1*y) + z1``;
  ``z1 = b2*x - a2*y``; the sections in order, each one's ``y`` the next one's ``x``.
* ``lfilter``, per sample, ``K = max(len(a), len(b)) - 1``: ``y = b0*x + z0``;
  ``z[k] = (z[k+1] + b[k+1]*x) - a[k+1]*y`` for ``k < K-1``; ``z[K-1] = b[K]*x - a[K]*y``
  (the shorter of ``a``, ``b`` padded with zeros).

SciPy computes in float64; the float32 results differ from it by rounding, which grows with
the filter's sensitivity (the tests state the tolerance per case). For orders above 2 use
``sos``: high-order ``b, a`` forms lose precision in float32.

``sosfilt_zi`` / ``lfilter_zi`` give the state of a filter at rest for a constant input 1
(SciPy's steady-state start: pass ``zi * x[0]``), computed in Python floats from number
coefficients. An FIR filter is ``lfilter(b, [1.0], x, zi=zi)`` (streaming) or
``cp.filters.convolve(x, b)`` (a whole block).
"""

from __future__ import annotations

from typing import Any

from ._array import array
from ._core import value
from ._interp import elements_and_shape, rebuild
from ._tensors import tensor

__all__ = ["lfilter", "lfilter_zi", "sosfilt", "sosfilt_zi", "state"]


def _numbers_or_values(x: Any, name: str) -> tuple[list[Any], tuple[int, ...]]:
    items, shape = elements_and_shape(x, name)
    for e in items:
        if isinstance(e, bool) or not isinstance(e, value | int | float):
            raise TypeError(f"{name} must hold numbers or cp.value, got {type(e).__name__}")
    return [e if isinstance(e, value) else float(e) for e in items], shape


def _sos_rows(sos: Any) -> list[list[Any]]:
    items, shape = _numbers_or_values(sos, "sos")
    if len(shape) != 2 or shape[1] != 6 or shape[0] < 1:
        raise ValueError(f"sos must have shape (n_sections, 6), got shape {shape}")
    rows = [items[6 * s:6 * s + 6] for s in range(shape[0])]
    for s, row in enumerate(rows):
        if not isinstance(row[3], value) and row[3] != 1.0:
            raise ValueError(f"sos[:, 3] should be all ones (normalised sections), "
                             f"got sos[{s}, 3] = {row[3]!r}")
    return rows


def _samples(x: Any) -> tuple[list[Any], bool]:
    """The samples of ``x`` and whether ``x`` is one sample."""
    if isinstance(x, value | int | float) and not isinstance(x, bool):
        return [x], True
    items, shape = _numbers_or_values(x, "x")
    if len(shape) != 1:
        raise ValueError(f"x must be one sample or a 1-D block of samples, got shape {shape}")
    return items, False


def _output(x: Any, ys: list[Any], single: bool) -> Any:
    if single:
        return ys[0]
    if not any(isinstance(e, value) for e in ys) and not hasattr(x, "__copapy__"):
        return [float(e) for e in ys]  # plain numbers in, plain numbers out (computed now)
    return rebuild(x, ys, (len(ys),))


def _state_like(zi: Any, items: list[Any], shape: tuple[int, ...]) -> Any:
    """``zf`` in the kind ``zi`` was given in: a tensor / ``cp.array`` as such, anything
    else (lists, NumPy arrays) as nested lists of values."""
    if isinstance(zi, tensor | array):
        return rebuild(zi, items, shape)
    if len(shape) == 1:
        return list(items)
    return [list(items[shape[1] * r:shape[1] * (r + 1)]) for r in range(shape[0])]


def sosfilt(sos: Any, x: Any, axis: int = -1, zi: Any = None) -> Any:
    """Filter ``x`` with second-order sections ``sos``, as ``scipy.signal.sosfilt``.

    ``zi``: the state, shape ``(n_sections, 2)`` (None: at rest, and only ``y`` is
    returned). Returns ``y`` or ``(y, zf)``; see the module documentation."""
    if axis not in (-1, 0):
        raise ValueError(f"axis must be -1 or 0 (x is one sample or a 1-D block), got {axis}")
    rows = _sos_rows(sos)
    samples, single = _samples(x)
    n = len(rows)
    if zi is None:
        z: list[list[Any]] = [[0.0, 0.0] for _ in range(n)]
    else:
        zs, zshape = _numbers_or_values(zi, "zi")
        if zshape != (n, 2):
            raise ValueError(f"zi must have shape (n_sections, 2) = ({n}, 2), got shape {zshape}")
        z = [[zs[2 * s], zs[2 * s + 1]] for s in range(n)]
    ys: list[Any] = []
    for sample in samples:
        v: Any = sample
        for s, (b0, b1, b2, _, a1, a2) in enumerate(rows):
            z0, z1 = z[s]
            y = b0 * v + z0
            z[s] = [(b1 * v - a1 * y) + z1, b2 * v - a2 * y]
            v = y
        ys.append(v)
    out = _output(x, ys, single)
    if zi is None:
        return out
    return out, _state_like(zi, [e for row in z for e in row], (n, 2))


def _ba(b: Any, a: Any) -> tuple[list[Any], list[Any]]:
    bs, bshape = _numbers_or_values(b, "b")
    as_, ashape = _numbers_or_values(a, "a")
    if len(bshape) != 1 or not bs:
        raise ValueError(f"b must be a non-empty 1-D sequence of coefficients, got shape {bshape}")
    if len(ashape) != 1 or not as_:
        raise ValueError(f"a must be a non-empty 1-D sequence of coefficients, got shape {ashape}")
    a0 = as_[0]
    if not isinstance(a0, value):
        if a0 == 0.0:
            raise ValueError("a[0] must not be zero (SciPy's lfilter refuses it too)")
        if a0 != 1.0:  # normalised at trace time, each coefficient rounded once
            bs = [e / a0 if not isinstance(e, value) else e * (1.0 / a0) for e in bs]
            as_ = [e / a0 if not isinstance(e, value) else e * (1.0 / a0) for e in as_]
    else:
        bs = [e / a0 for e in bs]
        as_ = [1.0] + [e / a0 for e in as_[1:]]
    k = max(len(bs), len(as_))
    return bs + [0.0] * (k - len(bs)), as_ + [0.0] * (k - len(as_))


def _term(coef: Any, x: Any) -> Any:
    """``coef * x``; a plain 0 drops the term (None), as the optimiser would."""
    if not isinstance(coef, value) and coef == 0.0:
        return None
    return coef * x


def lfilter(b: Any, a: Any, x: Any, axis: int = -1, zi: Any = None) -> Any:
    """Filter ``x`` with the rational transfer function ``b / a``, as
    ``scipy.signal.lfilter`` (transposed direct form II).

    ``zi``: the state, length ``max(len(a), len(b)) - 1`` (None: at rest, and only ``y`` is
    returned). Returns ``y`` or ``(y, zf)``; see the module documentation."""
    if axis not in (-1, 0):
        raise ValueError(f"axis must be -1 or 0 (x is one sample or a 1-D block), got {axis}")
    bs, as_ = _ba(b, a)
    samples, single = _samples(x)
    k = len(bs) - 1
    if zi is None:
        z: list[Any] = [0.0] * k
    else:
        z, zshape = _numbers_or_values(zi, "zi")
        if zshape != (k,):
            raise ValueError(f"zi must have shape (max(len(a), len(b)) - 1,) = ({k},), got shape {zshape}")
    ys: list[Any] = []
    for v in samples:
        y = bs[0] * v + z[0] if k else bs[0] * v
        new: list[Any] = []
        for i in range(k):
            acc = z[i + 1] if i + 1 < k else None
            bt = _term(bs[i + 1], v)
            if bt is not None:
                acc = bt if acc is None else acc + bt
            at = _term(as_[i + 1], y)
            if at is not None:
                acc = -at if acc is None else acc - at
            new.append(0.0 if acc is None else acc)
        z = new
        ys.append(y)
    out = _output(x, ys, single)
    if zi is None:
        return out
    return out, _state_like(zi, z, (k,))


def _plain(x: Any, name: str) -> list[float]:
    items, shape = _numbers_or_values(x, name)
    if any(isinstance(e, value) for e in items):
        raise TypeError(f"{name} must be numbers here: the steady state is computed while tracing")
    return [float(e) for e in items]


def lfilter_zi(b: Any, a: Any) -> list[float]:
    """The state of ``lfilter(b, a, ...)`` at rest for a constant input 1 (SciPy's
    ``lfilter_zi``): with ``y = sum(b) / sum(a)``, ``z[K-1] = b[K] - a[K]*y`` and
    ``z[k] = z[k+1] + b[k+1] - a[k+1]*y`` (Python floats; number coefficients only)."""
    bs, as_ = _plain(b, "b"), _plain(a, "a")
    if len(bs) < 1 or len(as_) < 1:
        raise ValueError("b and a must be non-empty 1-D sequences")
    nb, na = _ba(bs, as_)
    if sum(na) == 0.0:
        raise ValueError("sum(a) is 0: the filter has a pole at z = 1 and no steady state")
    y = sum(nb) / sum(na)
    k = len(nb) - 1
    z = [0.0] * k
    for i in reversed(range(k)):
        z[i] = (z[i + 1] if i + 1 < k else 0.0) + nb[i + 1] - na[i + 1] * y
    return z


def sosfilt_zi(sos: Any) -> list[list[float]]:
    """The state of ``sosfilt(sos, ...)`` at rest for a constant input 1 (SciPy's
    ``sosfilt_zi``), shape ``(n_sections, 2)`` as nested lists of floats."""
    rows = _sos_rows(sos)
    out: list[list[float]] = []
    scale = 1.0
    for row in rows:
        if any(isinstance(e, value) for e in row):
            raise TypeError("sos must be numbers here: the steady state is computed while tracing")
        b, a = row[:3], row[3:]
        out.append([scale * z for z in lfilter_zi(b, a)])
        if sum(a) == 0.0:
            raise ValueError("a section has sum(a) == 0: a pole at z = 1 and no steady state")
        scale *= sum(b) / sum(a)
    return out


def state(shape: int | tuple[int, ...], name: str, init: Any = None) -> Any:
    """Named float ``cp.value`` s for a filter state (``zi``), ready for ``updates=``:
    ``state((n_sections, 2), "z")`` gives nested lists named ``z[0][0]``, ``z[0][1]``, ...,
    with initial values ``init`` (same shape; zeros when None)."""
    dims = (shape,) if isinstance(shape, int) else tuple(shape)
    if len(dims) not in (1, 2) or any(d < 0 for d in dims):
        raise ValueError(f"shape must be (n,) or (rows, cols), got {shape!r}")
    if init is not None:
        items, ishape = _numbers_or_values(init, "init")
        if ishape != dims:
            raise ValueError(f"init must have shape {dims}, got shape {ishape}")
    else:
        items = [0.0] * (dims[0] * (dims[1] if len(dims) == 2 else 1))
    if len(dims) == 1:
        return [value(float(items[i]), name=f"{name}[{i}]") for i in range(dims[0])]
    return [[value(float(items[r * dims[1] + c]), name=f"{name}[{r}][{c}]") for c in range(dims[1])]
            for r in range(dims[0])]
