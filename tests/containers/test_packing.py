"""Packing: vectors of more than 64 traced values compute through array stencils, with
the same bits as element-wise code (``packed=False``) and as NumPy float32 in the
documented summation order; code size stops growing with the length."""

from __future__ import annotations

from typing import Any

import copapy as cp
import numpy as np
import refsem as R
from helpers import F32, floats, ordered_sum, run


def _vectors(n: int, seed: int, packed: bool | None) -> tuple[Any, Any, list[float], list[float]]:
    xs, ys = floats(n, seed), floats(n, seed + 1)
    a = cp.vector([cp.value(x) for x in xs], packed=packed)
    b = cp.vector([cp.value(y) for y in ys], packed=packed)
    return a, b, xs, ys


def test_packed_and_unpacked_vectors_give_numpys_bits() -> None:
    n = 100
    outs: dict[bool | None, list[Any]] = {}
    for packed in (None, False):
        a, b, xs, ys = _vectors(n, 80, packed)
        s = cp.value(F32(1.25).item())
        outs[packed] = [a + b, a * s, 3.0 - a, a / b, a < b, a @ b, (a - 0.5) @ b, a.sum()]
    tg = run(outs[None], outs[False])
    x32, y32 = np.array(xs, F32), np.array(ys, F32)
    with np.errstate(all="ignore"):
        want_vec = [x32 + y32, x32 * F32(1.25), F32(3) - x32, x32 / y32, x32 < y32]
    want_dot = [ordered_sum((x32 * y32).astype(F32)),
                ordered_sum(((x32 - F32(0.5)).astype(F32) * y32).astype(F32)),
                ordered_sum(x32)]
    for packed in (None, False):
        got = [tg.read_value(v) for v in outs[packed]]
        for g, w in zip(got[:5], want_vec, strict=True):
            assert [R.f32_bits(x) for x in g.values] == [R.f32_bits(x) for x in w.astype(F32)]
        for g, w in zip(got[5:], want_dot, strict=True):
            assert R.same_float(g, w), (packed, g, w)


def test_readme_benchmark_on_vectors_is_small_and_flat_in_n() -> None:
    sizes = []
    for n in (100, 600, 2000):
        v1 = cp.vector(cp.value(float(k) / n) for k in range(n))
        v2 = cp.vector(cp.value(1.0 - float(k) / n) for k in range(n))
        r = sum((v1 + i) @ v2 for i in range(10))
        tg = run(r)
        sizes.append(tg.stats()[1])
        want: Any = 0
        x32 = (np.arange(n) / n).astype(F32)
        y32 = (1.0 - np.arange(n) / n).astype(F32)
        for i in range(10):
            want = F32(want + ordered_sum(((x32 + F32(i)) * y32).astype(F32)))
        assert R.same_float(tg.read_value(r), want)
    assert sizes[0] == sizes[1] == sizes[2] <= 4096


def test_inputs_of_a_packed_vector_stay_writable() -> None:
    xs = [cp.value(float(k)) for k in range(80)]
    v = cp.vector(xs)
    s = (v * 2.0).sum()
    tg = run(s)
    assert tg.read_value(s) == float(ordered_sum(np.arange(80, dtype=F32) * F32(2)))
    tg.write_value(xs[7], 100.0)
    tg.run()
    ref = np.arange(80, dtype=F32)
    ref[7] = 100
    assert tg.read_value(s) == float(ordered_sum(ref * F32(2)))
    assert tg.read_value(xs[7]) == 100.0


def test_runtime_index_into_a_vector_is_a_clamped_lookup() -> None:
    table = cp.vector([0.5, 1.5, 2.5, 3.5])  # numbers: a constant lookup table
    mixed = cp.vector([cp.value(10), 20, 30])
    i = cp.value(0)
    a, b = table[i], mixed[i]
    tg = run(a, b)
    for k in (-9, -4, -1, 0, 2, 3, 4, 50):
        tg.write_value(i, k)
        tg.run()
        assert tg.read_value(a) == [0.5, 1.5, 2.5, 3.5][min(max(k + 4 if k < 0 else k, 0), 3)]
        assert tg.read_value(b) == [10, 20, 30][min(max(k + 3 if k < 0 else k, 0), 2)]


def test_mixed_and_constant_vectors_are_not_packed_and_stay_right() -> None:
    vals: list[Any] = [cp.value(float(k)) for k in range(70)] + [cp.value(1)] + [2.0]
    v = cp.vector(vals)
    r = v * 3
    c = cp.vector([float(k) for k in range(100)]) * 2  # numbers: computed while tracing
    assert c.values[99] == 198.0
    tg = run(r)
    got = list(tg.read_value(r).values)
    assert got[:70] == [float(3 * k) for k in range(70)] and got[70:] == [3, 6.0]


def test_packed_tensors_give_numpys_bits() -> None:
    rng = np.random.default_rng(140)
    am = rng.standard_normal((9, 12)).astype(F32)
    bm = rng.standard_normal((12, 3)).astype(F32)
    v = rng.standard_normal(12).astype(F32)
    ta = cp.tensor([[cp.value(float(x)) for x in row] for row in am])  # 108 values: packed
    tb = cp.tensor([[cp.value(float(x)) for x in row] for row in bm])
    tv = cp.vector([cp.value(float(x)) for x in v])
    mm, mv, el, s = ta @ tb, ta @ tv, ta * 2.0 - ta, ta.sum()
    tg = run(mm, mv, el, s)

    def ref(p: Any, q: Any) -> Any:
        out = np.zeros((p.shape[0], q.shape[1]), F32)
        for i in range(p.shape[0]):
            for j in range(q.shape[1]):
                out[i, j] = ordered_sum((p[i, :] * q[:, j]).astype(F32))
        return out

    got_mm = np.asarray(tg.read_value(mm), dtype=F32)
    assert np.array_equal(got_mm.view(np.uint32), ref(am, bm).view(np.uint32))
    got_mv = np.asarray(tg.read_value(mv), dtype=F32)
    assert np.array_equal(got_mv.view(np.uint32), ref(am, v[:, None])[:, 0].view(np.uint32))
    assert np.array_equal(np.asarray(tg.read_value(el), dtype=F32), (am * F32(2) - am).astype(F32))
    assert R.same_float(tg.read_value(s), ordered_sum(am.reshape(-1)))
    assert tg.stats()[0] < 20  # array stencils, not one step per element
