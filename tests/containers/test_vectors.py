"""cp.vector against NumPy float32 / int32: elementwise operators with broadcasting, dot
product and sum in the documented pairwise order (bit for bit), norms, cross product, the
vector helpers, constant folding, Target read/write, and error messages."""

from __future__ import annotations

import math
from typing import Any

import copapy as cp
import numpy as np
import pytest
from helpers import F32, assert_bits, pairwise


class Prog:
    """Collects traced results, compiles them into one Target, reads them back."""

    def __init__(self) -> None:
        self.outs: list[Any] = []

    def add(self, x: Any) -> int:
        self.outs.append(x)
        return len(self.outs) - 1

    def build(self) -> None:
        self.tg = cp.Target()
        self.tg.compile(*[o for o in self.outs if not isinstance(o, int | float)])
        self.tg.run()

    def get(self, i: int) -> Any:
        x = self.outs[i]
        if isinstance(x, cp.vector | cp.tensor):
            return np.array(self.tg.read_value(list(x.values))).reshape(x.shape)
        return self.tg.read_value(x)


def values(a: Any) -> cp.vector[Any]:
    return cp.vector([cp.value(float(x)) if isinstance(x, float | np.floating) else cp.value(int(x))
                      for x in np.asarray(a).tolist()])


RNG = np.random.default_rng(2024)
EDGE = F32([0.0, -0.0, 1.0, -1.5, 3.0e38, -3.0e38, 1e-39, 7.25, 1e-7, 123456.78])


def test_construction_shape_len_iter_index() -> None:
    a, b = cp.value(1.0), cp.value(2.0)
    v = cp.vector([a, 2.5, b, 4])
    assert v.shape == (4,) and v.ndim == 1 and len(v) == 4
    assert all(x is y for x, y in zip(v, [a, 2.5, b, 4], strict=True))
    assert v[0] is a and v[-2] is b and v[1] == 2.5 and v.get_scalar(3) == 4
    assert isinstance(v[1:3], cp.vector) and v[1:3].values == (2.5, b)
    assert v[::-1].values == (4, b, 2.5, a)
    assert cp.vector(np.array([1.0, 2.0], dtype=F32)).values == (1.0, 2.0)
    assert cp.vector(cp.tensor([1, 2])).values == (1, 2)
    assert cp.vector(x for x in range(3)).values == (0, 1, 2)
    assert "vector(" in repr(v)


def test_index_errors() -> None:
    v = cp.vector([1.0, 2.0, 3.0])
    with pytest.raises(IndexError, match="index 3 is out of range for a vector of length 3"):
        v[3]
    with pytest.raises(IndexError, match="index -4"):
        v[-4]
    with pytest.raises(TypeError, match="vector indices must be integers or slices, not float"):
        v[1.0]  # type: ignore[call-overload]


def test_construction_errors() -> None:
    with pytest.raises(TypeError, match="not a int"):
        cp.vector(5)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="element 1 is a str"):
        cp.vector([1.0, "x"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match=r"1-D; got an array of shape \(2, 2\)"):
        cp.vector(np.zeros((2, 2)))
    with pytest.raises(ValueError, match=r"1-D; got a tensor of shape \(1, 2\)"):
        cp.vector(cp.tensor([[1, 2]]))


OPS = {
    "add": (lambda a, b: a + b, np.add),
    "sub": (lambda a, b: a - b, np.subtract),
    "mul": (lambda a, b: a * b, np.multiply),
    "truediv": (lambda a, b: a / b, np.divide),
    "floordiv": (lambda a, b: a // b, np.floor_divide),
    "mod": (lambda a, b: a % b, np.remainder),
    "lt": (lambda a, b: a < b, np.less),
    "le": (lambda a, b: a <= b, np.less_equal),
    "gt": (lambda a, b: a > b, np.greater),
    "ge": (lambda a, b: a >= b, np.greater_equal),
    "eq": (lambda a, b: a == b, np.equal),
    "ne": (lambda a, b: a != b, np.not_equal),
}


def test_elementwise_float_against_numpy() -> None:
    n = 12
    x = np.concatenate([EDGE, F32(RNG.uniform(-5, 5, n - len(EDGE) + 2))])[:n]
    y = F32(RNG.uniform(-4, 4, n))
    y[0] = 0.0
    y[3] = x[3]
    s_num, s_val = 1.75, cp.value(-2.5)
    vx, vy = values(x), values(y)
    p = Prog()
    cases: list[tuple[int, Any]] = []
    with np.errstate(all="ignore"):
        for _name, (op, npop) in OPS.items():
            cases.append((p.add(op(vx, vy)), npop(x, y)))
            cases.append((p.add(op(vx, s_num)), npop(x, F32(s_num))))
            cases.append((p.add(op(s_num, vx)), npop(F32(s_num), x)))
            cases.append((p.add(op(vx, s_val)), npop(x, F32(-2.5))))
            cases.append((p.add(op(s_val, vy)), npop(F32(-2.5), y)))
            cases.append((p.add(op(vx, list(y.tolist()))), npop(x, y)))
        cases.append((p.add(-vx), -x))
        cases.append((p.add(+vx), x))
        cases.append((p.add(abs(vx)), np.abs(x)))
        cases.append((p.add(vx ** 2), x * x))
        cases.append((p.add(vx ** 3), (x * x) * x))
    p.build()
    for i, ref in cases:
        got = p.get(i)
        if ref.dtype == bool:
            assert got.tolist() == ref.tolist(), (p.outs[i], got, ref)
        else:
            assert_bits(got, ref)


def test_elementwise_int_against_numpy() -> None:
    x = np.array([7, -7, 2**31 - 1, -(2**31), 0, 5, 100], dtype=np.int32)
    y = np.array([2, 2, 1, 3, -3, -5, 7], dtype=np.int32)
    vx, vy = values(x), values(y)
    p = Prog()
    cases = []
    with np.errstate(all="ignore"):
        for op, npop in [(lambda a, b: a + b, np.add), (lambda a, b: a - b, np.subtract),
                         (lambda a, b: a * b, np.multiply), (lambda a, b: a // b, np.floor_divide),
                         (lambda a, b: a % b, np.remainder)]:
            cases.append((p.add(op(vx, vy)), npop(x, y)))
            cases.append((p.add(op(vx, 3)), npop(x, np.int32(3))))
            cases.append((p.add(op(-3, vy)), npop(np.int32(-3), y)))
    p.build()
    for i, ref in cases:
        got = p.get(i)
        assert all(type(g) is int for g in got.tolist())
        assert got.tolist() == ref.tolist()
    assert all(x.dtype == "int" for x in (vx + vy).values)
    assert all(x.dtype == "float" for x in (vx + 0.5).values)
    assert all(x.dtype == "float" for x in (vx / 2).values)


def test_constants_are_folded_in_python() -> None:
    c = cp.vector([1.0, 2.0, 3.0])
    r = (c + 1) * 2 - c / 4
    assert all(type(x) is float for x in r.values)
    assert r.values == tuple((x + 1) * 2 - x / 4 for x in [1.0, 2.0, 3.0])
    assert (c @ c) == 14.0 and c.sum() == 6.0
    a = cp.value(2.0)
    m = cp.vector([a, 1.0, 0])
    r2 = m * 3
    assert type(r2.values[0]) is cp.value and r2.values[1:] == (3.0, 0)
    # a constant 0 drops its term, a constant 1 keeps the other factor itself
    assert cp.vector([0, 0, 1]) @ cp.vector([a, a, a]) is a
    assert cp.vector([0, 0.0]) @ cp.vector([a, cp.value(1)]) == 0.0


def test_dot_and_sum_pairwise_bit_exact() -> None:
    p = Prog()
    cases = []
    for n in [1, 2, 3, 4, 5, 7, 8, 9, 16, 31, 33, 100]:
        x = F32(RNG.uniform(-10, 10, n))
        y = F32(RNG.uniform(-10, 10, n))
        vx, vy = values(x), values(y)
        cases.append((p.add(vx @ vy), pairwise(x * y), np.dot(x.astype(np.float64), y)))
        cases.append((p.add(vx.dot(vy)), pairwise(x * y), None))
        cases.append((p.add(vx.sum()), pairwise(x), np.sum(x.astype(np.float64))))
        cases.append((p.add(vx.magnitude()), np.sqrt(pairwise(x * x)), None))
    p.build()
    for i, ref, ref64 in cases:
        got = p.get(i)
        assert_bits(got, ref)
        if ref64 is not None:
            assert math.isclose(got, ref64, rel_tol=1e-5, abs_tol=1e-4)


def test_sum_with_constant_terms() -> None:
    a, b = cp.value(1.5), cp.value(2.25)
    v = cp.vector([a, 1.0, b, 0.5, 3])
    p = Prog()
    i = p.add(v.sum())
    j = p.add(cp.vector([cp.value(1), 2, cp.value(3)]).sum())
    k = p.add(cp.vector([cp.value(1), 2, 0.0]).sum())  # a float constant makes it float
    p.build()
    assert p.get(i) == float(F32(1.5) + F32(2.25) + F32(1.0 + 0.5 + 3))
    assert p.get(j) == 6 and type(p.get(j)) is int
    assert p.get(k) == 3.0 and type(p.get(k)) is float
    assert cp.vector([]).sum() == 0


def test_shape_mismatch_errors() -> None:
    u, w = cp.vector([1.0, 2.0, 3.0]), cp.vector([1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match=r"cannot add vectors of shapes \(3,\) and \(4,\)"):
        u + w
    with pytest.raises(ValueError, match=r"cannot subtract vectors of shapes \(4,\) and \(3,\)"):
        w - u
    with pytest.raises(ValueError, match=r"cannot compare vectors of shapes \(3,\) and \(4,\)"):
        _ = u < w
    with pytest.raises(ValueError, match=r"dot product of vectors of shapes \(3,\) and \(4,\)"):
        u @ w
    with pytest.raises(ValueError, match=r"cross product of vectors of shapes \(4,\) and \(3,\)"):
        w.cross(u)
    with pytest.raises(ValueError, match=r"cannot multiply vectors of shapes \(3,\) and \(2,\)"):
        u * [1.0, 2.0]


def test_type_errors() -> None:
    v = cp.vector([1.0, 2.0])
    with pytest.raises(TypeError):
        v + "ab"  # type: ignore[operator]
    with pytest.raises(TypeError):
        v * None  # type: ignore[operator]
    with pytest.raises(TypeError, match="must be copapy values or numbers, not str"):
        v + ["a", "b"]  # type: ignore[operator]
    with pytest.raises(TypeError, match="holds traced values"):
        np.asarray(cp.vector([cp.value(1.0)]))
    assert np.asarray(v).tolist() == [1.0, 2.0]
    assert v.tolist() == [1.0, 2.0]


def _rodrigues32(v: Any, axis: Any, c: Any, s: Any) -> Any:
    mag = np.sqrt(pairwise(axis * axis)) + F32(1e-20)
    k = axis / mag
    kxv = np.array([k[1] * v[2] - k[2] * v[1], k[2] * v[0] - k[0] * v[2], k[0] * v[1] - k[1] * v[0]], F32)
    kv = pairwise(k * v)
    return (v * c + kxv * s) + (k * kv) * (F32(1) - c)


def test_geometry_helpers_against_numpy() -> None:
    x = F32([1.5, -2.0, 0.75])
    y = F32([0.25, 3.0, -1.0])
    vx, vy = values(x), values(y)
    ang = cp.value(0.7)
    p = Prog()
    i_cross = p.add(vx.cross(vy))
    i_norm = p.add(vx.normalize())
    i_dist = p.add(cp.distance(vx, vy))
    i_sp = p.add(cp.scalar_projection(vx, vy))
    i_vp = p.add(cp.vector_projection(vx, vy))
    i_ang = p.add(cp.angle_between(vx, vy))
    i_rot = p.add(cp.rotate_vector(vx, vy, ang))
    i_c, i_s = p.add(cp.cos(ang)), p.add(cp.sin(ang))
    i_nm = p.add(vx.norm())
    p.build()
    eps = F32(1e-20)
    assert_bits(p.get(i_cross), np.cross(x, y))
    mag_x, mag_y = np.sqrt(pairwise(x * x)), np.sqrt(pairwise(y * y))
    assert_bits(p.get(i_norm), x / (mag_x + eps))
    assert_bits(p.get(i_dist), np.sqrt(pairwise((x - y) * (x - y))))
    dot = pairwise(x * y)
    assert_bits(p.get(i_sp), dot / (mag_y + eps))
    assert_bits(p.get(i_vp), y * (dot / (mag_y * mag_y + eps)))
    assert math.isclose(p.get(i_ang), math.acos(float(dot / (mag_x * mag_y + eps))), rel_tol=1e-6)
    c, s = F32(p.get(i_c)), F32(p.get(i_s))
    assert_bits(p.get(i_rot), _rodrigues32(x, y, c, s))
    assert_bits(p.get(i_nm), mag_x)
    # the zero vector normalizes to zero (the 1e-20 guard), no NaN
    assert cp.vector([0.0, 0.0]).normalize().tolist() == [0.0, 0.0]


def test_map_and_math_functions() -> None:
    x = F32([0.25, 1.5, 4.0])
    vx = values(x)
    p = Prog()
    i_map = p.add(vx.map(cp.sqrt))
    i_sqrt = p.add(cp.sqrt(vx))
    i_sin = p.add(cp.sin(vx))
    p.build()
    assert_bits(p.get(i_map), np.sqrt(x))
    assert_bits(p.get(i_sqrt), np.sqrt(x))
    assert np.allclose(p.get(i_sin), np.sin(x.astype(np.float64)), rtol=1e-6)
    assert isinstance(cp.sqrt(vx), cp.vector)
    assert cp.vector([4.0, 9.0]).map(math.sqrt).values == (2.0, 3.0)


def test_homogenize() -> None:
    a = cp.value(1.0)
    h = cp.vector([a, 2.0]).homogenize()
    assert h.values[0] is a and isinstance(h.values[1], cp.value)
    c = cp.vector([1.0, 2.0])
    assert c.homogenize() is c


def test_vector_with_tensor_and_matrix() -> None:
    v = values(F32([1.0, 2.0, 3.0]))
    m = cp.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    r = v + m
    assert isinstance(r, cp.tensor) and r.shape == (2, 3)
    r2 = m.T.__rmatmul__(v)
    assert isinstance(r2, cp.tensor) and r2.shape == (2,)
    r3 = v @ m.T
    assert isinstance(r3, cp.tensor) and r3.shape == (2,)


def test_target_read_and_write_vector() -> None:
    a, b, c = cp.value(1.0), cp.value(2.0), cp.value(3.0)
    v = cp.vector([a, b, c])
    w = v * 2.0 + cp.vector([0.5, 0, 1])
    tg = cp.Target()
    tg.compile(w, v)
    tg.run()
    got = tg.read_value(w)
    assert isinstance(got, cp.vector) and got.tolist() == [2.5, 4.0, 7.0]
    tg.write_value(v, [10.0, 20.0, 30.0])
    tg.run()
    assert tg.read_value(w).tolist() == [20.5, 40.0, 61.0]
    tg.write_value(v, np.array([1.0, 1.0, 1.0], dtype=F32))
    tg.run()
    assert list(tg.read_value(w)) == [2.5, 2.0, 3.0]
    with pytest.raises(ValueError, match=r"cannot write data of shape \(2,\) to a vector of shape \(3,\)"):
        tg.write_value(v, [1.0, 2.0])
    with pytest.raises(TypeError, match="constant"):
        tg.write_value(cp.vector([a, 1.0]), [1.0, 2.0])
