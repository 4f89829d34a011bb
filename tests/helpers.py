"""What many test modules share: the float32 type, the repository root, compiling and
running outputs, and comparing float32 results bit for bit (every NaN alike, since a NaN's
sign and payload are unspecified: docs/architecture.md, "Determinism across targets").

The test directories (tests/arrays, tests/compat, …) are on ``sys.path`` (conftest.py), so
every module imports these as ``from helpers import ...``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import copapy as cp
import numpy as np

F32 = np.float32
ROOT = Path(__file__).resolve().parent.parent
"""The repository root."""


def run(*outputs: Any) -> cp.Target:
    """A Target (conftest's: the emulated one in a foreign-target pass) that compiled
    ``outputs`` and ran once."""
    tg = cp.Target()
    tg.compile(*outputs)
    tg.run()
    return tg


def bits(x: Any) -> Any:
    """float32 bit patterns, every NaN mapped to one pattern."""
    a = np.asarray(x, dtype=F32)
    return np.where(np.isnan(a), np.uint32(0x7FC00000), a.view(np.uint32))


def assert_bits(got: Any, ref: Any) -> None:
    """``got`` has ``ref``'s shape and bits (NaNs alike)."""
    g, r = np.asarray(got, dtype=F32), np.asarray(ref, dtype=F32)
    assert g.shape == r.shape, (g.shape, r.shape)
    assert np.array_equal(bits(g), bits(r)), f"\n got {g}\n ref {r}"


def pairwise(a: Any, axis: int = -1) -> Any:
    """NumPy reference of the documented summation order (the same for vectors, tensors
    and cp.array; stencils/README.md, "Array stencils"), in ``a``'s dtype: term k into
    partial k % 8 (partials start at -0.0, the identity), then partials l + (l + 4), then
    l + (l + 2), then the last two."""
    x = np.moveaxis(np.asarray(a), axis, -1)
    acc = np.full(x.shape[:-1] + (8,), -0.0, dtype=x.dtype)
    for k in range(x.shape[-1]):
        acc[..., k % 8] = acc[..., k % 8] + x[..., k]
    for half in (4, 2, 1):
        acc = acc[..., :half] + acc[..., half:2 * half]
    return acc[..., 0]


def ordered_sum(terms: np.ndarray[Any, Any]) -> np.float32:
    """The documented sum of a 1-D array of terms, all in float32."""
    return F32(pairwise(np.asarray(terms).astype(F32)))


def floats(n: int, seed: int) -> list[float]:
    """``n`` float32 numbers over many magnitudes, as Python floats."""
    rng = np.random.default_rng(seed)
    xs = (rng.standard_normal(n) * 10.0 ** rng.integers(-3, 4, n)).astype(F32)
    return [float(x) for x in xs]


def make_container(kind: str, data: np.ndarray[Any, Any]) -> Any:
    """A container of ``kind`` holding ``data``: traced inputs as a ``tensor``, a ``packed``
    tensor, an ``array`` or a ``vector`` (a tensor when ``data`` is not 1-D), or a tensor
    of ``plain`` numbers (folded while tracing, never a graph node)."""
    items = data.reshape(-1).tolist()
    if kind == "array":
        return cp.array(data)
    if kind == "plain":
        return cp.tensor(items, shape=data.shape)
    flat = [cp.value(x) for x in items]
    if kind == "vector" and data.ndim == 1:
        return cp.vector(flat)
    return cp.tensor(flat, shape=data.shape, packed=kind == "packed")


def is_traced(x: Any) -> bool:
    """Whether ``x`` (a value or container) holds anything computed at run time."""
    if isinstance(x, cp.value | cp.array):
        return True
    return isinstance(x, cp.tensor) and any(isinstance(v, cp.value) for v in x.values)


def computed(outs: list[Any]) -> list[np.ndarray[Any, Any]]:
    """The outputs computed: traced ones compiled and run, plain numbers as they are."""
    live = [o for o in outs if is_traced(o)]
    tg = cp.Target()
    if live:
        tg.compile(*live)
        tg.run()
    return [np.asarray(tg.read_value(o) if is_traced(o) else o) for o in outs]
