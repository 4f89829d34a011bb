#!/usr/bin/env python3
"""Reproduce the table and constants of pow's exp in mathlib.c (`cpm_exp_tab`).

exp(w) = 2^(k/32) exp(r) with k = round(w 32 / ln 2) and r = w - k ln2/32, |r| <= ln2/64.
The table holds 2^(j/32) for j < 32 as hi (1 + rlo): hi rounded to float32, rlo the relative
rest (2^(j/32) - hi) / hi rounded to float32 (so hi (1 + rlo) is 2^(j/32) to about 2^-48; the
kernel adds rlo to its polynomial before the one product with hi). ln2/32 = C1 + C2 with C1
rounded to 11 significant bits (k C1 exact for |k| <= 2^13, k reaches 4800 for |w| <= 104)
and C2 the float32 rest (its error times k below 2^-33). exp r = 1 + r + r^2 ((1/2 + r/6) +
r^2/24): the Taylor terms, whose error r^5/120 < 2^-32 on |r| <= 0.03 (k comes from an
estimate of w, mathlib.c) needs no fitting.

Usage: python3 stencils/exp2_table.py   (needs numpy; not part of the build)
"""
import re
from decimal import Decimal, getcontext

import numpy as np

getcontext().prec = 60
LN2 = Decimal(2).ln()
N = 32


def hexf(v):
    """C hex float literal (float32 value) without trailing zeros."""
    return re.sub(r"\.?0*p", "p", float(np.float32(v)).hex()) + "f"


def round_bits(v, bits):
    """v rounded to `bits` significant bits (exactly, in Decimal)."""
    m = Decimal(2) ** (v.copy_abs().ln() / LN2).to_integral_value(rounding="ROUND_FLOOR")
    q = m / Decimal(2) ** (bits - 1)
    return (v / q).to_integral_value() * q


def rows():
    out = []
    for j in range(N):
        v = (LN2 * j / N).exp()
        hi = Decimal(float(np.float32(float(v))))
        out.append((hi, np.float32(float((v - hi) / hi))))
    return out


if __name__ == "__main__":
    for hi, lo in rows():
        print(f"    {{{hexf(hi)}, {hexf(lo)}}},")
    c = LN2 / N
    c1 = round_bits(c, 11)
    print(f"INV = {hexf(float(N / LN2))}, C1 = {hexf(c1)}, C2 = {hexf(float(c - c1))}, "
          f"1/6 = {hexf(1 / 6)}, 1/24 = {hexf(1 / 24)}")
