#!/usr/bin/env python3
"""Measure the accuracy of stencils/mathlib.c against NumPy.

mathlib.c is compiled natively for the host (zig cc, -O2 -ffp-contract=off, shared
library) together with a small harness that evaluates a range of float32 bit patterns,
and called through ctypes.

* One-argument functions sin cos tan asin acos atan exp log tanh: every float32 bit pattern
  (2^32, or a stride with --stride). The reference is NumPy's float64 function of the
  (exact) float32 input; the error is |result - ref64| / ulp32(ref64), i.e. the
  fractional ulp error against the exact value, up to the float64 reference's own error
  (NumPy uses the C library's double functions: below 1 ulp64 = 2^-29 ulp32). "not CR"
  counts results different from float32(ref64), which is the correctly rounded result
  except in rare double-rounding cases (a float64 value within 2^-29 ulp of a float32
  midpoint). Special results must be exact: a NaN reference needs the canonical NaN
  0x7fc00000, an infinite or exactly zero reference the same bits (signed zeros); an
  infinite result is only right when float32(ref64) overflows too.
* Two-argument atan2 and pow: a large sample of pairs (random bit patterns, normal
  values, a grid of special values, and classes aimed at the hard cases), measured the
  same way against np.arctan2 / np.power in float64. np.power's float64 result can be
  wrong by about 1 ulp64 (relative 2^-53): |y log x| <= 150 makes that below 2^-28
  ulp32, invisible at the 1e-4 ulp printed.
* floor: every bit pattern, bit-exact against np.floor (NaN == NaN).
* fmod, NumPy floor_divide and remainder: random and structured pairs, bit-exact
  against np.fmod / np.floor_divide / np.remainder on float32 (NaN == NaN).

Bars (exit 1 above them): sin cos exp log tanh <= 1 ulp, tan asin acos atan atan2 pow
<= 2 ulp, everywhere but sin, cos and tan of |x| >= 2^20 (no bar there: sin and cos must
stay in [-1, 1], none may give NaN); no NaN/inf/signed-zero mistakes; floor/fmod/divmod
bit-exact.
The largest error over normal results (|ref| >= 2^-126) is printed as well.

Usage: python3 stencils/ulp_error.py [--stride N] [--funcs sin,cos,...,atan2,pow,floor,fmod,divmod]
       [--jobs N] [--pairs N]
"""
import argparse
import ctypes
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MATHLIB = os.path.join(HERE, "mathlib.c")

HARNESS = r"""
#include "%s"
typedef float (*f1)(float);
static f1 pick(int f) {
    switch (f) {
    case 0: return cpm_sinf;  case 1: return cpm_cosf;  case 2: return cpm_floorf;
    case 3: return cpm_tanf;  case 4: return cpm_asinf; case 5: return cpm_acosf;
    case 6: return cpm_atanf; case 7: return cpm_expf;  case 9: return cpm_tanhf;
    default: return cpm_logf;
    }
}
/* out[k] = fn(float with bits start + k * stride) */
void cpm_eval_range(int f, uint32_t start, uint32_t stride, uint32_t n, float *out) {
    f1 fn = pick(f);
    for (uint32_t k = 0; k < n; k++) {
        cpm_fu v; v.u = start + k * stride; out[k] = fn(v.f);
    }
}
void cpm_eval2(int f, const float *a, const float *b, uint32_t n, float *out) {
    for (uint32_t k = 0; k < n; k++)
        out[k] = f == 0 ? cpm_fmodf(a[k], b[k]) : f == 1 ? cpm_floordivf(a[k], b[k])
               : f == 2 ? cpm_remainderf(a[k], b[k]) : f == 3 ? cpm_atan2f(a[k], b[k])
                                                               : cpm_powf(a[k], b[k]);
}
"""

FUNCS1 = {"sin": 0, "cos": 1, "floor": 2, "tan": 3, "asin": 4, "acos": 5, "atan": 6, "exp": 7,
          "log": 8, "tanh": 9}
REF1 = {"sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
        "atan": np.arctan, "exp": np.exp, "log": np.log, "tanh": np.tanh}
# sin, cos and tan meet their bars for |x| < 2^20 (every float32 there checked)
TRIG = {"sin", "cos", "tan"}
TRIG_ACCURATE = 2.0**20
BAR = {"sin": 1.0, "cos": 1.0, "exp": 1.0, "log": 1.0, "tan": 2.0, "asin": 2.0, "acos": 2.0,
       "atan": 2.0, "atan2": 2.0, "pow": 2.0, "tanh": 1.0}
FUNCS2 = {"atan2": (3, np.arctan2), "pow": (4, np.power)}
NAN_BITS = 0x7FC00000
_lib = None


def build_lib(tmp):
    src = os.path.join(tmp, "harness.c")
    with open(src, "w") as f:
        f.write(HARNESS % MATHLIB)
    so = os.path.join(tmp, "libcpm.so")
    cmd = [sys.executable, "-m", "ziglang", "cc", "-O2", "-ffp-contract=off", "-fno-builtin",
           "-shared", "-fPIC", "-o", so, src]
    subprocess.run(cmd, check=True)
    return so


def _init(so):
    global _lib
    _lib = ctypes.CDLL(so)
    P = ctypes.POINTER(ctypes.c_float)
    _lib.cpm_eval_range.argtypes = [ctypes.c_int, ctypes.c_uint32, ctypes.c_uint32, ctypes.c_uint32, P]
    _lib.cpm_eval2.argtypes = [ctypes.c_int, P, P, ctypes.c_uint32, P]


def _ptr(a):
    return a.ctypes.data_as(ctypes.POINTER(ctypes.c_float))


def eval_range(f, start, stride, n):
    out = np.empty(n, dtype=np.float32)
    _lib.cpm_eval_range(f, start, stride, n, _ptr(out))
    return out


def ulp32(ref):
    """ulp of the float32 binade containing |ref| (float64 array)."""
    _, e = np.frexp(ref)
    return np.ldexp(1.0, np.maximum(e - 24, -149))


def ulp_errors(y, ref):
    """(error in ulp per element, mistake mask) of float32 results y against float64
    references; special values (NaN, inf, exact zeros) must match exactly."""
    with np.errstate(all="ignore"):
        r32 = ref.astype(np.float32)
        yb, rb = y.view(np.uint32), r32.view(np.uint32)
        nan_ref, nan_y = np.isnan(ref), np.isnan(y)
        bad = (nan_ref != nan_y) | (nan_y & (yb != NAN_BITS))
        special = ~nan_ref & (np.isinf(ref) | (ref == 0))
        bad |= special & (yb != rb)
        # an infinite result is right only if float32(ref64) overflows (same sign)
        bad |= ~nan_ref & ~special & np.isinf(y) & (yb != rb)
        fin = ~nan_ref & ~special & np.isfinite(y)
        err = np.where(fin, np.abs(y.astype(np.float64) - ref) / ulp32(ref), 0.0)
    return err, bad


def summarise(err, bad, y, ref):
    """(worst error, its index, not CR, mistakes, worst over normal results, histogram)"""
    k = int(np.argmax(err))
    with np.errstate(all="ignore"):
        r32 = ref.astype(np.float32)
        finite = np.isfinite(ref) & np.isfinite(y)
        normal = np.abs(ref) >= 2.0 ** -126
    not_cr = int(np.count_nonzero(finite & (y.view(np.uint32) != r32.view(np.uint32))))
    err_n = np.where(normal, err, 0.0)
    kn = int(np.argmax(err_n))
    hist = [int(np.count_nonzero(err > t)) for t in (0.5, 0.75, 0.9, 1.0, 1.5, 2.0)]
    return float(err[k]), k, not_cr, int(np.count_nonzero(bad)), float(err_n[kn]), kn, hist


def chunk_unary(args):
    name, start, stride, n = args
    bits = (np.arange(n, dtype=np.uint64) * stride + start).astype(np.uint32)
    x = bits.view(np.float32)
    y = eval_range(FUNCS1[name], start, stride, n)
    with np.errstate(all="ignore"):
        ref = REF1[name](x.astype(np.float64))
    err, bad = ulp_errors(y, ref)
    if name in TRIG:
        # beyond TRIG_ACCURATE the reduction rounds its products: no ulp bar, but sin and
        # cos stay in [-1, 1] and nothing becomes NaN (mathlib.c, docs/math.md)
        big = np.isfinite(x) & (np.abs(x) >= TRIG_ACCURATE)
        err = np.where(big, 0.0, err)
        bad = np.where(big, np.isnan(y) | ((np.abs(y) > 1.0) if name != "tan" else False), bad)
        with np.errstate(all="ignore"):
            y = np.where(big, ref.astype(np.float32), y)  # not counted as "not CR" either
    worst, k, not_cr, nbad, worst_n, kn, hist = summarise(err, bad, y, ref)
    first_bad = int(bits[np.flatnonzero(bad)[0]]) if nbad else None
    return worst, int(bits[k]), not_cr, nbad, hist, worst_n, int(bits[kn]), first_bad


def same_bits_or_nan(y, ref):
    return (y.view(np.uint32) == ref.view(np.uint32)) | (np.isnan(y) & np.isnan(ref))


def chunk_floor(args):
    _, start, stride, n = args
    bits = (np.arange(n, dtype=np.uint64) * stride + start).astype(np.uint32)
    x = bits.view(np.float32)
    y = eval_range(2, start, stride, n)
    with np.errstate(invalid="ignore"):
        ok = same_bits_or_nan(y, np.floor(x))
    bad = np.flatnonzero(~ok)
    return int(bad.size), (int(bits[bad[0]]) if bad.size else None)


def run_chunks(pool, fn, name, stride, chunk):
    total = (1 << 32) // stride
    jobs = [(name, s * stride, stride, min(chunk, total - s)) for s in range(0, total, chunk)]
    return list(pool.imap_unordered(fn, jobs)), total


def f32bits(v):
    return int(np.float32(v).view(np.uint32))


def special_floats():
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.0, 3.0, 7.0, -7.0, 0.1, 1e-45, -1e-45,
            1.17549435e-38, 3.4028235e38, -3.4028235e38, np.inf, -np.inf, np.nan, 16777216.0,
            8388608.5, 1e30, -1e-30, 2.5, 1e7, 6.283185307179586, 3.14159265]
    return np.array(vals, dtype=np.float32)


def check_pairs(npairs, seed=1):
    rng = np.random.default_rng(seed)
    sp = special_floats()
    a_sp, b_sp = [v.ravel() for v in np.meshgrid(sp, sp)]
    # random bit patterns (all magnitudes), random "nice" values, and near-equal magnitudes
    ra = rng.integers(0, 1 << 32, npairs, dtype=np.uint64).astype(np.uint32).view(np.float32)
    rb = rng.integers(0, 1 << 32, npairs, dtype=np.uint64).astype(np.uint32).view(np.float32)
    na = (rng.standard_normal(npairs) * 100).astype(np.float32)
    nb = (rng.standard_normal(npairs) * 3).astype(np.float32)
    sb = rng.integers(0, 1 << 32, npairs, dtype=np.uint64).astype(np.uint32)
    sa = (sb.astype(np.int64) + rng.integers(-(1 << 24), 1 << 24, npairs)).clip(0, (1 << 32) - 1)
    sa = sa.astype(np.uint32).view(np.float32)
    a = np.concatenate([a_sp, ra, na, sa]).astype(np.float32)
    b = np.concatenate([b_sp, rb, nb, sb.view(np.float32)]).astype(np.float32)
    results = {}
    with np.errstate(all="ignore"):
        refs = {"fmod": np.fmod(a, b), "floor_divide": np.floor_divide(a, b),
                "remainder": np.remainder(a, b)}
    for f, name in enumerate(["fmod", "floor_divide", "remainder"]):
        out = np.empty(a.size, dtype=np.float32)
        _lib.cpm_eval2(f, _ptr(a), _ptr(b), a.size, _ptr(out))
        ok = same_bits_or_nan(out, refs[name])
        bad = np.flatnonzero(~ok)
        first = None
        if bad.size:
            k = bad[0]
            first = (float(a[k]), float(b[k]), float(out[k]), float(refs[name][k]))
        results[name] = (a.size, int(bad.size), first)
    return results


def pow_pairs(n, rng):
    """x, y for pow: special grid, random bits, results aimed over the whole float32
    range (|y log2 x| up to 150 with |y| from 1e-3 to 4e9), x near 1 with huge y,
    small integers and halves, negative bases with integer y, ordinary values."""
    sp = np.concatenate([special_floats(), np.array(
        [0.999999, 1.0000001, 16777215.0, 16777216.0, 16777218.0, -16777215.0, 2.0**31, 2.0**32,
         -3.0, -0.5, 0.25, 127.0, 128.0, -149.0, -150.0, 1e-40, -1e-40, 1e10, -1e10, 3.5],
        dtype=np.float32)])
    ga, gb = [v.ravel() for v in np.meshgrid(sp, sp)]
    rbits = lambda m: rng.integers(0, 1 << 32, m, dtype=np.uint64).astype(np.uint32).view(np.float32)  # noqa: E731
    w = rng.uniform(-152, 130, n)
    yt = (np.where(rng.random(n) < 0.5, -1, 1) * 10 ** rng.uniform(-3, 9.6, n)).astype(np.float32)
    with np.errstate(all="ignore"):
        xt = np.exp2(w / yt.astype(np.float64)).astype(np.float32)
    k = rng.integers(-(1 << 16), 1 << 16, n)
    x1 = (1.0 + k * 2.0 ** -23).astype(np.float32)
    with np.errstate(all="ignore"):
        y1 = (rng.uniform(-150, 150, n) / np.log2(x1.astype(np.float64))).astype(np.float32)
    y1 = np.where(np.isfinite(y1), y1, np.float32(3.0))
    xi = rng.integers(-20, 21, n).astype(np.float32)
    yi = rng.integers(-40, 41, n).astype(np.float32)
    yh = yi + np.float32(0.5)
    xo = (rng.random(n) * 10).astype(np.float32)
    yo = (rng.standard_normal(n) * 20).astype(np.float32)
    x = np.concatenate([ga, rbits(n), xt, -xt, x1, xi, xi, xo])
    y = np.concatenate([gb, rbits(n), yt, np.round(yt), y1, yi, yh, yo])
    return x.astype(np.float32), y.astype(np.float32)


def atan2_pairs(n, rng):
    """y, x for atan2: special grid (signed zeros, infinities, NaN), random bits,
    normal values, nearly equal magnitudes, ratios around the reduction breakpoints
    7/16 and 11/16, and ratios from 2^-160 to 2^160 (subnormal results)."""
    sp = special_floats()
    ga, gb = [v.ravel() for v in np.meshgrid(sp, sp)]
    rbits = lambda m: rng.integers(0, 1 << 32, m, dtype=np.uint64).astype(np.uint32).view(np.float32)  # noqa: E731
    sgn = lambda: np.where(rng.random(n) < 0.5, -1.0, 1.0)  # noqa: E731
    xb = (sgn() * 10 ** rng.uniform(-38, 38, n)).astype(np.float32)
    near = (xb * (1 + rng.uniform(-1e-3, 1e-3, n)) * sgn()).astype(np.float32)
    brk = rng.choice([7 / 16, 11 / 16, 1.0, 16 / 11, 16 / 7], n) * (1 + rng.uniform(-1e-5, 1e-5, n))
    yb = (xb * brk * sgn()).astype(np.float32)
    with np.errstate(all="ignore"):
        yr = (xb * sgn() * np.exp2(rng.uniform(-160, 160, n))).astype(np.float32)
    na = (rng.standard_normal(n) * 10).astype(np.float32)
    nb = (rng.standard_normal(n) * 10).astype(np.float32)
    y = np.concatenate([ga, rbits(n), na, near, yb, yr])
    x = np.concatenate([gb, rbits(n), nb, xb, xb, xb])
    return y.astype(np.float32), x.astype(np.float32)


def check_math_pairs(name, npairs, seed=2):
    rng = np.random.default_rng(seed)
    a, b = (pow_pairs if name == "pow" else atan2_pairs)(npairs, rng)
    f, ref_fn = FUNCS2[name]
    out = np.empty(a.size, dtype=np.float32)
    _lib.cpm_eval2(f, _ptr(a), _ptr(b), a.size, _ptr(out))
    with np.errstate(all="ignore"):
        ref = ref_fn(a.astype(np.float64), b.astype(np.float64))
    err, bad = ulp_errors(out, ref)
    worst, k, not_cr, nbad, worst_n, kn, hist = summarise(err, bad, out, ref)
    first_bad = None
    if nbad:
        j = int(np.flatnonzero(bad)[0])
        first_bad = (float(a[j]), float(b[j]), float(out[j]), float(ref[j]))
    return a.size, worst, (float(a[k]), float(b[k])), not_cr, nbad, worst_n, \
        (float(a[kn]), float(b[kn])), hist, first_bad


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stride", type=int, default=1, help="test every N-th bit pattern (power of 2)")
    ap.add_argument("--funcs", default="sin,cos,tan,asin,acos,atan,exp,log,tanh,atan2,pow,floor,fmod,divmod")
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--pairs", type=int, default=2_000_000,
                    help="pairs per random class for atan2/pow and fmod/divmod")
    ap.add_argument("--chunk", type=int, default=1 << 22)
    args = ap.parse_args()
    funcs = args.funcs.split(",")
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        so = build_lib(tmp)
        _init(so)
        with mp.Pool(args.jobs, initializer=_init, initargs=(so,)) as pool:
            for name in REF1:
                if name not in funcs:
                    continue
                t0 = time.time()
                res, total = run_chunks(pool, chunk_unary, name, args.stride, args.chunk)
                worst = max(res, key=lambda r: r[0])
                worst_n = max(res, key=lambda r: r[5])
                not_cr = sum(r[2] for r in res)
                bad = sum(r[3] for r in res)
                hist = [sum(r[4][i] for r in res) for i in range(6)]
                first_bad = next((r[7] for r in res if r[7] is not None), None)
                x = np.uint32(worst[1]).view(np.float32)
                xn = np.uint32(worst_n[6]).view(np.float32)
                print(f"{name}f: max error {worst[0]:.4f} ulp at x = {float(x)!r} (bits 0x{worst[1]:08x}); "
                      f"normal results: {worst_n[5]:.4f} ulp at {float(xn)!r}; "
                      f"{total} inputs (stride {args.stride}); not correctly rounded: {not_cr} "
                      f"({not_cr / total:.2e}); >0.5/0.75/0.9/1/1.5/2 ulp: {hist}; "
                      f"NaN/inf/zero mistakes: {bad}"
                      + (f" (first at bits 0x{first_bad:08x})" if bad else "")
                      + f"; {time.time() - t0:.0f} s", flush=True)
                failed |= worst[0] > BAR[name] or bad > 0
            if "floor" in funcs:
                res, total = run_chunks(pool, chunk_floor, "floor", args.stride, args.chunk)
                bad = sum(r[0] for r in res)
                first = next((r[1] for r in res if r[1] is not None), None)
                print(f"floorf: {bad} mismatches against np.floor over {total} inputs"
                      + (f" (first at bits 0x{first:08x})" if bad else " (bit-exact)"), flush=True)
                failed |= bad > 0
        for name in FUNCS2:
            if name not in funcs:
                continue
            t0 = time.time()
            n, worst, at, not_cr, bad, worst_n, at_n, hist, first_bad = check_math_pairs(name, args.pairs)
            print(f"{name}f: max error {worst:.4f} ulp at {at!r}; normal results: {worst_n:.4f} ulp at "
                  f"{at_n!r}; {n} pairs; not correctly rounded: {not_cr} ({not_cr / n:.2e}); "
                  f">0.5/0.75/0.9/1/1.5/2 ulp: {hist}; NaN/inf/zero mistakes: {bad}"
                  + (f" (first (a, b, ours, ref) = {first_bad})" if bad else "")
                  + f"; {time.time() - t0:.0f} s", flush=True)
            failed |= worst > BAR[name] or bad > 0
        if "fmod" in funcs or "divmod" in funcs:
            for name, (n, bad, first) in check_pairs(args.pairs).items():
                print(f"{name}: {bad} mismatches against NumPy float32 over {n} pairs"
                      + (f", first (a, b, ours, numpy) = {first}" if bad else " (bit-exact)"), flush=True)
                failed |= bad > 0
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
