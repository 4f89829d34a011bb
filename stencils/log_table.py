#!/usr/bin/env python3
"""Reproduce the log table and polynomial of mathlib.c (`cpm_log_tab`).

x = 2^e m with m in [OFF, 2 OFF) (OFF = 0x3f360000 ~ 0.7109), split into 32 subintervals
of 2^18 bit patterns each by the top 5 mantissa bits of bits(x) - OFF; 1.0 sits in the
middle of subinterval 18. Each subinterval has invc ~ 1/c (c its centre) with 12
significant bits, so m * invc is an exact Dekker product of the unsplit invc, and
logc = -log(invc) as logc_h + logc_l: logc_h a multiple of 2^-15 (so e * C1 + logc_h is
exact: C1 = ln 2 to 15 bits), logc_l the float32 rest. Subinterval 18 has invc = 1 and
logc = 0, so near 1 the result is r + r^3 P(r) - r^2/2 with r = m - 1 exact.

P: log1p(r) - r + r^2/2 = r^3 P(r), 4 terms, near-minimax on the widest |r| range; pow's
Q the same in 3 terms (pow needs its log to about 2^-34 relative).
C2F: ln 2 - C1 rounded to float32 (pow's log takes e ln 2 as e C1 + e C2F).

Usage: python3 stencils/log_table.py   (needs numpy and mpmath; not part of the build)
"""
import re
import struct

import mpmath as mp
import numpy as np
from fit_poly import fit

mp.mp.prec = 120
OFF = 0x3F360000
N = 32


def f32(bits):
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def round_bits(v, bits):
    """v rounded to `bits` significant bits."""
    e = mp.floor(mp.log(abs(v), 2))
    q = mp.mpf(2) ** (e - bits + 1)
    return mp.nint(v / q) * q


def hexf(v):
    """C hex float literal without trailing zeros."""
    return re.sub(r"\.?0*p", "p", float(v).hex()) + "f"


def table():
    rows, rmax = [], 0.0
    for i in range(N):
        lo, hi = f32(OFF + (i << 18)), f32(OFF + ((i + 1) << 18) - 1)
        invc = mp.mpf(1) if lo <= 1.0 <= hi else round_bits(2 / (mp.mpf(lo) + mp.mpf(hi)), 12)
        logc = -mp.log(invc)
        logc_h = mp.nint(logc * 2**15) / 2**15
        logc_l = np.float32(float(logc - logc_h))
        rmax = max(rmax, abs(float(lo * invc - 1)), abs(float(hi * invc - 1)))
        rows.append((float(invc), float(logc_h), float(logc_l)))
    return rows, rmax


if __name__ == "__main__":
    rows, rmax = table()
    print(f"max |r| = {rmax:.6f}")
    for invc, h, lo in rows:
        print(f"    {{{hexf(invc)}, {hexf(h)}, {hexf(lo)}, 0.0f}},")  # 16-byte rows
    c, err = fit(lambda r: mp.log1p(r) - r + r * r / 2, [3, 4, 5, 6], -rmax * 1.01, rmax * 1.01,
                 lambda r: 1 / r)
    print(f"log P: max error 2^{np.log2(err):.1f} (relative to r); "
          + ", ".join(hexf(v) for v in c))
    c3, err3 = fit(lambda r: mp.log1p(r) - r + r * r / 2, [3, 4, 5], -rmax * 1.01, rmax * 1.01,
                   lambda r: 1 / r)
    print(f"pow's Q (3 terms): max error 2^{np.log2(err3):.1f} (relative to r); "
          + ", ".join(hexf(v) for v in c3))
    print(f"C2F = {hexf(np.float32(float(mp.log(2) - mp.mpf(float.fromhex('0x1.62e4p-1')))))}")
