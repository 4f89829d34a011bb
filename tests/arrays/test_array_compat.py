"""Copapy's newest array API, name by name: ``array.element``, ``get_values``,
``flatten_data``, the ``sort``/``argsort`` methods, ``dot`` of same-size arrays, the repr,
the error types, ``cp.sign``/``cp.relu``/``cp.sigmoid`` and ``cp.nn.softmax``/``linear`` on
arrays, and packing controlled by ``pack_threshold`` and ``packed=`` on vectors and tensors.
References: NumPy float32/int32 (sums in the documented order), float64 for exp.
"""

from __future__ import annotations

from typing import Any

import copapy as cp
import numpy as np
import pytest
import refsem as R
from helpers import F32, floats, ordered_sum, run


def test_repr_is_copapys() -> None:
    assert repr(cp.array([[1, 2]])) == "array(shape=(1, 2), dtype=int)"
    assert repr(cp.array([True])) == "array(shape=(1,), dtype=bool)"


@pytest.mark.parametrize("make", [
    lambda: cp.array([1.5], "int"),
    lambda: cp.array([1, 2], "bool"),
    lambda: cp.array(["a"]),
    lambda: cp.array([cp.value(1.0)], "int"),
    lambda: cp.array(np.array([0.5]), "int"),
])
def test_element_type_errors_are_type_and_value_errors(make: Any) -> None:
    # Copapy raises ValueError here, Python/NumPy convention is TypeError: both catch it
    with pytest.raises(ValueError):
        make()
    with pytest.raises(TypeError):
        make()


def test_element_reads_the_flat_row_major_element() -> None:
    data = np.arange(12, dtype=np.int32).reshape(3, 4) * 7 - 30
    a = cp.array(data.tolist())
    picks = [0, 5, 11, -1, -12]
    els = [a.element(k) for k in picks]
    tg = run(*els, a + 1)
    assert [tg.read_value(e) for e in els] == [int(data.reshape(-1)[k]) for k in picks]
    with pytest.raises(IndexError, match="out of range"):
        a.element(12)
    with pytest.raises(TypeError, match="flat index"):
        a.element(1.0)  # type: ignore[arg-type]


def test_get_values_and_flatten_data_follow_numpy_reshape_and_ravel() -> None:
    a = cp.array(np.zeros((2, 3, 2), dtype=np.float32))
    flat = list(range(12))
    assert a.get_values(flat) == np.arange(12).reshape(2, 3, 2).tolist()
    nested = [[[1, 2], [3, 4]], [[5, 6], [7, 8]]]
    assert cp.array.flatten_data(nested) == np.array(nested).ravel().tolist()
    with pytest.raises(ValueError, match="needs 12 elements"):
        a.get_values(flat[:-1])
    with pytest.raises(ValueError, match="ragged"):
        cp.array.flatten_data([[1, 2], [3]])


def test_sort_and_argsort_methods_match_numpy_stable() -> None:
    xs = [3.0, -1.0, 2.0, -1.0, float("nan"), 0.0, -0.0, 7.5]
    a = cp.array(xs)
    s, i = a.sort(), a.argsort()
    tg = run(s, i)
    x32 = np.array(xs, F32)
    got = tg.read_value(s)
    want = np.sort(x32, kind="stable")
    assert all(R.same_float(g, w) for g, w in zip(got, want, strict=True))
    assert tg.read_value(i) == np.argsort(x32, kind="stable").tolist()


def test_dot_of_same_size_arrays_is_numpys_vdot_in_the_documented_order() -> None:
    xs, ys = floats(12, 301), floats(12, 302)
    a, b = cp.array(xs).reshape(3, 4), cp.array(ys).reshape(2, 6)
    d = a.dot(b)
    tg = run(d)
    want = ordered_sum((np.array(xs, F32) * np.array(ys, F32)).astype(F32))
    assert R.same_float(tg.read_value(d), want)
    with pytest.raises(ValueError, match="same length"):
        a.dot(cp.array([1.0]))


def test_sign_relu_sigmoid_on_arrays_match_numpy() -> None:
    xs = [-2.5, -0.0, 0.0, 1e-30, 3.0, float("nan"), float("-inf"), 100.0]
    ints = [-7, 0, 5, -(2**31), 2**31 - 1]
    a, n = cp.array(xs), cp.array(ints)
    outs = [cp.sign(a), cp.sign(n), cp.relu(a), cp.nn.relu(n), cp.sigmoid(a)]
    tg = run(*outs)
    x32 = np.array(xs, F32)
    got = [tg.read_value(o) for o in outs]
    assert got[0] == [int(v) for v in np.nan_to_num(np.sign(x32))]
    assert got[1] == np.sign(np.array(ints, np.int32)).tolist()
    assert all(R.same_float(g, w) for g, w in zip(got[2], np.maximum(x32, F32(0)), strict=True))
    assert got[3] == np.maximum(np.array(ints, np.int32), 0).tolist()
    with np.errstate(all="ignore"):
        e = np.exp(-x32.astype(np.float64)).astype(F32)  # exp is within 0.55 ulp: one rounding
        want = (F32(1) / (F32(1) + e)).astype(F32)
    for g, w in zip(got[4], want, strict=True):
        assert (np.isnan(w) and np.isnan(g)) or R.ulp_distance(g, float(w)) <= 1


@pytest.mark.parametrize("kind", ["array", "vector", "tensor"])
def test_softmax_matches_numpy(kind: str) -> None:
    xs = [1.0, -3.0, 0.5, 20.0, 19.5, -100.0]
    ins = [cp.value(x) for x in xs]
    x: Any = {"array": lambda: cp.array(ins), "vector": lambda: cp.vector(ins),
              "tensor": lambda: cp.tensor(ins)}[kind]()
    out = cp.nn.softmax(x)
    assert type(out) is type(x)
    tg = run(out)
    got = tg.read_value(out)
    got = list(got.values) if hasattr(got, "values") else got
    x64 = np.array(xs, np.float64)
    want = np.exp(x64 - x64.max()) / np.exp(x64 - x64.max()).sum()
    assert got == pytest.approx(want.tolist(), rel=2e-6, abs=1e-30)
    with pytest.raises(ValueError, match="1-D"):
        cp.nn.softmax(cp.array([[1.0, 2.0]]))


@pytest.mark.parametrize("batch", [False, True])
def test_linear_is_weight_at_x_plus_bias_in_the_documented_order(batch: bool) -> None:
    rng = np.random.default_rng(7)
    w32 = rng.standard_normal((3, 5)).astype(F32)
    b32 = rng.standard_normal(3).astype(F32)
    x32 = rng.standard_normal((2, 5) if batch else 5).astype(F32)
    xin = [cp.value(float(v)) for v in x32.reshape(-1)]
    xa = cp.array(xin).reshape(*x32.shape)
    xt: Any = cp.tensor(xin, x32.shape) if batch else cp.vector(xin)
    outs = [cp.nn.linear(xa, w32.tolist(), b32.tolist()), cp.nn.linear(xt, w32.tolist(), b32.tolist())]
    assert isinstance(outs[0], cp.array) and type(outs[1]) is type(xt)
    tg = run(*outs)
    rows = x32.reshape(-1, 5)
    want = np.array([[F32(ordered_sum((w32[o] * r).astype(F32)) + b32[o]) for o in range(3)] for r in rows])
    want = want if batch else want[0]
    got_a = np.array(tg.read_value(outs[0]), F32)
    t = tg.read_value(outs[1])
    got_t = np.array(t.tolist() if hasattr(t, "tolist") else list(t), F32)
    assert got_a.view(np.uint32).tolist() == want.view(np.uint32).tolist()
    assert got_t.view(np.uint32).tolist() == want.view(np.uint32).tolist()
    with pytest.raises(ValueError, match="does not fit"):
        cp.nn.linear(xa, [[1.0, 2.0]])


# --- pack_threshold and packed= ----------------------------------------------------------------


def _code_bytes(make: Any, n: int) -> int:
    vals = [cp.value(float(k)) for k in range(n)]
    c = make(vals)
    return int(run((c * 2.0 + 1.0).sum()).stats()[1])


@pytest.mark.parametrize("cls", [cp.vector, cp.tensor])
def test_pack_threshold_class_attribute_and_packed_keyword(cls: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # packed code does not grow with the length, element-wise code does
    assert _code_bytes(lambda v: cls(v, packed=True), 10) == _code_bytes(lambda v: cls(v, packed=True), 20)
    assert _code_bytes(lambda v: cls(v), 10) < _code_bytes(lambda v: cls(v), 20)
    assert _code_bytes(lambda v: cls(v), 100) == _code_bytes(lambda v: cls(v), 200)
    assert _code_bytes(lambda v: cls(v, packed=False), 100) < _code_bytes(lambda v: cls(v, packed=False), 200)
    monkeypatch.setattr(cls, "pack_threshold", 8)
    assert _code_bytes(lambda v: cls(v), 10) == _code_bytes(lambda v: cls(v), 20)
    monkeypatch.setattr(cls, "pack_threshold", None)
    assert _code_bytes(lambda v: cls(v), 100) < _code_bytes(lambda v: cls(v), 200)
    assert _code_bytes(lambda v: cls(v, packed=True), 100) == _code_bytes(lambda v: cls(v, packed=True), 200)


def test_packed_small_containers_give_numpys_bits() -> None:
    xs, ys = floats(9, 311), floats(9, 312)
    a = cp.vector([cp.value(x) for x in xs], packed=True)
    b = cp.tensor([cp.value(y) for y in ys], (3, 3), packed=True)
    outs = [a * 1.5 - a, a @ a, b + 1.0, b @ b, b.sum()]
    tg = run(*outs)
    x32, y32 = np.array(xs, F32), np.array(ys, F32).reshape(3, 3)
    got = [tg.read_value(o) for o in outs]
    want0 = (x32 * F32(1.5) - x32).astype(F32)
    assert [R.f32_bits(v) for v in got[0].values] == [R.f32_bits(v) for v in want0]
    assert R.same_float(got[1], ordered_sum((x32 * x32).astype(F32)))
    assert [R.f32_bits(v) for v in got[2].values] == [R.f32_bits(v) for v in (y32 + F32(1)).reshape(-1)]
    mm = [[ordered_sum((y32[i] * y32[:, j]).astype(F32)) for j in range(3)] for i in range(3)]
    assert [R.f32_bits(v) for v in got[3].values] == [R.f32_bits(v) for v in np.array(mm, F32).reshape(-1)]
    assert R.same_float(got[4], ordered_sum(y32.reshape(-1)))


def test_linear_converts_int_inputs_weights_and_bias_to_float() -> None:
    w, b, x = [[1, -2, 3], [4, 5, -6]], [7, -8], [2, 16777217, -1]
    out = cp.nn.linear(cp.array(x), cp.array(w), cp.array(b))
    assert out.dtype == "float"
    tg = run(out)
    x32, w32, b32 = np.array(x, F32), np.array(w, F32), np.array(b, F32)
    want = [F32(ordered_sum((w32[o] * x32).astype(F32)) + b32[o]) for o in range(2)]
    assert [R.f32_bits(g) for g in tg.read_value(out)] == [R.f32_bits(v) for v in want]
