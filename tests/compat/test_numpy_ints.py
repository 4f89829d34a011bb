"""NumPy integer scalars act as Python ints everywhere (README "Semantics").

Every NumPy integer and unsigned integer scalar type is used where copapy takes an int: as
an index of ``cp.array``, ``cp.vector`` and ``cp.tensor`` (alone, in tuples, beside
slices, ``element``), as an axis, in shapes and sizes, in layer parameters, as data in
``write_value`` and in the plain-number paths of ``relu``, ``iif``, ``filters`` and
``cp.grad``. Results are compared with NumPy on the same data (integer-valued float32 data,
so sums are exact whatever the order), and the one test of "is an integer" is
``copapy._core.nd_plain_int`` (the Rust n-d core).
"""

from __future__ import annotations

from typing import Any

import copapy as cp
import numpy as np
import pytest
from copapy import filters
from helpers import F32
from hypothesis import given, settings
from hypothesis import strategies as st

# every NumPy integer scalar type (intp is one of the sized ones; longlong may be its own type)
INT_TYPES: list[type[np.integer[Any]]] = list(dict.fromkeys([
    np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.intp, np.uintp,
    np.longlong, np.ulonglong]))
int_types = st.sampled_from(INT_TYPES)


def as_type(t: type[np.integer[Any]], i: int) -> Any:
    """`i` as NumPy integer type `t`; a negative `i` as its unsigned wrap-around can't be
    meant, so unsigned types only get non-negative indices (the strategies ensure it)."""
    assert np.iinfo(t).min <= i <= np.iinfo(t).max
    return t(i)


@st.composite
def grids(draw: st.DrawFn) -> np.ndarray[Any, Any]:
    rows, cols = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    cells = draw(st.lists(st.integers(-50, 50), min_size=rows * cols, max_size=rows * cols))
    return np.array(cells, dtype=F32).reshape(rows, cols)


def index_in(draw: st.DrawFn, t: type[np.integer[Any]], n: int) -> int:
    low = 0 if np.iinfo(t).min == 0 else -n
    return draw(st.integers(low, n - 1))


def run(*outputs: Any) -> list[Any]:
    tg = cp.Target()
    tg.compile(*outputs)
    tg.run()
    return [tg.read_value(o) for o in outputs]


@settings(max_examples=60)
@given(grids(), int_types, st.data())
def test_numpy_integer_indices_select_what_numpy_selects(
        grid: np.ndarray[Any, Any], t: type[np.integer[Any]], data: st.DataObject) -> None:
    rows, cols = grid.shape
    i = index_in(data.draw, t, rows)
    j = index_in(data.draw, t, cols)
    k = index_in(data.draw, t, grid.size)
    ti, tj, tk = as_type(t, i), as_type(t, j), as_type(t, k)
    arr = cp.array(grid)
    vec = cp.vector([cp.value(float(x)) for x in grid[i]])
    ten = cp.tensor([[cp.value(float(x)) for x in row] for row in grid])
    got = run(arr[ti, tj], arr[(ti,)], arr[ti, :], arr[:, tj], arr.element(tk), vec[tj], ten[ti], ten[ti, tj],
              ten[:, tj])
    want = [grid[i, j], grid[i], grid[i, :], grid[:, j], grid.flat[k], grid[i, j], grid[i], grid[i, j],
            grid[:, j]]
    for g, w in zip(got, want, strict=True):
        assert np.array_equal(np.asarray(g, dtype=F32).reshape(np.shape(w)), w), (g, w)


@settings(max_examples=40)
@given(grids(), int_types, st.integers(0, 1), st.booleans())
def test_numpy_integer_axes_reduce_what_numpy_reduces(grid: np.ndarray[Any, Any], t: type[np.integer[Any]],
                                                       axis: int, negative: bool) -> None:
    if negative and np.iinfo(t).min < 0:
        axis -= 2
    ax = as_type(t, axis)
    arr = cp.array(grid)
    ten = cp.tensor([[cp.value(float(x)) for x in row] for row in grid])
    got = run(arr.sum(axis=ax), arr.max(axis=ax), arr.mean(axis=(ax,)), ten.sum(axis=ax))
    want = [grid.sum(axis=axis), grid.max(axis=axis), grid.mean(axis=axis, dtype=F32), grid.sum(axis=axis)]
    for g, w in zip(got, want, strict=True):
        assert np.array_equal(np.asarray(g, dtype=F32), w), (g, w)


@settings(max_examples=40)
@given(int_types, st.integers(1, 5), st.integers(1, 5))
def test_numpy_integer_shapes_and_counts_are_ints(t: type[np.integer[Any]], r: int, c: int) -> None:
    tr, tc = as_type(t, r), as_type(t, c)
    assert cp.zeros((tr, tc)).shape == np.zeros((r, c)).shape
    assert cp.ones(tr).shape == (r,)
    assert cp.eye(tr).shape == (r, r)
    grid = np.arange(r * c, dtype=F32)
    assert cp.array(grid).reshape(tr, tc).shape == (r, c)
    assert cp.tensor([float(x) for x in grid]).reshape((tr, tc)).shape == (r, c)
    assert cp.array(grid.reshape(r, c)).transpose(as_type(t, 1), as_type(t, 0)).shape == (c, r)
    assert [float(x) for x in cp.arange(tr).values] == list(np.arange(r, dtype=np.float64))
    assert all(type(x) is int for x in cp.arange(tr).values)  # Python ints, as with arange(r)


@settings(max_examples=60)
@given(int_types, st.data())
def test_numpy_integers_written_to_inputs_are_the_ints_they_hold(t: type[np.integer[Any]],
                                                                  data: st.DataObject) -> None:
    info = np.iinfo(t)
    ints = st.integers(max(int(info.min), -(2**31)), min(int(info.max), 2**31 - 1))
    n, m = data.draw(ints), data.draw(ints)
    x, y = cp.value(0), cp.value(0.0)
    v = cp.array([0, 0])
    tg = cp.Target()
    tg.compile(x + 1, y * 1.0, v + 0)
    tg.write_value(x, t(n))
    tg.write_value(y, t(m))
    tg.write_value(v, [t(n), t(m)])
    tg.run()
    assert tg.read_value(x) == n and type(tg.read_value(x)) is int
    assert tg.read_value(y) == float(F32(m))  # an int written to a float input: rounded to float32
    assert tg.read_value(v) == [n, m]


def test_numpy_integers_beyond_int32_are_refused_as_python_ints_are() -> None:
    x = cp.value(0)
    tg = cp.Target()
    tg.compile(x + 1)
    for big in (np.int64(2**31), np.uint64(2**63), np.uint32(2**32 - 1)):
        with pytest.raises(OverflowError):
            tg.write_value(x, int(big))
        with pytest.raises(OverflowError):
            tg.write_value(x, big)


@pytest.mark.parametrize("t", INT_TYPES)
def test_plain_number_paths_take_numpy_integers(t: type[np.integer[Any]]) -> None:
    assert cp.relu(t(3)) == 3 and type(cp.relu(t(3))) is int
    assert cp.nn.sigmoid(t(0)) == 0.5
    assert cp.iif(True, t(1), 2.0) == 1.0 and type(cp.iif(True, t(1), 2.0)) is float
    assert cp.iif(t(0), t(1), t(2)) == 2 and type(cp.iif(t(0), t(1), t(2))) is int
    assert filters.median([t(1), t(4), t(2), t(9)]) == float(np.median([1, 4, 2, 9]))
    assert list(filters.argsort([t(3), t(1), t(2)])) == list(np.argsort([3, 1, 2], kind="stable"))
    x = cp.value(2.0)
    assert cp.grad(x * x, [x, t(1)])[1] == 0.0
    signal = cp.array([[1.0, 2.0, 3.0, 4.0, 5.0]])
    kernel = cp.array([[[1.0, -1.0]]])
    by_numpy, by_int = cp.nn.conv1d(signal, kernel, stride=t(2)), cp.nn.conv1d(signal, kernel, stride=2)
    assert run(by_numpy) == run(by_int) == [[[-1.0, -1.0]]]  # (1 - 2, 3 - 4) at stride 2


def test_numpy_bools_are_not_integers_for_indices_as_in_numpy() -> None:
    arr = cp.array([1.0, 2.0, 3.0])
    for flag in (True, np.True_):
        with pytest.raises(TypeError):
            arr.element(flag)  # type: ignore[arg-type]
        with pytest.raises(TypeError):
            arr.sum(axis=flag)
