"""Compatibility: truth values and comparisons of containers follow NumPy.

A container of plain numbers with one element has that element's truth value; with more
(or none) it is NumPy's "ambiguous" ValueError pointing to ``.all()``/``.any()``; any
container holding a traced value is the TypeError that points to ``cp.iif``, as for a
scalar (so ``if v1 > v2:`` on traced vectors cannot silently take a branch). A ``cp.array``
holds values on the target (an array of numbers is an input), so its truth value is that
TypeError at every size, as Copapy's array raised a TypeError. ``==`` with a number, tuple
or list is elementwise as in NumPy. Every expectation is NumPy's own answer.
"""

from __future__ import annotations

from typing import Any

import copapy as cp
import numpy as np
import pytest
from helpers import F32
from hypothesis import given, settings
from hypothesis import strategies as st

CASES: list[Any] = [
    [3.0], [0.0], [0], [1], [True], [False], [float("nan")], [-0.0],
    [[2.0]], [[0]], [[[5]]],
    [1.0, 2.0], [0, 0], [[1, 2], [3, 4]], [[1.0], [0.0]],
    [], [[]],
]


def numpy_truth(data: Any) -> tuple[str, bool | None]:
    try:
        return "ok", bool(np.array(data))
    except ValueError:
        return "ValueError", None


def as_container(data: Any) -> Any:
    arr = np.array(data)
    if arr.ndim == 1:
        return cp.vector(list(data))
    return cp.tensor(data)


@pytest.mark.parametrize("data", CASES, ids=repr)
def test_truth_value_of_plain_containers_is_numpys(data: Any) -> None:
    kind, want = numpy_truth(data)
    c = as_container(data)
    if kind == "ok":
        assert bool(c) is want
    else:
        with pytest.raises(ValueError, match="ambiguous"):
            bool(c)


@pytest.mark.parametrize("data", [[1.0, 2.0], [[1, 2], [3, 4]], [1, 0, 1]], ids=repr)
def test_ambiguous_message_points_to_all_and_any(data: Any) -> None:
    with pytest.raises(ValueError, match=r"\.any\(\) or \.all\(\)"):
        bool(as_container(data))


def test_0d_tensor_element_compares_and_asserts() -> None:
    m = cp.tensor([[3.0, 1.0], [2.0, 4.0]])
    assert m[0][0] == 3.0  # a 0-d tensor: NumPy's m[0][0] == 3.0 is True
    assert not (m[0][1] == 3.0)
    assert bool(m[1][1] > 3.5) is bool(np.array([[3.0, 1.0], [2.0, 4.0]])[1][1] > 3.5)
    with pytest.raises(TypeError):
        len(m[0][0])


_SPECIAL = [0.0, -0.0, 1.0, -2.5, float("nan"), float("inf"), 1e-45]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(shape=st.lists(st.integers(0, 2), max_size=3).map(tuple), dtype=st.sampled_from([F32, np.int32]),
       data=st.data())
def test_truth_value_of_plain_containers_of_any_shape_is_numpys(shape: tuple[int, ...], dtype: Any,
                                                                data: Any) -> None:
    size = int(np.prod(shape))
    pool = _SPECIAL if dtype is F32 else [0, 1, -7, 2**31 - 1]
    ref = np.array(data.draw(st.lists(st.sampled_from(pool), min_size=size, max_size=size)),
                   dtype=dtype).reshape(shape)
    kinds = [cp.tensor(ref.tolist() if ref.ndim else ref.item(), shape=shape)]
    if ref.ndim == 1:
        kinds.append(cp.vector(ref.tolist()))
    if shape == (4,) and dtype is F32:
        kinds.append(cp.quaternion(ref.tolist()))
    for c in kinds:
        kind, want = numpy_truth(ref)
        if kind == "ok":
            assert bool(c) is want, (type(c), ref)
        else:
            with pytest.raises(ValueError, match="ambiguous; use (len|.any)"):
                bool(c)


@pytest.mark.parametrize("data", [[3.0], [0.0], [[1]], [True], [1.0, 2.0], [[0, 0], [0, 0]]], ids=repr)
def test_an_array_has_no_truth_value_while_tracing(data: Any) -> None:
    # NumPy answers for one element; a cp.array's elements are values on the target (an
    # array of numbers is an input that Target.write_value changes), as a cp.value(3.0) is
    a = cp.array(data)
    for c in (a, a > 0.5, a.astype("bool"), cp.array([cp.value(1.0)] * a.size).reshape(a.shape)):
        with pytest.raises(TypeError, match=r"truth value of an array is not known while tracing.*cp\.iif"):
            bool(c)


@pytest.mark.parametrize("n", [1, 64, 65])
def test_jit_arguments_have_no_truth_value_whichever_storage_they_get(n: int) -> None:
    # @cp.jit hands up to 64 elements over as a vector, more as an array: the same error
    @cp.jit
    def branchy(x: Any) -> Any:
        return x.sum() if x else -x.sum()

    with pytest.raises(TypeError, match=r"not known while tracing.*cp\.iif"):
        branchy(np.ones(n, dtype=F32))


@pytest.mark.parametrize("make", [
    lambda a: cp.vector([a, 2.0]) > 1.0,
    lambda a: cp.vector([a]) > 1.0,
    lambda a: cp.tensor([[a, 1.0]]),
    lambda a: cp.tensor([[a]])[0][0],
    lambda a: cp.vector([1.0, 2.0]) > cp.vector([a, a]),
    lambda a: cp.quaternion(a, 0.0, 0.0, 0.0),
    lambda a: cp.tensor([a] * 3, packed=True) > 1.0,
], ids=["vector", "one-element vector", "matrix", "0-d tensor", "vector comparison", "quaternion", "packed"])
def test_containers_of_traced_values_have_no_truth_value(make: Any) -> None:
    c = make(cp.value(1.5))
    with pytest.raises(TypeError, match="cp.iif"):
        bool(c)
    with pytest.raises(TypeError, match="cp.iif"):
        if c:
            pass


@pytest.mark.parametrize("data", [[1, 0, 3], [0.0, 0.0], [2.0, -1.0], [[1, 1], [1, 0]], [[0]], [],
                                  [float("nan"), 0.0], [True, False]], ids=repr)
def test_all_and_any_of_plain_containers(data: Any) -> None:
    c = as_container(data) if np.array(data).ndim != 1 or data else cp.vector([])
    arr = np.array(data)
    assert c.all() is bool(arr.all())
    assert c.any() is bool(arr.any())


def run(outputs: list[Any], inputs: dict[Any, float]) -> list[Any]:
    tg = cp.Target()
    tg.compile(outputs)
    for v, x in inputs.items():
        tg.write_value(v, x)
    tg.run()
    return [tg.read_value(o) for o in outputs]


@pytest.mark.parametrize("xs", [[0.5, 2.0, 3.0], [-1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [5.0, 6.0, -7.0]],
                         ids=repr)
def test_all_and_any_of_traced_containers(xs: list[float]) -> None:
    vals = [cp.value(0.0) for _ in xs]
    v = cp.vector(vals)
    outs = [(v > 0).all(), (v > 0).any(), v.all(), v.any(),
            cp.vector([vals[0], 1.0]).all(), cp.vector([vals[0], 0.0]).any()]
    got = run(outs, dict(zip(vals, xs, strict=True)))
    a = np.array(xs, dtype=np.float32)
    want = [(a > 0).all(), (a > 0).any(), a.all(), a.any(),
            np.array([a[0], 1.0]).all(), np.array([a[0], 0.0]).any()]
    assert [bool(g) for g in got] == [bool(w) for w in want]
    # a constant element settles the answer while tracing, as NumPy would
    assert cp.vector([vals[0], 0.0]).all() is False
    assert cp.vector([vals[0], 2.0]).any() is True


OTHERS: list[Any] = [2.0, 2, (1.0, 2.0, 3.0), [1, 2, 4], [3.0, 2.0, 1.0], np.float32(2.0)]


@pytest.mark.parametrize("other", OTHERS, ids=repr)
def test_vector_equality_with_numbers_tuples_lists_is_numpys(other: Any) -> None:
    data = [1.0, 2.0, 3.0]
    v = cp.vector(data)
    arr = np.array(data)
    for got, want in [(v == other, arr == other), (v != other, arr != other),
                      (other == v, other == arr), (other != v, other != arr)]:
        assert list(got) == list(want)


@pytest.mark.parametrize("other", [2.0, [1.0, 5.0], ([1.0, 2.0], [3.0, 0.0]), [[1.0], [3.0]]], ids=repr)
def test_matrix_equality_broadcasts_as_numpy(other: Any) -> None:
    data = [[1.0, 2.0], [3.0, 4.0]]
    m = cp.tensor(data)
    arr = np.array(data)
    assert (m == other).tolist() == (arr == other).tolist()
    assert (m != other).tolist() == (arr != other).tolist()


def test_traced_equality_with_a_list_compiles_to_numpys_answer() -> None:
    vals = [cp.value(0.0) for _ in range(3)]
    v = cp.vector(vals)
    eq = v == [1.0, 2.5, 3.0]
    got = run([eq, eq.all()], dict(zip(vals, [1.0, 2.0, 3.0], strict=True)))
    want = np.array([1.0, 2.0, 3.0]) == [1.0, 2.5, 3.0]
    assert [bool(x) for x in got[0]] == want.tolist()
    assert bool(got[1]) is bool(want.all())


def test_shape_mismatch_in_equality_is_an_error_as_in_numpy() -> None:
    with pytest.raises(ValueError, match="shapes"):
        _ = cp.vector([1.0, 2.0, 3.0]) == [1.0, 2.0]
