#!/usr/bin/env python3
"""Check the sin/cos/tan argument reduction of stencils/mathlib.c on every float32.

The claims of docs/math.md ("sin and cos", "tan", "Large arguments") about `cpm_reduce`
(tan's) and `cpm_reduce_sincos` (sin's and cos's: rh + rl is r0 - dn - ev there, not
normalised, and its head ah), each checked on every bit pattern in its range with a
native build of mathlib.c (zig cc -O2 -ffp-contract=off, like ulp_error.py):

* |x| < pi/4: rh = |x| and rl = 0 exactly (+0 for tan's), quadrant 0 (pi/4 itself is a
  tie of |x| 2/pi = 1/2, which goes up for tan's: k = 1; to even for sin's and cos's);
* pi/4 < |x| < 2^20: rh + rl against the exact reduced argument |x| - k pi/2 (k from the
  quadrant, pi/2 in three 33-bit double pieces, so the reference is exact to ~2^-100):
  the largest absolute error (below 2^-46) and, for information, the largest error
  relative to |r|; |rh| bound, and |rl| bound for sin's and cos's;
* sin's and cos's head ah: a multiple of 2^-11 within 2^-11 of r0 (so ah^2 and
  1 - ah^2/2 are exact floats), below 2^22;
* 2^20 <= |x| <= 2^22 (the rounded reduction): |rh| bound (the kernels' range).

Usage: python3 stencils/check_reduction.py   (about 20 s; exits 1 if a claim fails)
"""
import ctypes
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

HARNESS = r"""
#include "%s"
/* pi/2 = P1 + P2 + P3, P1 and P2 of 33 bits: k Pi is exact in double for k < 2^20 */
static const double P1 = 0x1.921fb544p+0, P2 = 0x1.0b4611a6p-34, P3 = 0x1.3198a2e037073p-69;
/* out: [0] small inputs not passed through, [1] max abs error, [2] max error / |r|,
 * [3] max |rh| below 2^20, [4] max |rh| from 2^20 to 2^22, [5] quadrant mismatches,
 * [6] max |rl| below 2^20, [7] sin's and cos's ah off its grid, more than 2^-11 from rh,
 * or 1 - ah^2/2 not exact */
void cpm_check_reduction(int sincos, double *out) {
    for (int i = 0; i < 8; i++) out[i] = 0;
    for (uint32_t ax = 0; ax <= 0x4a800000u; ax++) {
        float rh, rl, ah = 0, ev = 0;
        uint32_t q;
        if (sincos) {
            cpm_sincos_arg sa;
            q = cpm_reduce_sincos(ax, &sa, 0) & 3u;
            rh = sa.r0, rl = -sa.dn, ev = -sa.ev, ah = sa.ah; /* r = r0 - dn - ev */
            double a = (double)ah * 0x1p11, w = 1.0 - 0.5 * (double)ah * (double)ah;
            if (a != __builtin_round(a) || __builtin_fabs((double)ah - rh) > 0x1p-11 ||
                (double)(float)w != w)
                out[7] += 1;
        } else {
            q = cpm_reduce(ax, &rh, &rl, 0) & 3u;
        }
        if (ax < 0x3f490fdbu) {
            uint32_t zero = sincos ? (cpm_bits(rl) | cpm_bits(ev)) << 1 : cpm_bits(rl); /* tan's: +0 */
            if (cpm_bits(rh) != ax || zero != 0 || q != 0) out[0] += 1;
            continue;
        }
        double al = rl < 0 ? -(double)rl : (double)rl;
        double a = rh < 0 ? -(double)rh : (double)rh;
        if (ax >= 0x49800000u) {
            if (a > out[4]) out[4] = a;
            continue;
        }
        if (a > out[3]) out[3] = a;
        if (al > out[6]) out[6] = al;
        double y = cpm_from_bits(ax);
        double k = __builtin_round(y * 0x1.45f306dc9c883p-1); /* nearest k */
        /* the reduction's own k (its quadrant) may be the neighbour at ties */
        double r = 0, best = 1e300;
        for (int d = -1; d <= 1; d++) {
            double kk = k + d;
            if ((((uint32_t)(int64_t)kk) & 3u) != q) continue;
            double rr = ((y - kk * P1) - kk * P2) - kk * P3;
            double e = rr - (((double)rh + (double)rl) + (double)ev);
            if (__builtin_fabs(e) < best) { best = __builtin_fabs(e); r = rr; }
        }
        if (best == 1e300) { out[5] += 1; continue; }
        if (best > out[1]) out[1] = best;
        if (r != 0 && best / __builtin_fabs(r) > out[2]) out[2] = best / __builtin_fabs(r);
    }
}
"""


def main():
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "reduction.c")
        with open(src, "w") as f:
            f.write(HARNESS % os.path.join(HERE, "mathlib.c"))
        so = os.path.join(tmp, "libreduction.so")
        subprocess.run([sys.executable, "-m", "ziglang", "cc", "-O2", "-ffp-contract=off",
                        "-fno-builtin", "-shared", "-fPIC", "-o", so, src], check=True)
        lib = ctypes.CDLL(so)
        ok = True
        # (name, sincos, max |rh + rl - r| below 2^20, max |rh| there, max |rl| there,
        # max |rh| up to 2^22)
        for name, sincos, abs_bar, rh20_bar, rl20_bar, rh22_bar in (
                ("tan: cpm_reduce", 0, 2.0**-46, 0.802, 2.0**-24, 0.849),
                ("sin, cos: cpm_reduce_sincos", 1, 2.0**-46, 0.877, 2.0**-21.99, 1.151)):
            out = (ctypes.c_double * 8)()
            lib.cpm_check_reduction(sincos, out)
            small, abs_err, rel_err, rh20, rh22, qbad, rl20, ahbad = list(out)
            print(f"{name}\n  |x| < pi/4 not passed through exactly: {small:.0f}")
            print(f"  pi/4 < |x| < 2^20: quadrant mismatches {qbad:.0f}; max |rh + rl - r| = "
                  f"2^{_log2(abs_err)}; max |rh + rl - r| / |r| = 2^{_log2(rel_err)}; max |rh| = "
                  f"{rh20:.6f}; max |rl| = 2^{_log2(rl20)}")
            print(f"  2^20 <= |x| <= 2^22: max |rh| = {rh22:.6f}")
            if sincos:
                print(f"  ah off its grid, off r0 by more than 2^-11 or 1 - ah^2/2 inexact: {ahbad:.0f}")
            ok = ok and small == 0 and qbad == 0 and abs_err < abs_bar and rh20 < rh20_bar and \
                rl20 < rl20_bar and rh22 < rh22_bar and ahbad == 0
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


def _log2(v):
    import math
    return f"{math.log2(v):.1f}" if v > 0 else "-inf"


if __name__ == "__main__":
    sys.exit(main())
