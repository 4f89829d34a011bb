"""Compatibility with Copapy's newest API (the names that need no arrays): ``cp.min`` /
``cp.max`` reducing one container, ``cp.tanh``, the ``cp.nn`` module, top-level
``cp.sort`` / ``cp.argsort`` / ``cp.dot`` / ``cp.cross``, ``.dtype`` on containers and
float promotion in ``cp.iif``. References: NumPy (float32 / int32), float64 for tanh,
finite differences for its gradient.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import copapy as cp
import numpy as np
import pytest
from helpers import pairwise

f32 = np.float32


def compiled(outputs: Any, inputs: list[Any], data: list[Any]) -> Any:
    tg = cp.Target()
    tg.compile(outputs)
    tg.write_value(inputs, data)
    tg.run()
    return tg.read_value(outputs)


# --- cp.min / cp.max ---------------------------------------------------------------------------

WINDOWS = [[3.0, -1.0, 2.0], [0.5], [2.0, 2.0, -7.5, 9.0, 1e30], [float("nan"), 1.0, -2.0],
           [1.0, float("inf"), -float("inf"), 0.0], [-0.0, 1.0, 4.0, 8.0, -3.0, 2.0, 7.0]]


@pytest.mark.parametrize("w", WINDOWS, ids=repr)
def test_min_max_of_one_container_reduce_as_numpy(w: list[float]) -> None:
    xs = [cp.value(0.0) for _ in w]
    v = cp.vector(xs)
    got = compiled([cp.min(v), cp.max(v), cp.min(cp.tensor([xs])), cp.max(xs)], xs, w)
    a = np.array(w, dtype=f32)
    want = [np.min(a), np.max(a)] * 2
    for g, t in zip(got, want, strict=True):
        assert (math.isnan(g) and math.isnan(t)) or g == t
    # plain numbers reduce in Python, with the same answers
    plain = [cp.min(cp.vector(w)), cp.max(cp.vector(w)), cp.min(w), cp.max(tuple(w))]
    for g, t in zip(plain, want, strict=True):
        assert (math.isnan(g) and math.isnan(t)) or g == t


def test_min_max_of_ints_stay_ints() -> None:
    xs = [cp.value(0) for _ in range(5)]
    data = [4, -9, 2**31 - 1, 0, -(2**31)]
    got = compiled([cp.min(cp.vector(xs)), cp.max(cp.vector(xs))], xs, data)
    assert got == [int(np.min(np.array(data, np.int32))), int(np.max(np.array(data, np.int32)))]
    assert cp.min(cp.vector(xs)).dtype == "int"


def test_two_arguments_stay_elementwise() -> None:
    a, b = cp.value(0.0), cp.value(0.0)
    got = compiled([cp.min(a, b), cp.max(a, b), cp.min(cp.vector([a, b]), 0.5)], [a, b], [2.0, -1.0])
    assert got[:2] == [-1.0, 2.0]
    assert list(got[2]) == [0.5, -1.0]
    assert cp.min(3, 5) == 3 and cp.max(3.0, 5) == 5


def test_min_of_nothing_and_of_one_number_are_errors() -> None:
    with pytest.raises(ValueError, match="empty"):
        cp.min(cp.vector([]))
    with pytest.raises(TypeError, match="two arguments"):
        cp.max(3.0)


# --- cp.tanh -------------------------------------------------------------------------------------


def tanh_inputs() -> np.ndarray:
    rng = np.random.default_rng(7)
    special = [0.0, -0.0, 1e-45, -1e-40, 2.0**-12, 2.0**-13, 0.17373880743980408, 0.5493, 0.55,
               1.0, -1.0, 4.0, 9.0, 9.01, 9.5, -9.49, 20.0, 88.0, 1e30, np.inf, -np.inf, np.nan]
    rand = [rng.normal(0, 3, 300), rng.uniform(-1e-3, 1e-3, 50)]
    return np.concatenate([np.array(special), *rand]).astype(f32)


def test_tanh_compiled_within_one_ulp_of_the_exact_value() -> None:
    xs = tanh_inputs()
    ins = [cp.value(0.0) for _ in xs]
    got = np.array(compiled([cp.tanh(x) for x in ins], ins, [float(x) for x in xs]), dtype=np.float64)
    ref = np.tanh(xs.astype(np.float64))
    nan = np.isnan(ref)
    assert np.array_equal(np.isnan(got), nan)
    ulp = np.spacing(np.abs(ref[~nan]).astype(f32)).astype(np.float64)
    ulp = np.where(ulp == 0, 2.0**-149, ulp)
    err = np.abs(got[~nan] - ref[~nan]) / ulp
    assert err.max() <= 1.0, (err.max(), xs[~nan][err.argmax()])
    # odd, and signed zeros kept
    assert np.array_equal(np.signbit(got[~nan]), np.signbit(ref[~nan]))


def test_tanh_gradient_matches_finite_differences() -> None:
    x = cp.value(0.0)
    d = cp.grad(cp.tanh(x * 1.5), x)
    for v in [-3.0, -0.7, 0.0, 0.3, 1.2, 5.0]:
        got = compiled(d, [x], [v])
        h = 1e-6
        fd = (math.tanh(1.5 * (v + h)) - math.tanh(1.5 * (v - h))) / (2 * h)
        assert got == pytest.approx(fd, rel=1e-4, abs=1e-6)


def test_tanh_of_plain_numbers_and_containers() -> None:
    assert cp.tanh(0.5) == math.tanh(0.5)
    assert cp.tanh(cp.vector([0.0, 1.0])).values == (0.0, math.tanh(1.0))
    assert cp.tanh(3).__class__ is float


# --- cp.nn ---------------------------------------------------------------------------------------


def test_nn_module_holds_relu_sigmoid_tanh_and_top_level_names_stay() -> None:
    xs = [cp.value(0.0) for _ in range(4)]
    v = cp.vector(xs)
    data = [-2.0, -0.0, 0.5, 30.0]
    got = compiled([cp.nn.relu(v), cp.nn.sigmoid(v), cp.nn.tanh(v), cp.relu(v), cp.sigmoid(v), cp.tanh(v)],
                   xs, data)
    a = np.array(data, dtype=f32)
    assert list(got[0]) == np.maximum(a, f32(0)).tolist() == list(got[3])
    assert list(got[1]) == list(got[4])
    exp = np.exp(-a.astype(np.float64)).astype(f32)  # correctly rounded, as our exp here
    assert list(got[1]) == pytest.approx((f32(1) / (f32(1) + exp)).tolist(), rel=1.2e-7)
    assert list(got[2]) == list(got[5])
    assert list(got[2]) == pytest.approx(np.tanh(a.astype(np.float64)).tolist(), rel=1.2e-7)
    assert set(cp.nn.__all__) == {"linear", "relu", "sigmoid", "softmax", "tanh", "conv1d", "conv2d",
                                  "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d",
                                  "global_avg_pool2d"}


# --- cp.sort / cp.argsort --------------------------------------------------------------------------

SORT_CASES = [[3.0, 1.0, 2.0], [1.0, 1.0, 0.0, 1.0], [2.0, float("nan"), -1.0, float("nan"), 0.5],
              [0.0, -0.0, 0.0, -5.0], [7.0], [5.0, 4.0, 3.0, 2.0, 1.0, 0.0, -1.0, 9.0, 9.0]]


@pytest.mark.parametrize("w", SORT_CASES, ids=repr)
def test_sort_and_argsort_are_numpys_stable_sort(w: list[float]) -> None:
    xs = [cp.value(0.0) for _ in w]
    v = cp.vector(xs)
    got_sort, got_arg = compiled([cp.sort(v), cp.argsort(v)], xs, w)
    a = np.array(w, dtype=f32)
    want_sort = np.sort(a, kind="stable")
    want_arg = np.argsort(a, kind="stable")
    assert list(got_arg) == want_arg.tolist()
    got_bits = np.array(list(got_sort), dtype=f32).view(np.uint32)
    assert got_bits.tolist() == a[want_arg].view(np.uint32).tolist()  # signed zeros in input order
    assert np.array_equal(np.array(list(got_sort), dtype=f32), want_sort, equal_nan=True)
    # plain numbers: the same order, computed in Python
    assert list(cp.argsort(cp.vector(w))) == want_arg.tolist()
    assert np.array_equal(np.array(list(cp.sort(w)), dtype=f32), want_sort, equal_nan=True)


def test_sort_keeps_the_container_kind_and_int_type() -> None:
    xs = [cp.value(0) for _ in range(6)]
    data = [5, -3, 5, 0, 2**31 - 1, -(2**31)]
    t = cp.tensor(xs)
    out = cp.sort(t)
    assert isinstance(out, cp.tensor) and isinstance(cp.sort(cp.vector(xs)), cp.vector)
    got = compiled(out, xs, data)
    assert got.tolist() == np.sort(np.array(data, np.int32)).tolist()
    assert out.dtype == "int"
    assert list(compiled(cp.argsort(t), xs, data)) == np.argsort(np.array(data), kind="stable").tolist()
    with pytest.raises(ValueError, match="1-D"):
        cp.sort(cp.tensor([[1, 2], [3, 4]]))


def test_every_permutation_of_five_sorts() -> None:
    xs = [cp.value(0.0) for _ in range(5)]
    tg = cp.Target()
    out = cp.sort(cp.vector(xs))
    tg.compile(out)
    for perm in itertools.permutations([1.0, 2.0, 2.0, 3.0, 4.0]):
        tg.write_value(xs, list(perm))
        tg.run()
        assert list(tg.read_value(out)) == [1.0, 2.0, 2.0, 3.0, 4.0]


# --- cp.dot / cp.cross -----------------------------------------------------------------------------


def test_dot_and_cross_as_numpy() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=3).astype(f32), rng.normal(size=3).astype(f32)
    m = rng.normal(size=(3, 3)).astype(f32)
    xa = [cp.value(0.0) for _ in range(3)]
    xb = [cp.value(0.0) for _ in range(3)]
    va, vb = cp.vector(xa), cp.vector(xb)
    outs = [cp.dot(va, vb), cp.cross(va, vb), cp.dot(cp.tensor(m.tolist()), va), cp.dot(va, b.tolist()),
            cp.cross(xa, b.tolist())]
    got = compiled(outs, xa + xb, a.tolist() + b.tolist())
    # our documented summation order (test_vectors.pairwise: term k into partial k % 8,
    # partials combined pairwise), for three terms (a0 b0 + a2 b2) + a1 b1
    prods = a * b
    assert got[0] == float(pairwise(prods))
    assert got[0] == float((prods[0] + prods[2]) + prods[1])
    assert list(got[1]) == np.cross(a, b).tolist()
    mv = m * a
    assert list(got[2]) == pairwise(mv, 1).tolist()
    assert got[3] == got[0]
    assert list(got[4]) == list(got[1])
    assert cp.dot(2.0, 3) == 6.0
    assert cp.dot([1, 2], [3, 4]) == 11
    with pytest.raises(ValueError, match="shapes"):
        cp.cross(cp.vector([1.0, 2.0]), cp.vector([1.0, 2.0]))


# --- .dtype ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("elements", "want"), [
    ([1, 2], "int"), ([1, 2.0], "float"), ([True, False], "bool"), ([True, 2], "int"), ([], "float"),
])
def test_dtype_of_plain_containers_is_numpys_promotion(elements: list[Any], want: str) -> None:
    assert cp.vector(elements).dtype == want
    assert cp.tensor([elements]).dtype == want
    numpy_kind = {"b": "bool", "i": "int", "f": "float"}[np.array(elements if elements else [0.0]).dtype.kind]
    assert numpy_kind == want


def test_dtype_follows_traced_values() -> None:
    i, f, b = cp.value(1), cp.value(1.0), cp.value(True)
    assert cp.vector([i, 2]).dtype == "int"
    assert cp.vector([i, f]).dtype == "float"
    assert cp.vector([b, True]).dtype == "bool"
    assert (cp.vector([i, 2]) > 1).dtype == "bool"
    assert cp.tensor([[i], [f]]).dtype == "float"
    assert cp.quaternion(1.0, 0.0, 0.0, 0.0).dtype == "float"


# --- cp.iif promotion ------------------------------------------------------------------------------


def test_iif_promotes_to_float_when_either_result_is_float() -> None:
    for cond in (True, 1, 2.5, False, 0, 0.0):
        want = np.where(bool(cond), 1, 2.0)  # NumPy promotes the result to float64
        got = cp.iif(cond, 1, 2.0)
        assert type(got) is float and got == float(want)
        got2 = cp.iif(cond, 2.0, 1)
        assert type(got2) is float and got2 == float(np.where(bool(cond), 2.0, 1))
    assert type(cp.iif(True, 1, 2)) is int
    n = cp.value(3)
    chosen = cp.iif(True, n, 2.0)
    assert isinstance(chosen, cp.value) and chosen.dtype == "float"
    assert cp.iif(False, n, 2.0) == 2.0
    assert cp.iif(True, n, 2) is n
    c = cp.value(1) > 0
    assert cp.iif(c, n, 2.0).dtype == "float" and cp.iif(c, n, 2).dtype == "int"
    got = compiled([chosen, cp.iif(c, n, 2.5)], [n], [7])
    assert got == [7.0, 7.0] and all(type(g) is float for g in got)
