"""The one method set of every container (``_ndmethods.NdMethods`` over the Rust n-d core,
``ndcore/storage.rs``, ``reduce.rs``, ``sort.rs``, ``cast.rs``): the same results, bit for
bit, whichever storage a container got — traced leaves (``tensor``, ``vector``), leaves
packed into an array (``packed``), one array node (``cp.array``) or plain numbers
(``plain``: folded while tracing, never a graph node) — against NumPy float32/int32.

Unlike test_container_agreement.py (small integers, exact in any order), the data here are
float32 numbers over many magnitudes, so a sum is only right in the documented order
(``helpers.pairwise``); NaNs, signed zeros and ties test ``min``/``max`` and the stable sort.
"""

from __future__ import annotations

import math
import operator
import os
import warnings
from typing import Any

import copapy as cp
import numpy as np
import pytest
from helpers import F32, assert_bits, pairwise
from helpers import computed as _results
from helpers import make_container as _make
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

_EMULATED = bool(os.environ.get("COPAPY_TEST_TARGET"))
_SETTINGS = settings(max_examples=5 if _EMULATED else 25, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow])

TRACED = ("tensor", "packed", "array", "vector")
KINDS = (*TRACED, "plain")


def _floats(shape: tuple[int, ...], seed: int, nan: bool = False) -> np.ndarray[Any, Any]:
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape)).astype(F32)
    if nan and x.size > 1:
        x.reshape(-1)[rng.integers(x.size)] = np.nan
    return x


shapes = st.lists(st.integers(1, 5), min_size=1, max_size=3).map(tuple)


@st.composite
def shape_and_axes(draw: Any) -> tuple[tuple[int, ...], Any]:
    shape = draw(shapes)
    nd = len(shape)
    axis = draw(st.one_of(st.none(), st.integers(-nd, nd - 1),
                          st.lists(st.integers(0, nd - 1), unique=True, min_size=1, max_size=nd).map(tuple)))
    return shape, axis


def _fit(kind: str, case: tuple[tuple[int, ...], Any]) -> tuple[tuple[int, ...], Any]:
    """A shape and axis a ``kind`` container takes (a vector: 1-D)."""
    shape, axis = case
    return (shape[:1], None if axis is None else 0) if kind == "vector" else (shape, axis)


def _ordered(data: np.ndarray[Any, Any], axis: Any, keepdims: bool) -> np.ndarray[Any, Any]:
    """NumPy reference of the documented order over ``axis``: the reduced axes moved last
    (in increasing order), flattened row-major, summed by ``helpers.pairwise``."""
    nd = data.ndim
    axes = tuple(range(nd)) if axis is None else tuple(sorted(a % nd for a in np.atleast_1d(axis)))
    kept = [d for d in range(nd) if d not in axes]
    moved = np.transpose(data, kept + list(axes)).reshape([data.shape[d] for d in kept] + [-1])
    out = np.asarray(pairwise(moved, axis=-1), dtype=F32)
    return out.reshape([1 if d in axes else data.shape[d] for d in range(nd)]) if keepdims else out


@pytest.mark.parametrize("kind", TRACED)
@_SETTINGS
@given(case=shape_and_axes(), keepdims=st.booleans(), seed=st.integers(0, 2**16))
def test_sums_and_means_have_the_documented_bits_in_every_storage(kind: str, case: Any, keepdims: bool,
                                                                  seed: int) -> None:
    shape, axis = _fit(kind, case)
    data = _floats(shape, seed)
    x = _make(kind, data)
    got_sum, got_mean = _results([x.sum(axis=axis, keepdims=keepdims), x.mean(axis=axis, keepdims=keepdims)])
    ref = _ordered(data, axis, keepdims)
    n = data.size if axis is None else math.prod(data.shape[a] for a in np.atleast_1d(axis))
    assert_bits(got_sum, ref)
    assert_bits(got_mean, ref / F32(n))


@pytest.mark.parametrize("kind", KINDS)
@_SETTINGS
@given(case=shape_and_axes(), keepdims=st.booleans(), seed=st.integers(0, 2**16))
def test_min_and_max_follow_numpy_with_nans_in_every_storage(kind: str, case: Any, keepdims: bool,
                                                             seed: int) -> None:
    shape, axis = _fit(kind, case)
    data = _floats(shape, seed, nan=seed % 2 == 0)
    data.reshape(-1)[0] = -0.0 if seed % 3 else 0.0
    x = _make(kind, data)
    got_min, got_max = _results([x.min(axis=axis, keepdims=keepdims), x.max(axis=axis, keepdims=keepdims)])
    np.testing.assert_array_equal(got_min.astype(F32), data.min(axis=axis, keepdims=keepdims))
    np.testing.assert_array_equal(got_max.astype(F32), data.max(axis=axis, keepdims=keepdims))


@pytest.mark.parametrize("kind", KINDS)
@_SETTINGS
@given(n=st.integers(1, 12), seed=st.integers(0, 2**16))
def test_sort_is_numpys_stable_sort_with_nans_last_in_every_storage(kind: str, n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    data = rng.choice(np.array([-2.0, -0.0, 0.0, 1.5, 3.0, np.nan, np.inf], dtype=F32), n)
    x = _make(kind, data)
    got_sorted, got_order = _results([x.sort(), x.argsort()])
    assert_bits(got_sorted, np.sort(data, kind="stable"))
    np.testing.assert_array_equal(got_order, np.argsort(data, kind="stable"))
    assert type(x.sort()) is type(x)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", ["float", "int", "bool", "byte"])
@_SETTINGS
@given(shape=shapes, seed=st.integers(0, 2**16))
def test_astype_follows_the_cast_rules_in_every_storage(kind: str, dtype: str, shape: tuple[int, ...],
                                                        seed: int) -> None:
    if kind == "vector":
        shape = shape[:1]
    rng = np.random.default_rng(seed)
    data = (rng.standard_normal(shape) * 200).astype(F32)  # within int32, past the bytes
    data.reshape(-1)[0] = -0.0
    got = _results([_make(kind, data).astype(dtype)])[0]
    ref = {"float": data, "int": data.astype(np.int32), "bool": data != 0,
           "byte": np.clip(np.trunc(data), 0, 255).astype(np.int32)}[dtype]
    np.testing.assert_array_equal(got.astype(ref.dtype), ref)


def test_plain_numbers_stay_plain_numbers() -> None:
    """Sparse-constant folding: a container of numbers reduces, sorts and converts while
    tracing, with Python's (exact) arithmetic on the numbers, and makes no graph node."""
    t = cp.tensor([[3, 1, 2], [0, 5, 4]])
    assert t.sum() == 15 and type(t.sum()) is int
    assert t.sum(axis=0).values == (3, 6, 6)
    assert t.max(axis=1).values == (3, 5) and t.min() == 0
    assert t.mean() == 2.5
    assert t.reshape(-1).sort().values == (0, 1, 2, 3, 4, 5)
    assert t.reshape(-1).argsort().values == (3, 1, 2, 0, 5, 4)
    assert t.astype("float").values == (3.0, 1.0, 2.0, 0.0, 5.0, 4.0)
    assert all(type(v) is float for v in t.astype("float").values)
    assert t[:, :2].trace() == 8
    assert t.T.tolist() == [[3, 0], [1, 5], [2, 4]]


def test_empty_reductions_follow_numpy() -> None:
    # NumPy: min/max need a term in every result element (an empty result needs none); the
    # sum of no terms is 0 and their mean NaN with a RuntimeWarning
    data = np.zeros((0, 3), dtype=F32)
    t = cp.tensor(data)
    assert t.max(axis=1).shape == data.max(axis=1).shape == (0,)
    with pytest.raises(ValueError):
        data.max(axis=0)
    with pytest.raises(ValueError, match="zero-size"):
        t.max(axis=0)
    with pytest.raises(ValueError, match="zero-size"):
        t.min()
    assert t.sum() == 0 and t.sum(axis=0).values == (0, 0, 0)
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
        assert math.isnan(t.mean())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert all(math.isnan(v) for v in t.mean(axis=0).values)
        assert np.isnan(data.mean(axis=0)).all()


@pytest.mark.parametrize("kind", TRACED)
def test_shared_errors_name_the_container(kind: str) -> None:
    data = np.arange(6, dtype=F32).reshape(2, 3) if kind != "vector" else np.arange(6, dtype=F32)
    x = _make(kind, data)
    name = "array" if kind == "array" else "tensor"
    with pytest.raises(ValueError, match="unknown dtype 'double'"):
        x.astype("double")
    with pytest.raises(ValueError, match="item\\(\\) needs"):
        x.item()
    with pytest.raises(IndexError, match="index 6 is out of range for 6 elements"):
        x.element(6)
    with pytest.raises(TypeError, match="element\\(\\) takes an int"):
        x.element(1.0)
    if kind != "vector":
        with pytest.raises(ValueError, match=f"sort and argsort take a 1-D {name}"):
            x.sort()
        with pytest.raises(ValueError, match="trace needs a square matrix"):
            x.trace()


_OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "truediv": np.divide, "lt": np.less,
        "ge": np.greater_equal, "eq": np.equal}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", sorted(_OPS))
@_SETTINGS
@given(shape=shapes, seed=st.integers(0, 2**16), form=st.sampled_from(["number", "list", "container"]),
       reflected=st.booleans())
def test_operators_broadcast_as_numpy_in_every_storage(kind: str, name: str, shape: tuple[int, ...],
                                                       seed: int, form: str, reflected: bool) -> None:
    # one n-d core (ndcore/binary.rs): the other operand is a number, a nested list or a
    # container (of the same storage, or of plain numbers), broadcast as NumPy does
    if kind == "vector":
        shape = shape[:1]
    rng = np.random.default_rng(seed)
    a = _floats(shape, seed)
    b = _floats(tuple(d if rng.integers(2) else 1 for d in shape[rng.integers(len(shape)):]), seed + 1)
    other = {"number": float(b.reshape(-1)[0]), "list": b.tolist(),
             "container": _make("array" if kind == "array" else "plain", b)}[form]
    ref_b = np.asarray(b.reshape(-1)[0] if form == "number" else b, dtype=F32)
    op, ref_op = getattr(operator, name), _OPS[name]
    if reflected and form != "container":  # the other operand on the left: x's reflected method
        got, ref = op(other, _make(kind, a)), ref_op(ref_b, a)
    else:
        got, ref = op(_make(kind, a), other), ref_op(a, ref_b)
    assert_bits(_results([got])[0].astype(F32), np.asarray(ref).astype(F32))
