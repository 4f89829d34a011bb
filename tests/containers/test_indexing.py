"""Indexing of every container kind agrees with NumPy: one implementation in the Rust n-d
core (``ndcore/index.rs``) serves a ``cp.tensor`` of traced values, a packed one, one of
plain numbers, ``cp.array``, ``cp.vector`` and ``cp.quaternion``, in both storage modes (a
tuple of leaves, one array node).

Random shapes up to 3-D and random index expressions (ints, negative too; slices with any
step; ``...``; ``None``; runtime ``cp.value`` indices) are compiled and run, and the results
compared with NumPy float32/int32 on the same data. A runtime index wraps once if negative
and is then clamped to its axis (the documented rule), so the reference indexes NumPy with
the clamped position; after the first run new indices are written and the same program
runs again. Bad indices raise NumPy's exception classes with messages saying what was wrong.
"""

from __future__ import annotations

import os
from typing import Any

import copapy as cp
import numpy as np
import pytest
from helpers import F32, run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

_EMULATED = bool(os.environ.get("COPAPY_TEST_TARGET"))
_SETTINGS = settings(max_examples=5 if _EMULATED else 25, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow])

KINDS = ("tensor", "packed", "constant", "array", "vector", "quaternion")
ONE_D = ("vector", "quaternion")
GIVES_ELEMENTS = ("array", "vector", "quaternion")


def _clamp(k: int, n: int) -> int:
    """The documented rule for runtime indices: wrap once if negative, then clamp."""
    k = k + n if k < 0 else k
    return min(max(k, 0), n - 1)


def _make(kind: str, data: np.ndarray[Any, Any]) -> Any:
    """A container of ``kind`` holding ``data`` (traced inputs but for ``constant``)."""
    if kind == "array":
        return cp.array(data)
    items = data.reshape(-1).tolist()
    if kind == "constant":
        return cp.tensor(items, shape=data.shape)
    traced = [cp.value(x) for x in items]
    if kind == "vector":
        return cp.vector(traced)
    if kind == "quaternion":
        return cp.quaternion(traced)
    return cp.tensor(traced, shape=data.shape, packed=kind == "packed")


@st.composite
def position(draw: Any, n: int) -> Any:
    """One position of an axis of length ``n``: a runtime index ``("value", k)`` (any k:
    it is clamped), a slice (any step) or an int in range."""
    choice = draw(st.sampled_from(["value", "slice", "int"]))
    if choice == "value":
        return ("value", draw(st.integers(-2 * n - 1, 2 * n + 1)))
    if choice == "int":
        return draw(st.integers(-n, n - 1))
    bound = st.none() | st.integers(-n - 2, n + 2)
    return slice(draw(bound), draw(bound), draw(st.none() | st.sampled_from([-3, -2, -1, 1, 2, 3])))


@st.composite
def cases(draw: Any, kind: str) -> tuple[np.ndarray[Any, Any], list[Any], list[int]]:
    """Data of a shape for ``kind`` (float32 or int32), an index expression (positions,
    ``None``s and at most one ``...``; in every other case at least one runtime position)
    and the length of the axis of each runtime position."""
    if kind == "quaternion":
        shape: tuple[int, ...] = (4,)
    elif kind == "vector":
        shape = (draw(st.integers(1, 5)),)
    else:
        shape = tuple(draw(st.lists(st.integers(1, 4), min_size=1, max_size=3)))
    dtype = F32 if kind == "quaternion" or draw(st.booleans()) else np.int32
    data = np.random.default_rng(draw(st.integers(0, 2**16))).integers(-50, 50, shape).astype(dtype)
    used = draw(st.integers(1, len(shape)))
    ellipsis = draw(st.integers(0, 3)) == 0
    split = draw(st.integers(0, used)) if ellipsis else used
    # the positions before ``...`` index the first axes, those after it the last ones
    axes = list(range(split)) + list(range(len(shape) - (used - split), len(shape)))
    runtime_at = draw(st.none() | st.sampled_from(axes))
    key: list[Any] = []
    dims: list[int] = []
    for at, axis in enumerate(axes):
        if ellipsis and at == split:
            key.append(Ellipsis)
        if draw(st.integers(0, 5)) == 0:
            key.append(None)
        n = shape[axis]
        key.append(("value", draw(st.integers(-2 * n - 1, 2 * n + 1))) if axis == runtime_at
                   else draw(position(n)))
        if isinstance(key[-1], tuple):
            dims.append(n)
    if ellipsis and split == used:
        key.append(Ellipsis)
    return data, key, dims


def _reference_key(key: list[Any], positions: list[int]) -> tuple[Any, ...]:
    """The NumPy key: each runtime position replaced by the clamped int it selects."""
    got = iter(positions)
    return tuple(next(got) if isinstance(k, tuple) else k for k in key)


def _read(tg: cp.Target, out: Any, dtype: Any) -> np.ndarray[Any, Any]:
    return np.asarray(tg.read_value(out), dtype=dtype)


@pytest.mark.parametrize("kind", KINDS)
@_SETTINGS
@given(data=st.data())
def test_indexing_agrees_with_numpy(kind: str, data: Any) -> None:
    ref_data, key, dims = data.draw(cases(kind))
    x = _make(kind, ref_data)
    values = [cp.value(k[1]) for k in key if isinstance(k, tuple)]
    it = iter(values)
    ours = tuple(next(it) if isinstance(k, tuple) else k for k in key)
    first = [k[1] for k in key if isinstance(k, tuple)]
    ref = ref_data[_reference_key(key, [_clamp(k, n) for k, n in zip(first, dims, strict=True)])]
    if kind == "array" and ref.size == 0:
        with pytest.raises(ValueError, match="selects no elements"):
            x[ours]
        return
    out = x[ours]
    if np.ndim(ref) == 0 and kind in GIVES_ELEMENTS:
        assert isinstance(out, (cp.value, int, float)), (key, out)
    else:
        assert out.shape == ref.shape, (key, out.shape, ref.shape)
        assert isinstance(out, cp.array if kind == "array" else cp.tensor)
    if ref.size == 0:
        return  # nothing to compute: the shape is the whole answer
    tg = cp.Target()
    tg.compile(out, *values)
    tg.run()
    np.testing.assert_array_equal(_read(tg, out, ref_data.dtype), ref, err_msg=str(key))
    if values:  # other indices at run time: the same program, another lookup
        again = [data.draw(st.integers(-2 * n - 1, 2 * n + 1)) for n in dims]
        tg.write_value(values, again)
        tg.run()
        ref = ref_data[_reference_key(key, [_clamp(k, n) for k, n in zip(again, dims, strict=True)])]
        np.testing.assert_array_equal(_read(tg, out, ref_data.dtype), ref, err_msg=f"{key} {again}")


@pytest.mark.parametrize("kind", KINDS)
@_SETTINGS
@given(data=st.data())
def test_iteration_and_len_agree_with_numpy(kind: str, data: Any) -> None:
    ref_data, _, _ = data.draw(cases(kind))
    x = _make(kind, ref_data)
    assert len(x) == len(ref_data)
    items = list(x)
    assert len(items) == len(ref_data)
    if kind in GIVES_ELEMENTS and ref_data.ndim == 1:
        assert all(isinstance(e, (cp.value, int, float)) for e in items)
    else:  # sub-containers (a 1-D tensor's are 0-d, as Copapy's)
        assert [e.shape for e in items] == [r.shape for r in ref_data]
    tg = cp.Target()
    tg.compile(*items)
    tg.run()
    for got, want in zip(items, ref_data, strict=True):
        np.testing.assert_array_equal(_read(tg, got, ref_data.dtype), want)


@pytest.mark.parametrize("kind", KINDS)
@_SETTINGS
@given(data=st.data())
def test_out_of_range_ints_raise_as_numpy(kind: str, data: Any) -> None:
    ref_data, _, _ = data.draw(cases(kind))
    x = _make(kind, ref_data)
    axis = data.draw(st.integers(0, ref_data.ndim - 1))
    n = ref_data.shape[axis]
    bad = data.draw(st.integers(n, n + 5) | st.integers(-n - 5, -n - 1))
    key = (slice(None),) * axis + (bad,)
    with pytest.raises(IndexError):
        ref_data[key]
    with pytest.raises(IndexError, match=rf"index {bad} is out of range for .*(length|size) {n}"):
        x[key]


@pytest.mark.parametrize("kind", KINDS)
@_SETTINGS
@given(data=st.data())
def test_one_int_key_and_flat_elements_agree_with_numpy(kind: str, data: Any) -> None:
    """``x[i]`` with one int (a vector's and a quaternion's shortcut, the general path for
    the others; a NumPy int always takes the general path) and ``x.element(i)`` (a flat
    index, Copapy's): NumPy's element for every position in range, NumPy's IndexError with
    our message past either end."""
    ref_data, _, _ = data.draw(cases(kind))
    x = _make(kind, ref_data)
    n, flat = len(ref_data), ref_data.reshape(-1)
    outs: list[Any] = []
    want: list[Any] = []
    for i in range(-n - 2, n + 2):
        if -n <= i < n:
            outs += [x[i], x[np.int64(i)]]
            want += [ref_data[i]] * 2
            continue
        with pytest.raises(IndexError):
            ref_data[i]
        with pytest.raises(IndexError, match=rf"index {i} is out of range for .*(length|size) {n}$"):
            x[i]
    for i in range(-flat.size - 2, flat.size + 2):
        if -flat.size <= i < flat.size:
            outs.append(x.element(i))
            want.append(flat[i])
            continue
        with pytest.raises(IndexError):
            flat[i]
        with pytest.raises(IndexError, match=rf"^index {i} is out of range for {flat.size} elements$"):
            x.element(i)
    tg = run(*(o for o in outs if not isinstance(o, (int, float))))
    for got, ref in zip(outs, want, strict=True):
        read = got if isinstance(got, (int, float)) else tg.read_value(got)
        np.testing.assert_array_equal(np.asarray(read, dtype=ref_data.dtype), ref)


def _bad_keys() -> list[tuple[Any, type[Exception], str]]:
    return [
        (1.5, TypeError, "indices must be integers or slices, not float"),
        ((0,) * 4, IndexError, r"too many indices \(4\)"),
        ((Ellipsis, 0, Ellipsis), IndexError, "single ellipsis"),
        ([0, 1], TypeError, "index arrays"),
        (True, TypeError, "not bool"),
        ("a", TypeError, "not str"),
        (cp.value(1.0), TypeError, "int or bool values, not float"),
        (slice(cp.value(1), None), TypeError, "slice bounds must be plain integers"),
        (slice(0.5, None), TypeError, "slice indices must be integers"),
        (2**70, IndexError, "index 1180591620717411303424 is out of range"),
    ]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("case", range(10))
def test_bad_indices_raise_clear_errors(kind: str, case: int) -> None:
    shape = (4,) if kind in ONE_D else (3, 2, 2)
    x = _make(kind, np.arange(np.prod(shape), dtype=F32).reshape(shape))
    key, error, message = _bad_keys()[case]
    with pytest.raises(error, match=message):
        x[key]
    # a failed index changes nothing: no lookup array was gathered for it
    assert getattr(x, "_arr", None) is None or kind == "packed"


def test_zero_dimensional_and_empty_containers() -> None:
    t = cp.tensor(cp.value(1.0))
    for use in (lambda: t[0], lambda: t[...], lambda: len(t), lambda: iter(t)):
        with pytest.raises(TypeError, match="0-d tensor"):
            use()
    empty = cp.tensor(np.zeros((0, 3), dtype=F32))
    assert empty[:, 1].shape == (0,) and empty[1:].shape == (0, 3) and list(empty) == []
    with pytest.raises(IndexError, match="axis 0 of a tensor: it has length 0"):
        empty[cp.value(0)]
    assert empty[:, cp.value(1)].shape == (0,)  # no element to read: NumPy's empty result


def test_runtime_indices_accept_bool_values_and_numpy_ints() -> None:
    v = cp.vector([cp.value(10), 20, 30])
    a = cp.array(np.arange(6, dtype=np.int32).reshape(2, 3))
    flag = cp.value(0) < cp.value(1)  # a traced bool: position 1
    picks = [v[flag], v[np.int64(-1)], a[flag, np.int32(2)], a[np.int16(-2), flag]]
    tg = cp.Target()
    tg.compile(*picks)
    tg.run()
    assert [tg.read_value(p) for p in picks] == [20, 30, 5, 1]


def test_new_axes_and_ellipsis_follow_numpy_shapes() -> None:
    ref = np.arange(24, dtype=F32).reshape(2, 3, 4)
    for kind in ("tensor", "array"):
        x = _make(kind, ref)
        for key in [(None,), (Ellipsis, None), (None, 1, Ellipsis, None), (Ellipsis, 2), (1, Ellipsis, 3),
                    (Ellipsis,), (0, None, slice(None, None, -1))]:
            assert x[key].shape == ref[key].shape, (kind, key)
    v = cp.vector([1.0, 2.0, 3.0])
    assert isinstance(v[None], cp.tensor) and v[None].shape == (1, 3)
    assert v[..., -1] == 3.0 and v[(1,)] == 2.0
    assert isinstance(v[...], cp.vector) and v[...].values == v.values


def test_a_runtime_sub_array_of_more_than_four_strided_dimensions_is_refused_unchanged() -> None:
    # one gather stencil walks at most four (merged) dimensions
    t = cp.tensor(np.zeros((2, 3, 3, 3, 3, 3), dtype=F32))
    every_other = slice(None, None, 2)
    with pytest.raises(NotImplementedError, match="index it in two steps"):
        t[(cp.value(1),) + (every_other,) * 5]
    assert getattr(t, "_arr", None) is None  # no lookup array was gathered for it
    assert t[cp.value(1), ::2, ::2, ::2, 0].shape == (2, 2, 2, 3)  # four walks: one gather
