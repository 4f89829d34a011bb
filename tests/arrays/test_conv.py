"""cp.nn convolutions and pooling layers (Copapy's newest API) against NumPy float32.

The reference below computes each output in the documented order (python/copapy/_conv.py:
bias first, then the taps in row-major order of (channel, ky, kx), padded taps skipped;
maximum from -inf; the average's sum from +0.0 divided by the window size), one float32
rounding per operation, so results must match bit for bit. The reference's indexing is
checked on its own against float64 sliding windows and ``np.correlate``.
"""

from __future__ import annotations

import math
from typing import Any

import copapy as cp
import numpy as np
import pytest
from helpers import F32
from numpy.lib.stride_tricks import sliding_window_view


def pair(v: Any) -> tuple[int, int]:
    return (v, v) if isinstance(v, int) else (v[0], v[1])


def out_size(size: int, k: int, s: int, p: int, d: int) -> int:
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def ref_conv2d(x: Any, w: Any, b: Any, stride: Any = 1, padding: Any = 0, dilation: Any = 1) -> Any:
    """float32 reference for an (n, ci, h, w) input, in the documented order."""
    (sh, sw), (ph, pw), (dh, dw) = pair(stride), pair(padding), pair(dilation)
    n, ci, h, wd = x.shape
    co, _, kh, kw = w.shape
    oh, ow = out_size(h, kh, sh, ph, dh), out_size(wd, kw, sw, pw, dw)
    bias = np.zeros(co, F32) if b is None else b
    out = np.empty((n, co, oh, ow), F32)
    oy = np.arange(oh)[:, None]
    ox = np.arange(ow)[None, :]
    for c in range(co):
        acc = np.full((n, oh, ow), bias[c], F32)
        for q in range(ci):
            for ky in range(kh):
                for kx in range(kw):
                    iy = oy * sh - ph + ky * dh
                    ix = ox * sw - pw + kx * dw
                    inside = (iy >= 0) & (iy < h) & (ix >= 0) & (ix < wd)
                    xv = x[:, q, np.clip(iy, 0, h - 1), np.clip(ix, 0, wd - 1)]
                    acc = np.where(inside, acc + w[c, q, ky, kx] * xv, acc).astype(F32)
        out[:, c] = acc
    return out


def ref_pool2d(x: Any, which: str, kernel: Any, stride: Any, padding: Any) -> Any:
    """float32 reference for an (nc, h, w) input."""
    (kh, kw), (sh, sw), (ph, pw) = pair(kernel), pair(stride), pair(padding)
    nc, h, wd = x.shape
    oh, ow = out_size(h, kh, sh, ph, 1), out_size(wd, kw, sw, pw, 1)
    oy = np.arange(oh)[:, None]
    ox = np.arange(ow)[None, :]
    acc = np.full((nc, oh, ow), -np.inf if which == "max" else 0.0, F32)
    for ky in range(kh):
        for kx in range(kw):
            iy, ix = oy * sh - ph + ky, ox * sw - pw + kx
            inside = (iy >= 0) & (iy < h) & (ix >= 0) & (ix < wd)
            xv = x[:, np.clip(iy, 0, h - 1), np.clip(ix, 0, wd - 1)]
            new = np.maximum(acc, xv) if which == "max" else acc + xv
            acc = np.where(inside, new, acc).astype(F32)
    return acc if which == "max" else (acc / F32(kh * kw)).astype(F32)


def evaluate(*exprs: Any) -> list[Any]:
    tg = cp.Target()
    tg.compile(*exprs)
    tg.run()
    return [np.asarray(tg.read_value(e), dtype=F32) for e in exprs]


def assert_bits(got: Any, want: Any) -> None:
    assert got.shape == want.shape
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    g, w = got[~nan].view(np.uint32), want[~nan].view(np.uint32)
    bad = np.nonzero(g != w)[0]
    assert bad.size == 0, f"{bad.size} outputs differ, first {got[~nan][bad[0]]!r} != {want[~nan][bad[0]]!r}"


def data(shape: tuple[int, ...], seed: int, scale: float = 1.0) -> Any:
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(F32)


# ------------------------------------------------------------------ the reference itself


def test_reference_is_cross_correlation_with_zero_padding() -> None:
    x, w, b = data((2, 3, 9, 8), 1), data((4, 3, 3, 2), 2), data((4,), 3)
    got = ref_conv2d(x, w, b, stride=(2, 1), padding=(1, 2), dilation=(2, 1))
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (2, 2)))
    win = sliding_window_view(xp, (5, 2), axis=(2, 3))[:, :, ::2, ::1, ::2, :]
    want = np.einsum("nqyxab,cqab->ncyx", win, w.astype(np.float64)) + b[None, :, None, None]
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # one channel, no padding: NumPy's correlate, which is not its convolve
    x1, k = data((1, 1, 1, 20), 4), data((1, 1, 1, 4), 5)
    r = ref_conv2d(x1, k, None)[0, 0, 0]
    np.testing.assert_allclose(r, np.correlate(x1[0, 0, 0], k[0, 0, 0], "valid"), rtol=1e-5, atol=1e-6)
    assert not np.allclose(r, np.convolve(x1[0, 0, 0], k[0, 0, 0], "valid"), rtol=1e-3)


def test_reference_pooling_matches_windows() -> None:
    x = data((3, 7, 9), 6)
    win = sliding_window_view(x, (2, 3), axis=(1, 2))[:, ::2, ::3]
    np.testing.assert_array_equal(ref_pool2d(x, "max", (2, 3), (2, 3), 0), win.max(axis=(3, 4)))
    avg = ref_pool2d(x, "avg", (2, 3), (2, 3), 0)
    np.testing.assert_allclose(avg, win.mean(axis=(3, 4)), rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ conv2d / conv1d

# ci, h, w, co, kh, kw, stride, padding, dilation, bias
CONV2D = [
    (1, 1, 1, 1, 1, 1, 1, 0, 1, False),
    (1, 5, 5, 1, 3, 3, 1, 0, 1, True),
    (3, 8, 20, 4, 3, 3, 1, 1, 1, True),
    (2, 9, 11, 3, 3, 5, 2, (1, 2), 1, True),
    (2, 10, 13, 2, 2, 4, (3, 2), (0, 3), 1, False),
    (2, 12, 17, 2, 3, 3, 1, 2, (2, 3), True),
    (3, 7, 9, 5, 1, 1, 1, 0, 1, True),
    (1, 2, 3, 2, 5, 5, 1, 2, 1, True),  # kernel larger than the unpadded input
    (2, 6, 6, 1, 3, 3, 2, 3, 2, False),  # outputs made of padding only
]


@pytest.mark.parametrize("ci,h,w,co,kh,kw,stride,padding,dilation,bias", CONV2D)
def test_conv2d_bit_exact(ci: int, h: int, w: int, co: int, kh: int, kw: int, stride: Any,
                          padding: Any, dilation: Any, bias: bool) -> None:
    x, wt = data((ci, h, w), ci * h), data((co, ci, kh, kw), kh * kw + 1)
    b = data((co,), co, 3.0) if bias else None
    y = cp.nn.conv2d(cp.array(x), cp.array(wt), None if b is None else cp.array(b), stride, padding, dilation)
    want = ref_conv2d(x[None], wt, b, stride, padding, dilation)[0]
    assert isinstance(y, cp.array) and y.shape == want.shape and y.dtype == "float"
    (got,) = evaluate(y)
    assert_bits(got, want)


def test_conv2d_batch_keywords_and_edge_values() -> None:
    x = data((2, 2, 6, 7), 7, 10.0)
    x[0, 0, 1, 1], x[1, 1, 2, 3], x[0, 1, 0, 0] = np.inf, np.nan, -0.0
    w, b = data((3, 2, 3, 3), 8), data((3,), 9)
    y = cp.nn.conv2d(cp.array(x), weight=cp.array(w), bias=cp.array(b), stride=2, padding=1, dilation=1)
    assert y.shape == (2, 3, 3, 4)
    (got,) = evaluate(y)
    assert_bits(got, ref_conv2d(x, w, b, 2, 1))


# ci, length, co, k, stride, padding, dilation, bias
CONV1D = [
    (1, 1, 1, 1, 1, 0, 1, False),
    (1, 10, 1, 3, 1, 0, 1, True),
    (3, 37, 4, 5, 1, 2, 1, True),
    (2, 30, 3, 4, 3, 1, 1, True),
    (2, 25, 2, 3, 2, 4, 4, False),
]


@pytest.mark.parametrize("ci,length,co,k,stride,padding,dilation,bias", CONV1D)
def test_conv1d_bit_exact(ci: int, length: int, co: int, k: int, stride: int, padding: int,
                          dilation: int, bias: bool) -> None:
    x, w = data((3, ci, length), length), data((co, ci, k), k)
    b = data((co,), 5) if bias else None
    bb = None if b is None else cp.array(b)
    y1 = cp.nn.conv1d(cp.array(x[0]), cp.array(w), bb, stride, padding, dilation)
    yb = cp.nn.conv1d(cp.array(x), cp.array(w), bb, stride=stride, padding=padding, dilation=dilation)
    want = ref_conv2d(x[:, :, None, :], w[:, :, None, :], b, (1, stride), (0, padding), (1, dilation))
    want = want[:, :, 0]
    assert y1.shape == want.shape[1:] and yb.shape == want.shape
    got1, gotb = evaluate(y1, yb)
    assert_bits(got1, want[0])
    assert_bits(gotb, want)


def test_conv_int_nested_and_tensor_inputs() -> None:
    xi = np.arange(2 * 5 * 6, dtype=np.int32).reshape(2, 5, 6) % 7 - 3
    wi = (np.arange(3 * 2 * 2 * 2, dtype=np.int32).reshape(3, 2, 2, 2) % 5) - 2
    want = ref_conv2d(xi[None].astype(F32), wi.astype(F32), None)[0]
    ya = cp.nn.conv2d(cp.array(xi.tolist()), wi.tolist(), [0, 0, 0])
    vals = [[[cp.value(float(v)) for v in row] for row in ch] for ch in xi.tolist()]
    yt = cp.nn.conv2d(cp.tensor(vals), cp.tensor(wi.tolist()))
    assert isinstance(ya, cp.array) and isinstance(yt, cp.tensor)
    assert yt.shape == ya.shape == want.shape
    tg = cp.Target()
    tg.compile(ya, yt)
    tg.run()
    assert_bits(np.asarray(tg.read_value(ya), F32), want)
    assert_bits(np.asarray(tg.read_value(yt), F32), want)


def test_chained_layers_and_rewritten_inputs() -> None:
    x0, w1, b1, w2 = data((1, 8, 8), 10), data((2, 1, 3, 3), 11), data((2,), 12), data((1, 2, 3, 3), 13)
    x, w = cp.array(x0), cp.array(w1)
    y = cp.nn.max_pool2d(cp.nn.relu(cp.nn.conv2d(x, w, cp.array(b1), padding=1)), 2)
    z = cp.nn.conv2d(y, cp.array(w2), stride=2)

    def ref(xv: Any, wv: Any) -> Any:
        h = np.maximum(ref_conv2d(xv[None], wv, b1, 1, 1)[0], F32(0))
        return ref_conv2d(ref_pool2d(h, "max", 2, 2, 0)[None], w2, None, 2)[0]

    tg = cp.Target()
    tg.compile(z)
    tg.run()
    assert_bits(np.asarray(tg.read_value(z), F32), ref(x0, w1))
    x2, w1b = data((1, 8, 8), 14), data((2, 1, 3, 3), 15)
    tg.write_value(x, x2)
    tg.write_value(w, w1b)
    tg.run()
    assert_bits(np.asarray(tg.read_value(z), F32), ref(x2, w1b))


# ------------------------------------------------------------------ pooling


@pytest.mark.parametrize("kernel,stride,padding", [
    (2, None, 0), (3, 1, 1), ((2, 3), (1, 2), (1, 0)), (3, 2, 1), ((1, 4), None, (0, 2))])
def test_pool2d_bit_exact(kernel: Any, stride: Any, padding: Any) -> None:
    x = data((2, 3, 7, 9), 20, 5.0)
    x[0, 1, 2, 2], x[1, 2, 0, 0] = np.nan, -np.inf
    mx = cp.nn.max_pool2d(cp.array(x), kernel, stride, padding)
    av = cp.nn.avg_pool2d(cp.array(x[0]), kernel_size=kernel, stride=stride, padding=padding)
    s = kernel if stride is None else stride
    want_max = ref_pool2d(x.reshape(6, 7, 9), "max", kernel, s, padding)
    want_avg = ref_pool2d(x[0], "avg", kernel, s, padding)
    assert mx.shape == (2, 3, *want_max.shape[1:]) and av.shape == want_avg.shape
    got_max, got_avg = evaluate(mx, av)
    assert_bits(got_max.reshape(want_max.shape), want_max)
    assert_bits(got_avg, want_avg)


@pytest.mark.parametrize("kernel,stride,padding", [(2, None, 0), (3, 1, 1), (4, 3, 2), (1, 1, 0)])
def test_pool1d_bit_exact(kernel: int, stride: Any, padding: int) -> None:
    x = data((2, 3, 11), 21, 3.0)
    s = kernel if stride is None else stride
    mx = cp.nn.max_pool1d(cp.array(x), kernel, stride, padding)
    av = cp.nn.avg_pool1d(cp.array(x[1]), kernel, stride=stride, padding=padding)
    want_max = ref_pool2d(x.reshape(6, 1, 11), "max", (1, kernel), (1, s), (0, padding))[:, 0]
    want_avg = ref_pool2d(x[1][:, None, :], "avg", (1, kernel), (1, s), (0, padding))[:, 0]
    got_max, got_avg = evaluate(mx, av)
    assert_bits(got_max.reshape(want_max.shape), want_max)
    assert_bits(got_avg, want_avg)


def test_global_avg_pool2d() -> None:
    x = data((2, 3, 4, 5), 22)
    g3, g4 = cp.nn.global_avg_pool2d(cp.array(x[0])), cp.nn.global_avg_pool2d(cp.array(x))
    assert g3.shape == (3,) and g4.shape == (2, 3)
    got3, got4 = evaluate(g3, g4)
    want = ref_pool2d(x.reshape(6, 4, 5), "avg", (4, 5), (4, 5), 0).reshape(2, 3)
    assert_bits(got4, want)
    assert_bits(got3, want[0])
    np.testing.assert_allclose(got4, x.mean(axis=(2, 3)), rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ code size, gradients, errors


def test_code_size_does_not_depend_on_the_sizes() -> None:
    sizes = []
    for n in (8, 40):
        y = cp.nn.conv2d(cp.array(data((2, n, n), 1)), cp.array(data((3, 2, 3, 3), 2)), padding=1)
        p = cp.nn.avg_pool2d(cp.nn.max_pool2d(y, 2), 2)
        tg = cp.Target()
        tg.compile(p)
        sizes.append(tg.stats()[1])
    assert sizes[0] == sizes[1]


def finite_differences(f: Any, at: Any) -> Any:
    """Central differences of a function that is linear in ``at`` (float64, step 1: exact
    up to the rounding of the float64 sums)."""
    out = np.zeros(at.shape)
    for i in np.ndindex(at.shape):
        a = at.astype(np.float64)
        a[i] += 0.5
        plus = f(a)
        a[i] -= 1.0
        out[i] = plus - f(a)
    return out


# x shape, w shape, stride, padding, dilation
GRAD_CASES = [
    ((2, 2, 7, 6), (3, 2, 3, 2), (2, 1), (1, 1), (1, 2)),
    ((1, 1, 5, 5), (2, 1, 2, 2), 3, 3, 1),  # padding beyond the kernel, stride beyond it
    ((1, 3, 6, 9), (1, 3, 1, 4), 1, (0, 2), (1, 2)),
    ((2, 1, 4, 4), (1, 1, 4, 4), 1, 0, 1),  # one output per image
]


@pytest.mark.parametrize("xs,ws,stride,padding,dilation", GRAD_CASES)
def test_grad_through_conv2d_matches_finite_differences(xs: Any, ws: Any, stride: Any, padding: Any,
                                                        dilation: Any) -> None:
    x, w, b = data(xs, 30), data(ws, 31), data((ws[0],), 32)
    X, W, B = cp.array(x), cp.array(w), cp.array(b)
    y = cp.nn.conv2d(X, W, B, stride, padding, dilation)
    r = data(y.shape, 33)
    loss = (y * cp.array(r)).sum()
    grads = [cp.grad(loss, v) for v in (X, W, B)]
    assert all(isinstance(g, cp.array) for g in grads)
    tg = cp.Target()
    tg.compile(loss, *grads)
    tg.run()
    got = [np.asarray(tg.read_value(g), np.float64) for g in grads]

    def loss64(xv: Any, wv: Any, bv: Any) -> float:
        return float((ref_conv2d(xv, wv, bv, stride, padding, dilation).astype(np.float64) * r).sum())

    want = [finite_differences(lambda a: loss64(a, w, b), x),
            finite_differences(lambda a: loss64(x, a, b), w),
            finite_differences(lambda a: loss64(x, w, a), b)]
    for g, fd in zip(got, want, strict=True):
        assert g.shape == fd.shape
        np.testing.assert_allclose(g, fd, rtol=1e-4, atol=1e-4)


def test_grad_through_conv1d_and_avg_pool_matches_finite_differences() -> None:
    x, w = data((2, 13), 40), data((3, 2, 3), 41)
    X, W = cp.array(x), cp.array(w)
    y = cp.nn.avg_pool1d(cp.nn.conv1d(X, W, stride=2, padding=2), 3, stride=2, padding=1)
    r = data(y.shape, 42)
    loss = (y * cp.array(r)).sum()
    gx, gw = cp.grad(loss, X), cp.grad(loss, W)
    tg = cp.Target()
    tg.compile(gx, gw)
    tg.run()

    def loss64(xv: Any, wv: Any) -> float:
        c = ref_conv2d(xv[None, :, None, :], wv[:, :, None, :], None, (1, 2), (0, 2), 1)[0]
        p = ref_pool2d(c.astype(np.float64), "avg", (1, 3), (1, 2), (0, 1))[:, 0]
        return float((p * r).sum())

    np.testing.assert_allclose(np.asarray(tg.read_value(gx)), finite_differences(lambda a: loss64(a, w), x),
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(tg.read_value(gw)), finite_differences(lambda a: loss64(x, a), w),
                               rtol=1e-4, atol=1e-4)


def ref_maxpool_grad(x: Any, r: Any, kernel: Any, stride: Any, padding: Any) -> Any:
    """NumPy reference: each window's weight r goes to the last of its taps (row-major)
    that equals the window's maximum, or is NaN when the maximum is NaN."""
    (kh, kw), (sh, sw), (ph, pw) = pair(kernel), pair(stride), pair(padding)
    nc, h, wd = x.shape
    out = np.zeros(x.shape, np.float64)
    for p in range(nc):
        for oy in range(r.shape[1]):
            for ox in range(r.shape[2]):
                taps = [(oy * sh - ph + ky, ox * sw - pw + kx) for ky in range(kh) for kx in range(kw)]
                taps = [(i, j) for i, j in taps if 0 <= i < h and 0 <= j < wd]
                m = np.max(x[p, [i for i, _ in taps], [j for _, j in taps]])
                vals = [x[p, i, j] for i, j in taps]
                hits = [t for t, v in zip(taps, vals, strict=True) if v == m or (np.isnan(m) and np.isnan(v))]
                out[p, hits[-1][0], hits[-1][1]] += r[p, oy, ox]
    return out


@pytest.mark.parametrize("kernel,stride,padding",
                         [(2, None, 0), (3, 1, 1), ((2, 3), (1, 2), (1, 1)), (3, 2, 1)])
def test_grad_through_max_pooling_goes_to_the_last_maximum(kernel: Any, stride: Any, padding: Any) -> None:
    x = np.round(data((2, 6, 7), 50, 2.0))  # small integers: many ties
    x[0, 0, 0], x[1, 2, 3], x[1, 5, 6] = np.nan, -np.inf, -0.0
    X = cp.array(x)
    y = cp.nn.max_pool2d(X, kernel, stride, padding)
    r = data(y.shape, 51)
    gx = cp.grad((y * cp.array(r)).sum(), X)
    (got,) = evaluate(gx)
    want = ref_maxpool_grad(x, r, kernel, kernel if stride is None else stride, padding)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_grad_through_max_pool1d_matches_finite_differences() -> None:
    x = data((3, 12), 52)  # distinct values: the maximum is locally linear
    X = cp.array(x)
    y = cp.nn.max_pool1d(X, 3, stride=2, padding=1)
    r = data(y.shape, 53)
    gx = cp.grad((y * cp.array(r)).sum(), X)
    (got,) = evaluate(gx)

    def loss64(xv: Any) -> float:
        xp = np.pad(xv, ((0, 0), (1, 1)), constant_values=-np.inf)
        win = sliding_window_view(xp, 3, axis=1)[:, ::2]
        return float((win.max(axis=2) * r).sum())

    fd = np.zeros(x.shape)
    for i in np.ndindex(x.shape):
        a = x.astype(np.float64)
        a[i] += 1e-3
        plus = loss64(a)
        a[i] -= 2e-3
        fd[i] = (plus - loss64(a)) / 2e-3
    np.testing.assert_allclose(got, fd, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("call,exc,match", [
    (lambda x, w: cp.nn.conv2d(x, cp.array(data((3, 1, 3, 3), 1))), ValueError, "channels"),
    (lambda x, w: cp.nn.conv2d(x, w, cp.array([1.0, 2.0])), ValueError, "bias"),
    (lambda x, w: cp.nn.conv2d(x, cp.array(data((3, 2, 6, 6), 1))), ValueError, "larger"),
    (lambda x, w: cp.nn.conv2d(x, w, stride=0), ValueError, "stride"),
    (lambda x, w: cp.nn.conv2d(x, w, padding=(1, 2, 3)), ValueError, "padding"),
    (lambda x, w: cp.nn.conv2d(x, w, dilation=-1), ValueError, "dilation"),
    (lambda x, w: cp.nn.conv2d(cp.array(data((5, 5), 1)), w), ValueError, "3-D or 4-D"),
    (lambda x, w: cp.nn.conv1d(x, w), ValueError, "conv1d"),
    (lambda x, w: cp.nn.conv2d(x, 1.0), TypeError, "weight"),
    (lambda x, w: cp.nn.max_pool2d(x, 2, padding=2), ValueError, "half the kernel"),
    (lambda x, w: cp.nn.avg_pool2d(x, 6), ValueError, "larger"),
    (lambda x, w: cp.nn.max_pool1d(x, 2.5), ValueError, "kernel_size"),
    (lambda x, w: cp.nn.avg_pool1d(cp.array([1.0, 2.0]), 2), ValueError, "2-D or 3-D"),
    (lambda x, w: cp.nn.global_avg_pool2d(cp.array(data((5, 5), 1))), ValueError, "3-D or 4-D"),
])
def test_errors(call: Any, exc: type[Exception], match: str) -> None:
    x, w = cp.array(data((2, 5, 5), 1)), cp.array(data((3, 2, 3, 3), 2))
    with pytest.raises(exc, match=match):
        call(x, w)


def test_nan_in_a_max_window_gives_nan() -> None:
    x = np.array([[[1.0, math.nan, 3.0, 4.0]]], F32)
    (got,) = evaluate(cp.nn.max_pool1d(cp.array(x), 2))
    assert math.isnan(got[0, 0, 0]) and got[0, 0, 1] == 4.0
