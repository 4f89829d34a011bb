#!/usr/bin/env python3
"""Fit the polynomial coefficients used in mathlib.c (exp, cos, tan, asin, atan; log's table
and polynomial come from log_table.py).

Near-minimax fits by Lawson's iteratively reweighted least squares on 4000 Chebyshev
nodes, with the target computed in 120-bit mpmath; the coefficients are rounded to
float32 and the printed error is measured with the rounded coefficients (so it includes
their rounding, which dominates for tan, asin and atan). mathlib.c uses:

    exp  Q, 5 terms  expm1(r) - r - r^2/2 = r^3 Q(r),      |r| <= 0.3535  (absolute error)
    cos  C, 4 terms  cos x - 1 + x^2/2 = C(x^2) x^2,        x <= 0.8775   (absolute error)
    (sin S, 4 terms  sin x - x = x^3 S(x^2),                x <= 0.8775: for comparison only,
     mathlib.c keeps musl's __sindf coefficients, as accurate in float there)
    tan  T, 9 terms  tan x - x = x^3 T(x^2),                x <= 0.7878   (relative to tan)
    asin P, 7 terms  asin x - x = x^3 P(x^2),               x <= 1/2      (relative to asin)
    atan A, 7 terms  atan x - x = x^3 A(x^2),               x <= 0.4384   (relative to atan)
(each interval a little wider than the reduced argument's range)

Usage: python3 stencils/fit_poly.py ["cos C,sin S"]   (needs numpy and mpmath; not part of the build)
"""
import mpmath as mp
import numpy as np

mp.mp.prec = 120


def fit(target, powers, lo, hi, weight, n=4000, iters=60):
    t = np.cos(np.pi * (np.arange(n) + 0.5) / n)
    xs = [mp.mpf(lo) + (mp.mpf(hi) - lo) * (mp.mpf(float(v)) + 1) / 2 for v in t]
    ys = np.array([float(target(x)) for x in xs])
    a = np.array([[float(x) ** p for p in powers] for x in xs])
    w = np.array([float(weight(x)) for x in xs])
    lw = np.ones(n)
    for _ in range(iters):
        sw = np.sqrt(lw) * w
        c, *_ = np.linalg.lstsq(a * sw[:, None], ys * sw, rcond=None)
        lw = lw * np.abs((a @ c - ys) * w)
        lw /= lw.sum()
    c32 = c.astype(np.float32)
    def poly(x):
        return sum(mp.mpf(float(ck)) * x ** p for ck, p in zip(c32, powers, strict=True))
    err = max(abs(float((target(x) - poly(x)) * weight(x))) for x in xs[::7])
    return c32, err


FITS = {
    "exp Q": (lambda r: mp.expm1(r) - r - r * r / 2, [3, 4, 5, 6, 7], -0.3466 * 1.02, 0.3466 * 1.02,
              lambda r: 1),
    "sin S": (lambda x: mp.sin(x) - x, [3, 5, 7, 9], 1e-6, 0.8775, lambda x: 1 / mp.sin(x)),
    "cos C": (lambda x: mp.cos(x) - 1 + x * x / 2, [2, 4, 6, 8], 1e-6, 0.8775, lambda x: 1),
    "tan T": (lambda x: mp.tan(x) - x, [3 + 2 * k for k in range(9)], 1e-6, 0.7854 * 1.003,
              lambda x: 1 / mp.tan(x)),
    "asin P": (lambda x: mp.asin(x) - x, [3 + 2 * k for k in range(7)], 1e-6, 0.5,
               lambda x: 1 / mp.asin(x)),
    "atan A": (lambda x: mp.atan(x) - x, [3 + 2 * k for k in range(7)], 1e-6, 0.4375 * 1.002,
               lambda x: 1 / mp.atan(x)),
}

if __name__ == "__main__":
    import sys
    only = sys.argv[1].split(",") if len(sys.argv) > 1 else list(FITS)
    for name, (f, powers, lo, hi, wt) in ((k, FITS[k]) for k in only):
        c, err = fit(f, powers, lo, hi, wt)
        print(f"{name}: max error 2^{np.log2(err):.1f}; " + ", ".join(f"{float(v).hex()}f" for v in c))
