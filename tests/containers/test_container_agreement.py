"""Every container kind (``cp.tensor`` element by element, a packed ``cp.tensor``,
``cp.array``, and ``cp.vector`` for 1-D shapes) agrees with NumPy on the same operations
for random shapes and axes: reductions over axes (``sum``, ``mean``, ``min``, ``max``,
``keepdims``), transposes, reshapes, broadcasting, ``sort``/``argsort`` and NumPy's axis
errors. One n-d core in Rust (``ndcore/``, ``_core.nd_*``) serves them all, so the API does not
depend on which storage a value got (``@cp.jit`` hands small NumPy arguments over as
vectors/tensors and large ones as ``cp.array``).

The elements are small integers held in float32, so every sum is exact in any order: these
tests are about shapes and axes (the summation order has its own tests, test_arrays.py).
The reference is NumPy float32 on the same data.
"""

from __future__ import annotations

import operator
import os
from typing import Any

import copapy as cp
import numpy as np
import pytest
from helpers import F32, run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

_EMULATED = bool(os.environ.get("COPAPY_TEST_TARGET"))
_SETTINGS = settings(max_examples=6 if _EMULATED else 30, deadline=None, derandomize=True,
                     suppress_health_check=[HealthCheck.too_slow])

KINDS = ("tensor", "packed", "array", "vector")


def _make(kind: str, data: np.ndarray[Any, Any]) -> tuple[Any, list[Any]]:
    """A container of ``kind`` holding ``data`` as traced inputs, and its input values."""
    flat = [cp.value(float(x)) for x in data.reshape(-1)]
    if kind == "array":
        a = cp.array(data)
        return a, [a]
    if kind == "vector":
        return cp.vector(flat), flat
    t = cp.tensor(flat, shape=data.shape, packed=kind == "packed")
    return t, flat


def _read(tg: Any, x: Any) -> np.ndarray[Any, Any]:
    return np.asarray(tg.read_value(x), dtype=F32)


shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)


@st.composite
def shape_and_axes(draw: Any) -> tuple[tuple[int, ...], Any]:
    shape = draw(shapes)
    nd = len(shape)
    axis = draw(st.one_of(
        st.none(),
        st.integers(-nd, nd - 1),
        st.lists(st.integers(0, nd - 1), unique=True, min_size=1, max_size=nd).map(tuple),
    ))
    return shape, axis


@pytest.mark.parametrize("kind", KINDS)
@_SETTINGS
@given(case=shape_and_axes(), keepdims=st.booleans(), seed=st.integers(0, 2**16))
def test_reductions_over_axes_agree_with_numpy(kind: str, case: Any, keepdims: bool, seed: int) -> None:
    shape, axis = case
    if kind == "vector":
        shape, axis = shape[:1], axis if axis in (None, 0, -1, (0,)) else None
    data = np.random.default_rng(seed).integers(-50, 50, shape).astype(F32)
    x, _ = _make(kind, data)
    outs = {op: getattr(x, op)(axis=axis, keepdims=keepdims) for op in ("sum", "mean", "min", "max")}
    tg = cp.Target()
    tg.compile(*outs.values())
    tg.run()
    for op, out in outs.items():
        ref = getattr(data, op)(axis=axis, keepdims=keepdims)
        got = _read(tg, out)
        assert got.shape == np.shape(ref), (op, kind, shape, axis)
        np.testing.assert_array_equal(got, np.asarray(ref, dtype=F32), err_msg=f"{op} {kind} {shape} {axis}")


@pytest.mark.parametrize("kind", KINDS)
@_SETTINGS
@given(shape=shapes, seed=st.integers(0, 2**16), other=shapes)
def test_shapes_transposes_and_broadcasts_agree_with_numpy(kind: str, shape: tuple[int, ...], seed: int,
                                                           other: tuple[int, ...]) -> None:
    if kind == "vector":
        shape = shape[:1]
    rng = np.random.default_rng(seed)
    data = rng.integers(-50, 50, shape).astype(F32)
    x, _ = _make(kind, data)
    perm = tuple(rng.permutation(len(shape)))
    # a second operand that broadcasts with ``shape`` (NumPy's rule), as a tensor of constants
    bshape = tuple(d if rng.integers(2) else 1 for d in shape[len(shape) - len(other[:len(shape)]):])
    b = rng.integers(-5, 5, bshape).astype(F32)
    outs = [x.T, x.transpose(perm), x.reshape(-1), x.flatten(), x.ravel(), x + cp.array(b) if kind == "array"
            else x + cp.tensor(b.tolist()), x.max(axis=0) - x.min(axis=0)]
    refs = [data.T, data.transpose(perm), data.reshape(-1), data.flatten(), data.ravel(), data + b,
            data.max(axis=0) - data.min(axis=0)]
    tg = cp.Target()
    tg.compile(*outs)
    tg.run()
    for k, (out, ref) in enumerate(zip(outs, refs, strict=True)):
        got = _read(tg, out)
        assert got.shape == ref.shape, (k, kind, shape)
        np.testing.assert_array_equal(got, ref, err_msg=f"{k} {kind} {shape}")


@pytest.mark.parametrize("kind", KINDS)
@_SETTINGS
@given(n=st.integers(1, 9), seed=st.integers(0, 2**16))
def test_sort_and_argsort_agree_with_numpy(kind: str, n: int, seed: int) -> None:
    data = np.random.default_rng(seed).integers(-3, 3, n).astype(F32)  # ties: the order is stable
    x, _ = _make(kind, data)
    s, i = x.sort(), x.argsort()
    tg = cp.Target()
    tg.compile(s, i)
    tg.run()
    np.testing.assert_array_equal(_read(tg, s), np.sort(data, kind="stable"))
    np.testing.assert_array_equal(np.asarray(tg.read_value(i)), np.argsort(data, kind="stable"))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("axis, error", [((0, 0), ValueError), ((0, -2), ValueError), (True, TypeError),
                                         (1.0, TypeError), (2, ValueError), (-3, IndexError)])
def test_bad_axes_raise_as_numpy_for_every_kind(kind: str, axis: Any, error: type[Exception]) -> None:
    data = np.arange(6, dtype=F32).reshape(2, 3)
    with pytest.raises(error):
        data.sum(axis=axis)  # the reference raises the same class
    if kind == "vector":
        data, axis = data[0], (axis if not isinstance(axis, tuple) else (0, 0))
        with pytest.raises(error):
            data.sum(axis=axis)
    x, _ = _make(kind, data)
    for op in ("sum", "mean", "min", "max"):
        with pytest.raises(error):
            getattr(x, op)(axis=axis)


def test_small_and_large_jit_arguments_have_the_same_methods() -> None:
    """``@cp.jit`` hands 64 elements over as a vector, 65 as a cp.array: both reduce alike."""

    @cp.jit
    def f(a: Any) -> Any:
        return a.max() - a.min() + a.mean() + a.T.sum() + a.reshape(-1).sort()[0]

    for n in (64, 65):
        xs = np.arange(n, dtype=F32)[::-1].copy()
        ref = xs.max() - xs.min() + F32(xs.sum() / F32(n)) + xs.sum() + np.sort(xs)[0]
        assert F32(f(xs)) == F32(ref), n


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("rows", [[[1.0, 0.0], [3.0, -4.0]], [[0.0, 0.0], [0.0, 2.5]],
                                  [[0.0, 0.0], [0.0, 0.0]]])
def test_the_shared_methods_agree_with_numpy(kind: str, rows: list[list[float]]) -> None:
    """all, any, trace, element, item, tolist, get_values and map: the same on every kind."""
    data = np.array(rows, dtype=F32)
    if kind == "vector":
        data = data.reshape(-1)
    x, _ = _make(kind, data)
    outs: dict[str, Any] = {"all": x.all(), "any": x.any(), "last": x.element(-1),
                            "first": x.reshape(-1)[0:1].item() if kind != "array" else x.reshape(-1)[0],
                            "doubled": x.map(lambda e: e * 2.0), "list": x.tolist()}
    refs: dict[str, Any] = {"all": data.all(), "any": data.any(), "last": data.reshape(-1)[-1],
                            "first": data.reshape(-1)[0], "doubled": data * 2, "list": data}
    if data.ndim == 2:
        outs["trace"], refs["trace"] = x.trace(), np.trace(data)
    listed = list(np.ravel(np.array(outs.pop("list"), dtype=object)))  # the elements themselves
    tg = cp.Target()
    tg.compile(*outs.values(), *listed)
    tg.run()
    for k, out in outs.items():
        got = np.asarray(tg.read_value(out), dtype=F32)
        np.testing.assert_array_equal(got, np.asarray(refs[k], dtype=F32), err_msg=f"{k} {kind}")
    got_list = np.asarray([tg.read_value(e) for e in listed], F32).reshape(data.shape)
    np.testing.assert_array_equal(got_list, refs["list"])
    assert x.get_values(list(range(data.size))) == np.arange(data.size).reshape(data.shape).tolist()


def _methods(cls: type) -> set[str]:
    return {n for n in dir(cls) if not n.startswith("_") or n.startswith("__r") or n in (
        "__and__", "__or__", "__xor__", "__lshift__", "__rshift__", "__matmul__", "__getitem__",
        "__iter__", "__len__", "__bool__", "__copapy__")}


def test_every_container_has_the_methods_of_the_others() -> None:
    # code never depends on which storage a value got: cp.array, tensor, vector and quaternion
    # share every method (vector adds its geometric ones, quaternion its rotations; tensor its
    # elements and packing switch)
    own = {"values", "pack_threshold", "cross", "magnitude", "norm", "normalize", "conjugate",
           "from_euler", "identity", "inverse", "rotate_vector", "toAxisAngle", "toEulerAngles",
           "toRotationMatrix", "w", "x", "y", "z"}
    kinds = (cp.array, cp.tensor, cp.vector, cp.quaternion)
    for a in kinds:
        for b in kinds:
            assert _methods(a) - _methods(b) - own == set(), (a.__name__, b.__name__)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shape", [(1,), (5,), (2, 3), (2, 1, 4)])
def test_size_is_an_int_and_callable_on_every_container(kind: str, shape: tuple[int, ...]) -> None:
    # NumPy's property (``a.size``) and Copapy 0.0.7's method (``t.size()``) both work
    if kind == "vector":
        shape = shape[-1:]
    data = np.arange(np.prod(shape), dtype=F32).reshape(shape)
    x, _ = _make(kind, data)
    assert isinstance(x.size, int) and x.size == data.size and x.size() == data.size
    assert x.size * 2 == 2 * data.size and f"{x.size}" == str(data.size) and repr(x.size) == repr(data.size)
    assert np.zeros(x.size).shape == (data.size,) and list(range(x.size())) == list(range(data.size))
    assert cp.quaternion().size == 4 and cp.quaternion().size() == 4


@pytest.mark.parametrize("kind", ("tensor", "packed", "array", "vector"))
@pytest.mark.parametrize("op", (operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift))
def test_bitwise_operators_agree_with_numpy(kind: str, op: Any) -> None:
    rng = np.random.default_rng(7)
    shift = op in (operator.lshift, operator.rshift)
    a = rng.integers(-1000, 1000, 70, dtype=np.int32)
    b = rng.integers(0, 31, 70, dtype=np.int32) if shift else rng.integers(-1000, 1000, 70, dtype=np.int32)
    x: Any
    y: Any
    if kind == "array":
        x, y = cp.array(a), cp.array(b)
    else:
        def make(v: Any) -> Any:
            vals = [cp.value(int(k)) for k in v]
            return cp.vector(vals) if kind == "vector" else cp.tensor(vals, packed=kind == "packed")
        x, y = make(a), make(b)
    out = op(x, y)
    tg = cp.Target()
    tg.compile(out)
    tg.run()
    ref = op(a, b)
    np.testing.assert_array_equal(np.asarray(tg.read_value(out), dtype=np.int32), ref)


@st.composite
def shape_and_index(draw: Any) -> tuple[tuple[int, ...], tuple[Any, ...]]:
    """A shape and a static index of it: ints (negative too) and slices (any step)."""
    shape = draw(shapes)
    keys: list[Any] = []
    for n in shape[:draw(st.integers(0, len(shape)))]:
        if draw(st.booleans()):
            keys.append(draw(st.integers(-n, n - 1)))
        else:
            bound = st.none() | st.integers(-n - 2, n + 2)
            step = st.none() | st.sampled_from([-3, -2, -1, 1, 2, 3])
            keys.append(slice(draw(bound), draw(bound), draw(step)))
    return shape, tuple(keys)


@pytest.mark.parametrize("kind", ("tensor", "array"))
@_SETTINGS
@given(case=shape_and_index(), seed=st.integers(0, 2**16))
def test_static_indexing_agrees_with_numpy(kind: str, case: Any, seed: int) -> None:
    # the n-d core turns an index into one strided view (offset, shape, strides) for both
    # storage modes: a gather of leaves for a tensor, one strided copy for an array
    shape, key = case
    data = np.random.default_rng(seed).integers(-50, 50, shape).astype(F32)
    ref = data[key]
    x, _ = _make(kind, data)
    if kind == "array" and (ref.size == 0 or ref.ndim == 0):
        return  # an array has at least one element; its elements have their own tests
    out = x[key]
    if ref.size == 0:  # nothing to compute: the shape is the whole answer
        assert out.shape == ref.shape, (shape, key)
        return
    tg = cp.Target()
    tg.compile(out)
    tg.run()
    got = _read(tg, out)
    assert got.shape == ref.shape, (shape, key)
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("kind", ("tensor", "array"))
@pytest.mark.parametrize("key, error", [((0, 0, 0), IndexError), ((3,), IndexError), ((-4,), IndexError),
                                        ((1.0,), TypeError), ((True,), TypeError)])
def test_bad_static_indices_raise_as_numpy(kind: str, key: tuple[Any, ...], error: type[Exception]) -> None:
    x, _ = _make(kind, np.zeros((3, 2), dtype=F32))
    with pytest.raises(error):
        x[key]


@_SETTINGS
@given(shape=shapes, sizes=st.lists(st.integers(0, 3), min_size=1, max_size=3), data=st.data())
def test_concat_of_tensors_agrees_with_numpy(shape: tuple[int, ...], sizes: list[int], data: Any) -> None:
    # NumPy's shapes, also with empty pieces (a tensor from NumPy data keeps its shape)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    ax = axis % len(shape)
    rng = np.random.default_rng(len(sizes))
    parts = [rng.integers(-50, 50, shape[:ax] + (n,) + shape[ax + 1:]).astype(F32) for n in sizes]
    ref = np.concatenate(parts, axis=axis)
    out = cp.concat([cp.tensor(p) for p in parts], axis)
    assert out.shape == ref.shape
    np.testing.assert_array_equal(np.asarray(out, dtype=F32).reshape(ref.shape), ref)
    with pytest.raises(ValueError, match="out of bounds"):
        cp.concat([cp.tensor(p) for p in parts], len(shape))


_PIECE_FORMS = ["int", "float", "f32", "list", "tuple", "numpy", "vector", "traced"]


def _piece(form: str, x: np.ndarray[Any, Any]) -> Any:
    """A 1-D piece of ``concat`` holding ``x`` (a scalar form holds its first number)."""
    return {"int": lambda: int(x[0]), "float": lambda: float(x[0]), "f32": lambda: F32(x[0]),
            "list": lambda: x.tolist(), "tuple": lambda: tuple(x.tolist()), "numpy": lambda: x,
            "vector": lambda: cp.vector(x.tolist()),
            "traced": lambda: cp.vector([cp.value(v) for v in x.tolist()])}[form]()


@_SETTINGS
@given(forms=st.lists(st.sampled_from(_PIECE_FORMS), min_size=1, max_size=4),
       call=st.sampled_from(["list", "tuple", "separate", "positional axis", "numpy axis", "keyword axis"]),
       data=st.data())
def test_concat_of_vector_pieces_agrees_with_numpy_in_every_call_form(forms: list[str], call: str,
                                                                       data: Any) -> None:
    # vectors and scalars join into a vector whatever form the call and the pieces take
    # (Copapy's list with a positional axis, separate pieces, NumPy ints)
    rng = np.random.default_rng(len(forms))
    parts = [rng.integers(-50, 50, 1 if f in ("int", "float", "f32") else data.draw(st.integers(1, 3)))
             .astype(np.int32 if f == "int" else F32) for f in forms]
    pieces = [_piece(f, x) for f, x in zip(forms, parts, strict=True)]
    out = {"list": lambda: cp.concat(pieces), "tuple": lambda: cp.concat(tuple(pieces)),
           "separate": lambda: cp.concat(*pieces), "positional axis": lambda: cp.concat(pieces, 0),
           "numpy axis": lambda: cp.concat(pieces, np.int64(-1)),
           "keyword axis": lambda: cp.concat(tensors=pieces, axis=-1)}[call]()
    ref = np.concatenate(parts)
    assert type(out) is cp.vector and out.shape == ref.shape
    traced = [x for p in pieces if isinstance(p, cp.vector) for x in p.values if isinstance(x, cp.value)]
    got = run(out).read_value(out) if traced else list(out.values)
    np.testing.assert_array_equal(np.asarray(got, dtype=ref.dtype), ref)


def test_concat_errors_are_numpys_classes_with_our_messages() -> None:
    for empty in ([], ()):
        with pytest.raises(ValueError):
            np.concatenate(empty)
        with pytest.raises(ValueError, match="concat needs at least one piece"):
            cp.concat(empty)
    with pytest.raises(ValueError):
        np.concatenate([np.zeros(()), np.zeros(())])
    with pytest.raises(ValueError, match="0-d tensors cannot be joined"):
        cp.concat(cp.tensor(1.0), cp.tensor(2.0))
    with pytest.raises(ValueError, match=r"concatenate tensors of shapes \(1, 2\) and \(2,\) along axis 0"):
        cp.concat(cp.tensor([[1, 2]]), [3, 4])
    with pytest.raises(np.exceptions.AxisError):
        np.concatenate([np.zeros(2), np.zeros(2)], 1)
    with pytest.raises(IndexError, match=r"axis 1 is out of bounds for pieces of shape \(2,\)") as err:
        cp.concat([cp.vector([1.0, 2.0]), 3.0], 1)
    assert isinstance(err.value, ValueError)  # NumPy's AxisError is both
    with pytest.raises(TypeError, match="vector\\(\\) takes an iterable"):
        cp.concat(cp.vector([1.0]), "ab")
