"""cp.tensor / cp.matrix against NumPy float32: construction and shapes, indexing, broadcasting,
matmul and sums in the documented pairwise order (bit for bit), reductions along axes,
reshaping, the constructors, constant folding (sparse matrices cost only their non-zero
entries), Target read/write, and error messages."""

from __future__ import annotations

from typing import Any

import copapy as cp
import numpy as np
import pytest
from helpers import F32, assert_bits, pairwise
from test_vectors import Prog

RNG = np.random.default_rng(77)


def traced(a: Any) -> cp.tensor[Any]:
    a = np.asarray(a)
    flat = [cp.value(float(x)) if a.dtype.kind == "f" else cp.value(int(x)) for x in a.reshape(-1).tolist()]
    return cp.tensor(flat, a.shape)


def rand(*shape: int) -> Any:
    return F32(RNG.uniform(-4, 4, shape))


def ref_matmul(a: Any, b: Any) -> Any:
    """float32 products, then the pairwise sum over the shared axis."""
    a2 = a[None, :] if a.ndim == 1 else a
    b2 = b[:, None] if b.ndim == 1 else b
    r = pairwise(a2[:, :, None] * b2[None, :, :], axis=1)
    if a.ndim == 1:
        r = r[0]
    if b.ndim == 1:
        r = r[..., 0]
    return r


def test_construction_and_shape() -> None:
    a = cp.value(1.0)
    t = cp.tensor([[1, 2, 3], [4, 5, a]])
    assert t.shape == (2, 3) and t.ndim == 2 and len(t) == 2 and t.size() == 6
    assert t.values[:5] == (1, 2, 3, 4, 5) and t.values[5] is a
    assert cp.tensor(5).shape == () and cp.tensor(a).values == (a,)
    assert cp.tensor(cp.vector([1, 2])).shape == (2,)
    assert cp.tensor(np.arange(6).reshape(2, 3)).tolist() == [[0, 1, 2], [3, 4, 5]]
    assert cp.tensor([1, 2, 3, 4, 5, 6], (3, 2)).tolist() == [[1, 2], [3, 4], [5, 6]]
    assert cp.tensor([cp.vector([1, 2]), cp.vector([3, 4])]).shape == (2, 2)
    assert cp.tensor([[[1], [2]], [[3], [4]]]).shape == (2, 2, 1)
    assert cp.matrix is cp.tensor
    with pytest.raises(ValueError, match=r"ragged nested sequence: its rows have shapes \(2,\) and \(1,\)"):
        cp.tensor([[1, 2], [3]])
    with pytest.raises(ValueError, match=r"cannot make a tensor of shape \(2, 2\) from 3 elements"):
        cp.tensor([1, 2, 3], (2, 2))
    with pytest.raises(TypeError, match="not str"):
        cp.tensor([["a"]])
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(cp.tensor(1.0))


def test_indexing_like_copapy_and_numpy() -> None:
    ref = np.arange(24).reshape(2, 3, 4)
    t = cp.tensor(ref.tolist())
    for key in [1, -1, (0, 2), (1, -1, 3), (slice(None), 1), (slice(None, None, -1), slice(0, 3, 2), 2),
                slice(1, 2), (0, slice(1, None)), (-2, -3, -4)]:
        got = t[key]  # type: ignore[index]
        assert isinstance(got, cp.tensor)
        assert got.shape == ref[key].shape and np.array_equal(np.asarray(got), ref[key]), key
    assert t[1, 2, 3].shape == () and t[1, 2, 3].item() == 23
    assert t.get_scalar(1, 2, 3) == 23 and t.get_scalar(-1, -1, -1) == 23
    assert [r.tolist() for r in cp.tensor([[1, 2], [3, 4]])] == [[1, 2], [3, 4]]
    assert [x.item() for x in cp.tensor([5, 6])] == [5, 6]  # elements of a 1-D tensor are 0-d tensors
    with pytest.raises(IndexError, match="index 2 is out of range for axis 0 of size 2"):
        t[2]
    with pytest.raises(IndexError, match="index -5 is out of range for axis 2 of size 4"):
        t[0, 0, -5]
    with pytest.raises(IndexError, match=r"too many indices \(4\) for a tensor of shape \(2, 3, 4\)"):
        t[0, 0, 0, 0]
    with pytest.raises(TypeError, match="not float"):
        t[0.5]  # type: ignore[index]
    with pytest.raises(TypeError, match="0-d tensor cannot be indexed"):
        cp.tensor(1)[0]
    with pytest.raises(IndexError, match="get_scalar needs 3 indices"):
        t.get_scalar(0, 0)


OPS = [
    (lambda a, b: a + b, np.add), (lambda a, b: a - b, np.subtract), (lambda a, b: a * b, np.multiply),
    (lambda a, b: a / b, np.divide), (lambda a, b: a // b, np.floor_divide),
    (lambda a, b: a % b, np.remainder), (lambda a, b: a < b, np.less),
    (lambda a, b: a >= b, np.greater_equal),
    (lambda a, b: a == b, np.equal),
]


def test_elementwise_broadcasting_against_numpy() -> None:
    shapes = [((2, 3), (2, 3)), ((2, 3), (3,)), ((2, 1), (1, 3)), ((3, 1, 2), (2,)), ((4,), (3, 1)),
              ((2, 3), ()), ((), (2, 2)), ((1,), (3,))]
    p = Prog()
    cases = []
    with np.errstate(all="ignore"):
        for sa, sb in shapes:
            x, y = rand(*sa), rand(*sb)
            tx, ty = traced(x), traced(y)
            for op, npop in OPS:
                cases.append((p.add(op(tx, ty)), npop(x, y)))
            cases.append((p.add(tx + y.tolist()), x + y))  # nested lists broadcast too
        x = rand(2, 3)
        tx = traced(x)
        v = cp.vector([cp.value(1.5), cp.value(-2.0), cp.value(0.25)])
        vn = F32([1.5, -2.0, 0.25])
        cases += [(p.add(tx * 2.5), x * F32(2.5)), (p.add(3.0 - tx), F32(3.0) - x),
                  (p.add(tx / cp.value(0.5)), x / F32(0.5)), (p.add(-tx), -x), (p.add(abs(tx)), np.abs(x)),
                  (p.add(tx ** 2), x * x), (p.add(tx + v), x + vn), (p.add(v - tx), vn - x)]
    p.build()
    for i, ref in cases:
        got = p.get(i)
        if ref.dtype == bool:
            assert got.tolist() == ref.tolist()
        else:
            assert_bits(got, ref)


def test_broadcast_errors_name_both_shapes() -> None:
    a, b = cp.zeros((2, 3)), cp.ones((4,))
    with pytest.raises(ValueError, match=r"cannot add tensors of shapes \(2, 3\) and \(4,\)"):
        a + b
    with pytest.raises(ValueError, match=r"cannot multiply tensors of shapes \(4,\) and \(2, 3\)"):
        b * a
    with pytest.raises(ValueError, match=r"cannot subtract tensors of shapes \(4,\) and \(2, 3\)"):
        cp.vector([1, 2, 3, 4]) - a
    with pytest.raises(TypeError):
        a + "x"  # type: ignore[operator]


def test_matmul_pairwise_bit_exact() -> None:
    p = Prog()
    cases = []
    for sa, sb in [((3, 4), (4, 5)), ((5, 7), (7,)), ((7,), (7, 2)), ((9,), (9,)), ((1, 1), (1, 1)),
                   ((6, 33), (33, 2))]:
        x, y = rand(*sa), rand(*sb)
        r = traced(x) @ traced(y)
        cases.append((p.add(r), ref_matmul(x, y), x.astype(np.float64) @ y.astype(np.float64)))
    x, y = rand(3, 3), F32([1.0, -2.0, 0.5])
    vy = cp.vector([cp.value(1.0), cp.value(-2.0), cp.value(0.5)])
    mv = traced(x) @ vy
    assert isinstance(mv, cp.tensor) and mv.shape == (3,)  # Copapy: 2-D @ vector is a 1-D tensor
    cases.append((p.add(mv), ref_matmul(x, y), None))
    cases.append((p.add(vy @ traced(x)), ref_matmul(y, x), None))
    cases.append((p.add(traced(x).matmul(traced(x))), ref_matmul(x, x), None))
    p.build()
    for i, ref, ref64 in cases:
        got = p.get(i)
        assert_bits(got, ref)
        if ref64 is not None:
            assert np.allclose(np.asarray(got, np.float64), ref64, rtol=1e-5, atol=1e-4)


def test_matmul_int_and_errors() -> None:
    x = np.array([[1, -2], [3, 2**30]], dtype=np.int32)
    p = Prog()
    i = p.add(traced(x) @ traced(x))
    p.build()
    with np.errstate(all="ignore"):
        assert p.get(i).tolist() == (x @ x).tolist()
    with pytest.raises(ValueError, match=r"cannot matrix-multiply tensors of shapes \(2, 3\) and \(2, 3\)"):
        cp.zeros((2, 3)) @ cp.zeros((2, 3))
    with pytest.raises(ValueError, match=r"cannot matrix-multiply tensors of shapes \(3,\) and \(2, 3\)"):
        cp.vector([1, 2, 3]) @ cp.zeros((2, 3))
    with pytest.raises(ValueError, match="scalar"):
        cp.zeros((2, 2)) @ 2  # type: ignore[operator]
    with pytest.raises(NotImplementedError, match="more than 2 dimensions"):
        cp.zeros((2, 2, 2)) @ cp.zeros((2, 2))


def test_sparse_constant_matrices_cost_only_nonzero_entries() -> None:
    n = 40
    v = cp.vector([cp.value(float(i)) for i in range(n)])
    r = cp.identity(n) @ v
    assert all(a is b for a, b in zip(r.values, v.values, strict=True))  # no node at all
    z = cp.zeros((n, n)) @ v
    assert all(type(x) is float and x == 0.0 for x in z.values)
    d = cp.diagonal(cp.arange(n)) @ v  # one multiplication per row
    tg = cp.Target()
    tg.compile(d)
    steps_diag = tg.stats()[0]
    tg.run()
    assert np.asarray(cp.tensor(tg.read_value(list(d.values)))).tolist() == [float(i * i) for i in range(n)]
    assert steps_diag <= 2 * n  # a multiplication (and a store) per row
    dense = traced(rand(n, n)) @ v  # 1,600 traced values: packed, one matmul stencil
    tg2 = cp.Target()
    tg2.compile(dense)
    assert tg2.stats()[0] < steps_diag
    tridiag = cp.tensor([[2.0 if i == j else (1.0 if abs(i - j) == 1 else 0) for j in range(5)]
                         for i in range(5)])
    x = F32([1.0, 2.0, 3.0, 4.0, 5.0])
    p = Prog()
    k = p.add(tridiag @ cp.vector([cp.value(float(e)) for e in x]))
    p.build()
    assert p.get(k).tolist() == (np.asarray(tridiag, F32) @ x).tolist()


def test_sum_axes_mean_trace() -> None:
    x = rand(3, 5, 4)
    t = traced(x)
    p = Prog()
    cases = [
        (p.add(t.sum()), pairwise(x.reshape(-1))),
        (p.add(t.sum(0)), pairwise(x, 0)),
        (p.add(t.sum(axis=1)), pairwise(x, 1)),
        (p.add(t.sum(-1)), pairwise(x, -1)),
        (p.add(t.sum((0, 2))), pairwise(np.moveaxis(x, 1, 0).reshape(5, -1), 1)),
        (p.add(t.sum(1, keepdims=True)), pairwise(x, 1)[:, None, :]),
        (p.add(t.sum(keepdims=True)), pairwise(x.reshape(-1)).reshape(1, 1, 1)),
        (p.add(t.mean()), pairwise(x.reshape(-1)) / F32(60)),
        (p.add(t.mean(1)), pairwise(x, 1) / F32(5)),
    ]
    m = rand(6, 6)
    cases.append((p.add(traced(m).trace()), pairwise(np.diag(m))))
    p.build()
    for i, ref in cases:
        assert_bits(p.get(i), ref)
    assert t.sum((0, 1, 2)).dtype == "float"  # every axis summed: a scalar, as in Copapy
    with pytest.raises(ValueError, match=r"axis 3 is out of bounds for a tensor of shape \(3, 5, 4\)"):
        t.sum(3)
    with pytest.raises(ValueError, match="square matrix"):
        cp.zeros((2, 3)).trace()
    assert cp.tensor([[1, 2], [3, 4]]).sum(0).tolist() == [4, 6]


def test_reshape_transpose_flatten() -> None:
    ref = np.arange(24).reshape(2, 3, 4)
    t = cp.tensor(ref.tolist())
    assert np.array_equal(np.asarray(t.T), ref.T)
    assert np.array_equal(np.asarray(t.transpose(1, 0, 2)), ref.transpose(1, 0, 2))
    assert np.array_equal(np.asarray(t.transpose((2, 0, 1))), ref.transpose(2, 0, 1))
    assert np.array_equal(np.asarray(t.reshape(4, -1)), ref.reshape(4, -1))
    assert np.array_equal(np.asarray(t.reshape((6, 4))), ref.reshape(6, 4))
    assert t.flatten().shape == (24,) and t.flatten().tolist() == list(range(24))
    assert cp.tensor([1, 2]).T.tolist() == [1, 2]
    with pytest.raises(ValueError, match=r"cannot reshape a tensor of shape \(2, 3, 4\) into shape \(5, 5\)"):
        t.reshape(5, 5)
    with pytest.raises(ValueError, match="do not permute"):
        t.transpose(0, 0, 1)


def test_constructors_against_numpy() -> None:
    assert np.array_equal(np.asarray(cp.zeros((2, 3))), np.zeros((2, 3)))
    assert np.array_equal(np.asarray(cp.ones(4)), np.ones(4))
    assert cp.zeros(3).shape == (3,) and all(type(x) is int for x in cp.zeros(3).values)
    assert np.array_equal(np.asarray(cp.eye(3)), np.eye(3))
    assert np.array_equal(np.asarray(cp.eye(2, 4)), np.eye(2, 4))
    assert np.array_equal(np.asarray(cp.identity(3)), np.identity(3))
    assert cp.arange(5).tolist() == list(range(5))
    assert cp.arange(2, 8, 3).tolist() == [2, 5]
    assert cp.arange(5, 0, -2).tolist() == [5, 3, 1]
    assert cp.arange(0.0, 1.0, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    with pytest.raises(ValueError, match="step"):
        cp.arange(0, 5, 0)
    a = cp.value(2.0)
    d = cp.diagonal(cp.vector([a, 3.0]))
    assert d.shape == (2, 2) and d.values[0] is a and d.values[1:] == (0, 0, 3.0)
    assert cp.diagonal([1, 2, 3]).tolist() == np.diag([1, 2, 3]).tolist()
    with pytest.raises(ValueError, match="1-D"):
        cp.diagonal(cp.eye(2))
    # concat: vectors (and scalars) give a vector, tensors join along an axis
    c = cp.concat(cp.vector([1, 2]), a, cp.vector([3.0]))
    assert isinstance(c, cp.vector) and c.values == (1, 2, a, 3.0)
    assert cp.concat([cp.vector([1]), cp.vector([2])]).values == (1, 2)
    m1, m2 = np.arange(6).reshape(2, 3), np.arange(4).reshape(2, 2)
    assert cp.concat(cp.tensor(m1), cp.tensor(m2), axis=1).tolist() == np.concatenate([m1, m2], 1).tolist()
    assert cp.concat(cp.tensor(m1), cp.tensor(m1)).tolist() == np.concatenate([m1, m1]).tolist()
    with pytest.raises(ValueError, match=r"concatenate tensors of shapes \(2, 3\) and \(2, 2\) along axis 0"):
        cp.concat(cp.tensor(m1), cp.tensor(m2))


def test_map_math_and_numpy_interop() -> None:
    x = F32([[0.25, 4.0], [9.0, 2.0]])
    t = traced(x)
    p = Prog()
    i = p.add(cp.sqrt(t))
    j = p.add(t.map(lambda e: e * 2.0))
    p.build()
    assert_bits(p.get(i), np.sqrt(x))
    assert_bits(p.get(j), x * F32(2.0))
    assert isinstance(cp.sqrt(t), cp.tensor) and cp.sqrt(t).shape == (2, 2)
    assert np.asarray(cp.tensor([[1.0, 2.0]]), dtype=F32).dtype == F32
    with pytest.raises(TypeError, match="holds traced values"):
        np.asarray(t)
    h = cp.tensor([[cp.value(1.0), 2.0]]).homogenize()
    assert all(isinstance(e, cp.value) for e in h.values)


def test_target_read_and_write_tensor() -> None:
    x = traced(F32([[1.0, 2.0], [3.0, 4.0]]))
    y = x @ x + cp.eye(2)
    tg = cp.Target()
    tg.compile(y, x)
    tg.run()
    got = tg.read_value(y)
    assert isinstance(got, cp.tensor) and got.shape == (2, 2)
    assert got.tolist() == [[8.0, 10.0], [15.0, 23.0]]
    tg.write_value(x, [[0.0, 1.0], [1.0, 0.0]])
    tg.run()
    assert tg.read_value(y).tolist() == [[2.0, 0.0], [0.0, 2.0]]
    tg.write_value(x, np.eye(2, dtype=F32) * 2)
    tg.run()
    assert np.asarray(tg.read_value(y)).tolist() == [[5.0, 0.0], [0.0, 5.0]]
    with pytest.raises(ValueError, match=r"cannot write data of shape \(4,\) to a tensor of shape \(2, 2\)"):
        tg.write_value(x, [1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match="ragged"):
        tg.write_value(x, [[1.0, 2.0], [3.0]])


def test_container_descriptors() -> None:
    """What tensors and vectors hand to Target through the container protocol
    (``__copapy__``): their leaves, shape and a rebuild that makes the same kind again."""
    x = traced(F32([[1.0, 2.0], [3.0, 4.0]]))
    v = cp.vector([cp.value(1.0), 5.0])
    cx, cv = x.__copapy__(), v.__copapy__()
    assert cx.kind == "sequence" and cx.shape == (2, 2) and cx.leaves == x.values
    assert cv.kind == "sequence" and cv.shape == (2,) and cv.leaves == v.values
    assert cx.rebuild is not None
    again = cx.rebuild((1.0, 2.0, 3.0, 4.0))
    assert isinstance(again, cp.tensor) and again.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    y = x * 2.0
    tg = cp.Target()
    tg.compile(y, x, v)
    tg.run()
    assert isinstance(tg.read_value(v), cp.vector) and tg.read_value(v).tolist() == [1.0, 5.0]
    tg.write_value(x, np.array([[1.0, 1.0], [1.0, 1.0]]))
    tg.run()
    assert tg.read_value(y).tolist() == [[2.0, 2.0], [2.0, 2.0]]
    with pytest.raises(ValueError, match=r"write data of shape \(2, 1\) to a tensor of shape \(2, 2\)"):
        tg.write_value(x, [[1.0], [2.0]])
    with pytest.raises(TypeError, match="element 1 of this vector is the constant 5.0"):
        tg.write_value(v, [1.0, 2.0])
    # a failed write changed nothing
    tg.run()
    assert tg.read_value(y).tolist() == [[2.0, 2.0], [2.0, 2.0]]
