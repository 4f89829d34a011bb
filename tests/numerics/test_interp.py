"""Copapy's newest numerics: ``cp.interp`` (numpy.interp), ``cp.lerp``, ``cp.ravel``,
``cp.filters.convolve`` (numpy.convolve) and ``cp.filters.gaussian_filter``
(scipy.ndimage.gaussian_filter), with ``cp.grad`` through them.

References: NumPy float32 loops in the documented order (same bits), NumPy / SciPy in
float64 (within the float32 tolerance stated per case), finite differences for gradients.
"""

from __future__ import annotations

from typing import Any

import copapy as cp
import numpy as np
import pytest
import scipy.ndimage as ndi

f32 = np.float32
RNG = np.random.default_rng(3)


def compiled(outputs: Any, inputs: list[Any], data: list[float]) -> list[float]:
    tg = cp.Target()
    tg.compile(outputs)
    tg.write_value(inputs, data)
    tg.run()
    return [float(v) for v in np.ravel(np.asarray(tg.read_value(outputs), dtype=object))]


def interp_reference32(x: float, xp: list[float], fp: list[float]) -> float:
    """The documented order in float32: clamp, then fp[j] + slope[j] * (xc - xp[j])."""
    x32 = f32(x)
    if x32 != x32:
        return float("nan")
    xc = min(max(x32, f32(xp[0])), f32(xp[-1]))
    if xc >= f32(xp[-1]):
        return float(f32(fp[-1]))
    j = max(k for k in range(len(xp) - 1) if xc >= f32(xp[k]))
    slope = f32((fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]))  # folded in float64, rounded once
    return float(f32(f32(fp[j]) + f32(slope * f32(xc - f32(xp[j])))))


XP = [-2.0, -0.5, 0.0, 1.25, 3.0, 7.5]
FP = [4.0, -1.0, 0.5, 0.5, 2.0, -3.0]
XS = [-5.0, -2.0, -1.3, -0.5, -0.1, 0.0, 0.7, 1.25, 2.2, 3.0, 7.4999, 7.5, 9.0, float("nan")]


def test_interp_matches_numpy() -> None:
    x = [cp.value(0.0) for _ in XS]
    got = compiled(cp.interp(cp.vector(x), XP, FP), x, XS)
    for xv, g in zip(XS, got, strict=True):
        want = interp_reference32(xv, XP, FP)
        assert (np.isnan(g) and np.isnan(want)) or g == want, xv
        ref = np.interp(xv, XP, FP)  # float64
        # float32 against float64: within 2 ulp of values of magnitude <= 4 (exact at the points)
        assert (np.isnan(g) and np.isnan(ref)) or abs(g - ref) <= 2 * np.spacing(f32(4.0)), xv
    for xv, g in zip(XS, got, strict=True):
        if xv in XP:
            assert g == FP[XP.index(xv)]


def test_interp_methods_tables_as_values_and_plain_numbers() -> None:
    x = cp.value(0.0)
    table = [cp.value(v) for v in FP]  # a run-time table
    outs = [cp.interp(x, XP, FP, "previous"), cp.interp(x, XP, FP, "nearest"), cp.interp(x, XP, table)]
    for xv in (-3.0, -0.3, 0.6, 1.0, 5.25, 8.0):
        tg = cp.Target()
        tg.compile(outs)
        tg.write_value([x, *table], [xv, *FP])
        tg.run()
        prev, near, lin = tg.read_value(outs)
        j = max([k for k in range(len(XP)) if XP[k] <= xv], default=0)
        assert prev == FP[j]
        if XP[0] < xv < XP[-1]:
            assert near == (FP[j] if xv - XP[j] < XP[j + 1] - xv else FP[j + 1])
        assert lin == interp_reference32(xv, XP, FP)
        assert cp.interp(xv, XP, FP) == pytest.approx(np.interp(xv, XP, FP), rel=1e-12)


def test_interp_grad_is_the_slope() -> None:
    x = cp.value(0.0)
    y = cp.interp(x, XP, FP)
    dy = cp.grad(y, x)
    for xv in (-1.0, 0.6, 2.0, 5.0):
        got = compiled([y, dy], [x], [xv])
        j = max(k for k in range(len(XP)) if XP[k] <= xv)
        assert got[1] == pytest.approx((FP[j + 1] - FP[j]) / (XP[j + 1] - XP[j]), rel=1e-6)


def test_interp_bad_input() -> None:
    with pytest.raises(ValueError, match="strictly increasing"):
        cp.interp(cp.value(0.0), [0.0, 0.0, 1.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="same number of elements, got 2 and 3"):
        cp.interp(cp.value(0.0), [0.0, 1.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="unknown method"):
        cp.interp(cp.value(0.0), [0.0, 1.0], [1.0, 2.0], "cubic")


def test_lerp_both_forms() -> None:
    t = cp.value(0.0)
    a, b = cp.value(0.0), cp.value(0.0)
    table = [1.0, 5.0, -2.0]
    for tv in (-1.0, 0.25, 1.5, 2.0, 3.0):
        got = compiled([cp.lerp(table, t), cp.lerp(a, b, t)], [t, a, b], [tv, 2.0, 6.0])
        assert got[0] == interp_reference32(tv, [0.0, 1.0, 2.0], table)
        assert got[1] == float(f32(2.0) + f32(f32(4.0) * f32(tv)))


def test_ravel_keeps_the_container_kind() -> None:
    assert cp.ravel([[1, 2], [3, 4]]) == [1, 2, 3, 4]
    t = cp.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert cp.ravel(t).shape == (4,) and list(cp.ravel(t).values) == [1.0, 2.0, 3.0, 4.0]
    arr = cp.array([[1.0, 2.0], [3.0, 4.0]])
    assert cp.ravel(arr).shape == (4,)
    assert cp.ravel(arr).to_numpy(_compiled_target(cp.ravel(arr))).tolist() == [1.0, 2.0, 3.0, 4.0]


def _compiled_target(x: Any) -> Any:
    tg = cp.Target()
    tg.compile(x)
    tg.run()
    return tg


def convolve_reference32(a: np.ndarray, v: np.ndarray, mode: str) -> list[float]:
    if len(v) > len(a):
        a, v = v, a
    n, m = len(a), len(v)
    full = []
    for k in range(n + m - 1):
        acc = None
        for i in range(max(0, k - m + 1), min(n, k + 1)):
            term = f32(f32(a[i]) * f32(v[k - i]))
            acc = term if acc is None else f32(acc + term)
        full.append(float(acc))
    start, length = {"full": (0, n + m - 1), "same": ((m - 1) // 2, n), "valid": (m - 1, n - m + 1)}[mode]
    return full[start:start + length]


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("n,m", [(7, 3), (4, 4), (3, 6), (1, 1), (9, 2)])
def test_convolve_matches_numpy(mode: str, n: int, m: int) -> None:
    a, v = RNG.normal(size=n).astype(f32), RNG.normal(size=m).astype(f32)
    xa = [cp.value(0.0) for _ in range(n)]
    out = cp.filters.convolve(cp.vector(xa), v, mode)
    got = compiled(out, xa, a.tolist())
    assert got == convolve_reference32(a, v, mode)
    # NumPy in float64: at most min(n, m) products of O(1) values, each rounded in float32
    assert np.max(np.abs(np.array(got) - np.convolve(a.astype(np.float64), v, mode))) < 1e-5 * min(n, m)


def test_convolve_grad_and_bad_input() -> None:
    xs = [cp.value(0.0) for _ in range(3)]
    y = cp.filters.convolve(xs, [1.0, -2.0], "valid")
    dy = cp.grad(y[0], xs)
    assert compiled([y[0], *dy], xs, [1.0, 2.0, 3.0]) == [0.0, -2.0, 1.0, 0.0]  # 2*1 - 2*1 = 0
    with pytest.raises(ValueError, match="mode must be"):
        cp.filters.convolve(xs, [1.0], "circular")
    with pytest.raises(ValueError, match=r"1-D inputs, got a of shape \(1, 3\)"):
        cp.filters.convolve([xs], [1.0])
    with pytest.raises(ValueError, match="empty input"):
        cp.filters.convolve(xs, [])


def gaussian_reference32(img: np.ndarray, sigma: list[float], mode: str, truncate: float = 4.0) -> np.ndarray:
    out = img.astype(f32)
    for axis, sd in enumerate(sigma):
        if sd == 0:
            continue
        r = int(truncate * sd + 0.5)
        w = np.exp(-0.5 * np.arange(-r, r + 1) ** 2 / sd**2)
        w = (w / w.sum()).astype(f32)
        pad_mode = {"reflect": "symmetric", "mirror": "reflect", "nearest": "edge", "wrap": "wrap",
                    "constant": "constant"}[mode]
        pad = [(0, 0)] * out.ndim
        pad[axis] = (r, r)
        padded = np.pad(out, pad, mode=pad_mode)
        acc = None
        for k in range(2 * r + 1):
            sl = [slice(None)] * out.ndim
            sl[axis] = slice(k, k + out.shape[axis])
            term = (w[k] * padded[tuple(sl)]).astype(f32)
            acc = term if acc is None else (acc + term).astype(f32)
        out = acc
    return out


@pytest.mark.parametrize("mode", ["reflect", "mirror", "nearest", "wrap", "constant"])
def test_gaussian_filter_matches_scipy_ndimage(mode: str) -> None:
    img = RNG.normal(size=(4, 6)).astype(f32)
    xs = [[cp.value(0.0) for _ in range(6)] for _ in range(4)]
    sigma = [0.8, 1.3]
    out = cp.filters.gaussian_filter(cp.tensor(xs), sigma, mode=mode)
    got = np.array(compiled(out, [e for row in xs for e in row], img.ravel().tolist())).reshape(4, 6)
    assert got.tolist() == gaussian_reference32(img, sigma, mode).tolist()
    ref = ndi.gaussian_filter(img.astype(np.float64), sigma, mode=mode)
    # float32 weights and sums against float64: measured < 3e-7 for O(1) data
    assert np.max(np.abs(got - ref)) < 2e-6


def test_gaussian_filter_1d_truncate_and_zero_sigma() -> None:
    sig = RNG.normal(size=11).astype(f32)
    xs = [cp.value(0.0) for _ in range(11)]
    out = cp.filters.gaussian_filter(cp.vector(xs), 2.0, truncate=2.0)
    got = compiled(out, xs, sig.tolist())
    ref = ndi.gaussian_filter(sig.astype(np.float64), 2.0, truncate=2.0)
    assert np.max(np.abs(np.array(got) - ref)) < 2e-6
    same = cp.filters.gaussian_filter(cp.vector(xs), 0.0)
    assert compiled(same, xs, sig.tolist()) == sig.tolist()
    with pytest.raises(ValueError, match="sigma must be finite numbers >= 0"):
        cp.filters.gaussian_filter(xs, -1.0)
    with pytest.raises(ValueError, match=r"one entry per axis \(1\)"):
        cp.filters.gaussian_filter(xs, [1.0, 1.0])
    with pytest.raises(ValueError, match="mode must be one of"):
        cp.filters.gaussian_filter(xs, 1.0, mode="grid-wrap")


def test_gaussian_filter_grad_is_the_filter_of_an_impulse() -> None:
    xs = [cp.value(0.0) for _ in range(7)]
    out = cp.filters.gaussian_filter(cp.vector(xs), 1.2, mode="mirror")
    dy = cp.grad(out[3], xs)
    got = compiled([out[3], *dy], xs, [0.5] * 7)[1:]
    for j in range(7):
        impulse = np.zeros(7)
        impulse[j] = 1.0
        # d out[3] / d x[j] = out[3] of the filtered impulse at j (float32 weights)
        assert got[j] == pytest.approx(ndi.gaussian_filter(impulse, 1.2, mode="mirror")[3], abs=1e-7)


def test_interp_nan_gives_nan_with_every_method() -> None:
    x = cp.value(0.0)
    outs = [cp.interp(x, XP, FP, m) for m in ("linear", "previous", "nearest")]
    got = compiled(outs, [x], [float("nan")])
    assert all(np.isnan(g) for g in got)
    assert all(np.isnan(cp.interp(float("nan"), XP, FP, m)) for m in ("linear", "previous", "nearest"))
