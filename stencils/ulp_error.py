#!/usr/bin/env python3
"""Measure the accuracy of stencils/mathlib.c against NumPy.

mathlib.c is compiled natively for the host (zig cc, -O2 -ffp-contract=off, shared
library) together with a small harness that evaluates a range of float32 bit patterns,
and called through ctypes.

* sin / cos: every float32 bit pattern (2^32, or a stride with --stride). The reference
  is NumPy's float64 sin/cos of the (exact) float32 input; the error is
  |result - ref64| / ulp32(ref64), i.e. the fractional ulp error against the exact value
  (up to the float64 reference's own ~2^-29 ulp32 error). "not CR" counts results
  different from float32(ref64), which is the correctly rounded result except in rare
  double-rounding cases (a float64 value within 2^-29 ulp of a float32 midpoint).
* floor: every bit pattern, bit-exact against np.floor (NaN == NaN).
* fmod, NumPy floor_divide and remainder: random and structured pairs, bit-exact
  against np.fmod / np.floor_divide / np.remainder on float32 (NaN == NaN).

Usage: python3 stencils/ulp_error.py [--stride N] [--funcs sin,cos,floor,fmod,divmod]
       [--jobs N] [--pairs N]
"""
import argparse
import ctypes
import multiprocessing as mp
import os
import re
import subprocess
import sys
import tempfile
import time
from fractions import Fraction

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MATHLIB = os.path.join(HERE, "mathlib.c")

HARNESS = r"""
#include "%s"
typedef float (*f1)(float);
static f1 pick(int f) { return f == 0 ? cpm_sinf : f == 1 ? cpm_cosf : cpm_floorf; }
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
                                                           : cpm_remainderf(a[k], b[k]);
}
"""

FUNCS1 = {"sin": 0, "cos": 1, "floor": 2}
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


def chunk_trig(args):
    name, start, stride, n = args
    bits = (np.arange(n, dtype=np.uint64) * stride + start).astype(np.uint32)
    x = bits.view(np.float32)
    y = eval_range(FUNCS1[name], start, stride, n)
    with np.errstate(invalid="ignore"):
        x64 = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        ref = np.sin(x64) if name == "sin" else np.cos(x64)
    finite = np.isfinite(x)
    bad_nan = int(np.count_nonzero(~finite & ~np.isnan(y)))
    bad_nan += int(np.count_nonzero(finite & ~np.isfinite(y)))
    y64 = y.astype(np.float64)
    err = np.where(finite, np.abs(y64 - ref) / ulp32(ref), 0.0)
    k = int(np.argmax(err))
    not_cr = int(np.count_nonzero(finite & (y != ref.astype(np.float32))))
    hist = [int(np.count_nonzero(err > t)) for t in (0.5, 0.75, 0.9, 1.0)]
    return float(err[k]), int(bits[k]), not_cr, bad_nan, hist


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


def check_two_over_pi_table():
    """The 2/pi words in mathlib.c against 2/pi computed exactly (Machin's formula)."""
    def arctan_inv(n, one):
        s, t, k, sign = 0, one // n, 1, 1
        while t:
            s += sign * (t // k)
            t //= n * n
            k += 2
            sign = -sign
        return s
    one = 1 << 600
    pi = Fraction(4 * (4 * arctan_inv(5, one) - arctan_inv(239, one)), one)
    src = open(MATHLIB).read()
    body = re.search(r"cpm_two_over_pi_bits\[\d+\] = \{(.*?)\};", src, re.S).group(1)
    words = [int(w, 16) for w in re.findall(r"0x([0-9a-fA-F]+)u", body)]
    v = 2 / pi
    expect = [0]
    for _ in range(len(words) - 1):
        v *= 1 << 32
        expect.append(int(v))
        v -= int(v)
    return words == expect


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stride", type=int, default=1, help="test every N-th bit pattern (power of 2)")
    ap.add_argument("--funcs", default="sin,cos,floor,fmod,divmod")
    ap.add_argument("--jobs", type=int, default=os.cpu_count())
    ap.add_argument("--pairs", type=int, default=2_000_000, help="random pairs per class for fmod/divmod")
    ap.add_argument("--chunk", type=int, default=1 << 22)
    args = ap.parse_args()
    funcs = args.funcs.split(",")
    print("2/pi table in mathlib.c:", "ok" if check_two_over_pi_table() else "WRONG")
    failed = not check_two_over_pi_table()
    with tempfile.TemporaryDirectory() as tmp:
        so = build_lib(tmp)
        _init(so)
        with mp.Pool(args.jobs, initializer=_init, initargs=(so,)) as pool:
            for name in ("sin", "cos"):
                if name not in funcs:
                    continue
                t0 = time.time()
                res, total = run_chunks(pool, chunk_trig, name, args.stride, args.chunk)
                worst = max(res, key=lambda r: r[0])
                not_cr = sum(r[2] for r in res)
                bad_nan = sum(r[3] for r in res)
                hist = [sum(r[4][i] for r in res) for i in range(4)]
                x = np.uint32(worst[1]).view(np.float32)
                print(f"{name}f: max error {worst[0]:.4f} ulp at x = {float(x)!r} (bits 0x{worst[1]:08x}); "
                      f"{total} inputs (stride {args.stride}); not correctly rounded: {not_cr} "
                      f"({not_cr / total:.2e}); >0.5/0.75/0.9/1 ulp: {hist}; "
                      f"NaN/inf mistakes: {bad_nan}; {time.time() - t0:.0f} s", flush=True)
                failed |= worst[0] > 1.0 or bad_nan > 0
            if "floor" in funcs:
                res, total = run_chunks(pool, chunk_floor, "floor", args.stride, args.chunk)
                bad = sum(r[0] for r in res)
                first = next((r[1] for r in res if r[1] is not None), None)
                print(f"floorf: {bad} mismatches against np.floor over {total} inputs"
                      + (f" (first at bits 0x{first:08x})" if bad else " (bit-exact)"), flush=True)
                failed |= bad > 0
        if "fmod" in funcs or "divmod" in funcs:
            for name, (n, bad, first) in check_pairs(args.pairs).items():
                print(f"{name}: {bad} mismatches against NumPy float32 over {n} pairs"
                      + (f", first (a, b, ours, numpy) = {first}" if bad else " (bit-exact)"), flush=True)
                failed |= bad > 0
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
