"""Products, ``all``/``any``, ``to_numpy`` and array data of every container kind and both
storage modes, written once in the n-d core (``ndcore/product.rs``, ``readout.rs``,
``data.rs``): traced leaves (``tensor``, ``vector``), leaves packed into an array
(``packed``), one array node (``array``) and plain numbers, in every pairing, against NumPy
float32/int32 through compiled programs. Float products are exact to the bit because every
kind sums in the documented order (``helpers.pairwise``)."""

from __future__ import annotations

import os
from typing import Any

import copapy as cp
import numpy as np
import pytest
from helpers import F32, assert_bits, computed, make_container, pairwise
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

_EMULATED = bool(os.environ.get("COPAPY_TEST_TARGET"))
_SETTINGS = settings(max_examples=4 if _EMULATED else 15, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow])

TRACED = ("tensor", "packed", "array", "vector")
FORMS = {"mm": (2, 2), "mv": (2, 1), "vm": (1, 2), "vv": (1, 1)}


def _floats(shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray[Any, Any]:
    return (rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4, shape)).astype(F32)


def _operands(form: str, m: int, k: int, p: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    na, nb = FORMS[form]
    return ((m, k) if na == 2 else (k,)), ((k, p) if nb == 2 else (k,))


def _ref_matmul(x: np.ndarray[Any, Any], y: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """NumPy's matmul of float32 operands with each sum in the documented order."""
    x2 = x if x.ndim == 2 else x[None, :]
    y2 = y if y.ndim == 2 else y[:, None]
    out = np.asarray(pairwise(x2[:, :, None] * y2[None, :, :], axis=1), dtype=F32)
    return out.reshape(np.matmul(np.ones(x.shape), np.ones(y.shape)).shape)


@_SETTINGS
@given(form=st.sampled_from(sorted(FORMS)), m=st.integers(1, 5), k=st.integers(1, 12), p=st.integers(1, 5),
       kinds=st.tuples(st.sampled_from(TRACED), st.sampled_from(TRACED)), seed=st.integers(0, 2**16))
def test_matmul_and_dot_of_every_pair_of_kinds_match_numpy_bits(
        form: str, m: int, k: int, p: int, kinds: tuple[str, str], seed: int) -> None:
    rng = np.random.default_rng(seed)
    sa, sb = _operands(form, m, k, p)
    x, y = _floats(sa, rng), _floats(sb, rng)
    a, b = make_container(kinds[0], x), make_container(kinds[1], y)
    outs = [a @ b, a.matmul(b), a.dot(b), cp.dot(a, b), a @ y.tolist(), x.tolist() @ b]
    want = _ref_matmul(x, y)
    for got in computed(outs):
        assert_bits(got, want)
    if form != "vv":  # two arrays give an array, anything else a tensor
        both = kinds == ("array", "array")
        assert isinstance(outs[0], cp.array) if both else type(outs[0]) is cp.tensor


@_SETTINGS
@given(form=st.sampled_from(sorted(FORMS)), m=st.integers(1, 4), k=st.integers(1, 9), p=st.integers(1, 4),
       kinds=st.tuples(st.sampled_from((*TRACED, "plain")), st.sampled_from((*TRACED, "plain"))),
       seed=st.integers(0, 2**16))
def test_int_products_of_every_kind_match_numpy_int32(
        form: str, m: int, k: int, p: int, kinds: tuple[str, str], seed: int) -> None:
    # small ints: exact in any order, and plain Python ints (no wrapping) agree with int32
    rng = np.random.default_rng(seed)
    sa, sb = _operands(form, m, k, p)
    x = rng.integers(-1000, 1000, sa, dtype=np.int32)
    y = rng.integers(-1000, 1000, sb, dtype=np.int32)
    a, b = make_container(kinds[0], x), make_container(kinds[1], y)
    got, = computed([a @ b])
    np.testing.assert_array_equal(np.asarray(got, dtype=np.int32), np.matmul(x, y))


@pytest.mark.parametrize("kind", TRACED)
def test_dot_of_one_size_in_other_shapes_is_row_major_and_a_scalar_scales(kind: str) -> None:
    rng = np.random.default_rng(3)
    x, y = _floats((3, 4), rng), _floats((2, 6), rng)
    a, b = make_container(kind, x), make_container(kind, y)
    s = make_container(kind, x[0])
    got = computed([a.dot(b), s.dot(2.5), cp.dot(2.5, s)])
    assert_bits(got[0], pairwise((x.reshape(-1) * y.reshape(-1)).astype(F32)))
    assert_bits(got[1], x[0] * F32(2.5))
    assert_bits(got[2], x[0] * F32(2.5))
    with pytest.raises(ValueError, match=r"dot product of .* of shapes \(3, 4\) and \(3,\): .*same length"):
        a.dot(make_container(kind, x[0, :3]))
    with pytest.raises(ValueError, match="3 columns against 2 rows"):
        make_container(kind, x[:, :3]) @ make_container(kind, y[:, :2])
    with pytest.raises(ValueError, match="scalar"):
        a @ 2.0


def _with_zeros(data: np.ndarray[Any, Any], rng: np.random.Generator, dtype: str) -> np.ndarray[Any, Any]:
    out = data.copy()
    out.reshape(-1)[rng.random(out.size) < 0.3] = 0
    if dtype == "float" and out.size > 1:
        out.reshape(-1)[rng.integers(out.size)] = rng.choice([np.nan, -0.0])
    return out


@_SETTINGS
@given(kind=st.sampled_from((*TRACED, "plain")), dtype=st.sampled_from(["float", "int", "bool"]),
       shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple), seed=st.integers(0, 2**16))
def test_all_and_any_of_every_kind_match_numpy(
        kind: str, dtype: str, shape: tuple[int, ...], seed: int) -> None:
    rng = np.random.default_rng(seed)
    if kind == "vector":
        shape = shape[:1]
    data = {"float": _floats(shape, rng), "int": rng.integers(-5, 5, shape, dtype=np.int32),
            "bool": rng.random(shape) < 0.8}[dtype]
    data = _with_zeros(data, rng, dtype)
    if rng.random() < 0.3:
        data = np.ones_like(data)  # every element non-zero: all() is true
    x = make_container(kind, data)
    got_all, got_any = computed([x.all(), x.any()])
    assert bool(got_all) == bool(np.all(data)) and bool(got_any) == bool(np.any(data))


@_SETTINGS
@given(kind=st.sampled_from(TRACED), dtype=st.sampled_from(["float", "int", "bool"]),
       shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple), seed=st.integers(0, 2**16))
def test_to_numpy_of_every_kind_gives_numpys_dtype_and_values(
        kind: str, dtype: str, shape: tuple[int, ...], seed: int) -> None:
    rng = np.random.default_rng(seed)
    if kind == "vector":
        shape = shape[:1]
    data = {"float": _floats(shape, rng), "int": rng.integers(-2**31, 2**31, shape, dtype=np.int32),
            "bool": rng.random(shape) < 0.5}[dtype]
    x = make_container(kind, data)
    tg = cp.Target()
    tg.compile(x)
    tg.run()
    got = x.to_numpy(tg)
    assert got.dtype == data.dtype and got.shape == data.shape
    assert np.array_equal(got.view(np.uint8), data.view(np.uint8))
    plain = make_container("plain", data)
    assert np.array_equal(plain.to_numpy(), data) and plain.to_numpy().shape == data.shape


NUMPY_DTYPES = ["bool", "int8", "uint8", "int16", "uint16", "int32", "int64", "uint64", "float16",
                "float32", "float64"]


def _expected(data: np.ndarray[Any, Any], dtype: str, listed: bool) -> np.ndarray[Any, Any] | type[Exception]:
    """What an array of ``dtype`` holds for NumPy ``data`` (``listed``: as nested lists), or
    the error it refuses it with (lists of ints into a bool array too: compare them)."""
    if dtype == "float":
        return data.astype(F32)
    if data.dtype.kind == "f" or (listed and dtype == "bool" and data.dtype.kind in "iu"):
        return TypeError
    lo, hi = {"bool": (0, 1), "byte": (0, 255), "int": (-(2**31), 2**31 - 1)}[dtype]
    values = data.astype(object)
    if any(not lo <= int(v) <= hi for v in values.reshape(-1)):
        return ValueError
    return {"bool": data.astype(bool), "byte": data.astype(np.uint8), "int": data.astype(np.int32)}[dtype]


@_SETTINGS
@given(source=st.sampled_from(NUMPY_DTYPES), dtype=st.sampled_from(["float", "int", "bool", "byte"]),
       shape=st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple), seed=st.integers(0, 2**16),
       span=st.sampled_from([1, 300, 2**40]))
def test_array_data_from_numpy_and_lists_and_write_value_match_numpy_casts(
        source: str, dtype: str, shape: tuple[int, ...], seed: int, span: int) -> None:
    rng = np.random.default_rng(seed)
    dt = np.dtype(source)
    if dt.kind == "f":
        with np.errstate(over="ignore"):  # float16 of 2**40: inf, which a float array holds
            data = (rng.standard_normal(shape) * span).astype(dt)
    elif dt.kind == "b":
        data = rng.random(shape) < 0.5
    else:
        info = np.iinfo(dt)
        data = rng.integers(max(info.min, -span), min(info.max, span), shape, dtype=dt, endpoint=True)
    for source_data in (data, data.tolist()):
        want = _expected(data, dtype, isinstance(source_data, list))
        if isinstance(want, type):
            with pytest.raises(want):
                cp.array(source_data, dtype=dtype)
            continue
        a = cp.array(source_data, dtype=dtype)
        tg = cp.Target()
        tg.compile(a)
        got = a.to_numpy(tg)
        assert got.dtype == want.dtype and np.array_equal(got.view(np.uint8), want.view(np.uint8))
        tg.write_value(a, source_data[::-1] if isinstance(source_data, list) else data[::-1])
        again = a.to_numpy(tg)
        assert np.array_equal(again.view(np.uint8), np.ascontiguousarray(want[::-1]).view(np.uint8))
