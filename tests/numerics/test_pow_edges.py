"""pow where its kernel changes course, scalar (packed four to a step where the target
packs) and array, against NumPy's float64 power (the checks of test_pow_classes.py).

Issue 23.1's second pass rewrote the kernel's joints (docs/math.md, "pow"): the exp
table's row switches where y·ln|x| crosses (k + 1/2)·ln2/32, the table's hi carries
2^(n >> 1) in its exponent field and one product scales the rest (over- and underflow
thresholds, subnormal results), |y| >= 2^32 and y = ±inf reach 0 or inf through the range
of w alone (x next to 1 gives the smallest |log x|), |x| = 1 reaches 1 through the kernel
for every finite y, and a subnormal x is scaled by 2^25 before the log.
"""

from __future__ import annotations

import math

import numpy as np
from test_pow_classes import F32, bits_of, check, f32, scalar_and_array


def agree(xs: list[float], ys: list[float]) -> None:
    s, a = scalar_and_array(xs, ys)
    assert [bits_of(v) for v in s] == [bits_of(v) for v in a]
    for g, x, y in zip(s, xs, ys, strict=True):
        check(g, x, y)


def neighbours(v: float, k: int = 2) -> list[float]:
    """v rounded to float32 and its k nearest floats on either side (positive ones)"""
    b = bits_of(float(F32(v)))
    return [f32(b + d) for d in range(-k, k + 1) if b + d > 0]


def test_exp_table_rows_switch() -> None:
    """x^y at w = y ln x next to (k + 1/2) ln2/32, where k and so the row change: k over
    the whole range of w (about -150..128 in powers of 2), y = 1 and y = 3"""
    xs: list[float] = []
    ys: list[float] = []
    for y in (1.0, 3.0):
        for k in range(-4790, 4090, 97):
            for x in neighbours(2.0 ** ((k + 0.5) / 32 / y)):
                xs.append(x)
                ys.append(y)
    agree(xs, ys)


def test_over_and_underflow_thresholds() -> None:
    """results next to FLT_MAX, the smallest normal, the smallest subnormal and half of
    it, from powers of 2 (exact) and of 10 and 0.7 (rounded)"""
    xs: list[float] = []
    ys: list[float] = []
    for x in (2.0, 10.0, 0.7, -2.0):
        lx = math.log2(abs(x))
        for e in (128.0, -126.0, -149.0, -150.0, -148.5):
            for y in neighbours(e / lx, 3):
                xs.append(x)
                ys.append(y)
    agree(xs, ys)


def test_large_x_and_small_y() -> None:
    """|x| from 2^100 to FLT_MAX (the log's input is x scaled by 2^25 below 2^103)"""
    big = [2.0**100, 2.0**102, f32(0x72800001), 2.0**103 * 1.5, 2.0**110, 1e38, 3.4028235e38]
    ys = [0.5, 1.0, 1.1, -0.9, 1e-3, -1e-5, 1.2, -1.25, 2.0, -1.0]
    agree([x for x in big for _ in ys] + [-x for x in big for _ in ys], ys * len(big) * 2)


def test_subnormal_x() -> None:
    sub = [f32(1), f32(2), f32(3), f32(0x400000), f32(0x7FFFFF), f32(0x123457), f32(0x5A5A5)]
    ys = [0.5, 1.0, 0.25, -0.5, 1.1, 1.19, -0.01, 3.0, 0.0, 1.0 / 3.0]
    agree([x for x in sub for _ in ys] + [-x for x in sub for _ in ys], ys * len(sub) * 2)


def test_huge_y_next_to_one_and_at_one() -> None:
    """|y| >= 2^32 and ±inf: 0 or inf through the range of w alone for |x| != 1 (x within
    a few ulp of 1 gives the smallest |log x|, 2^-24), 1 for |x| = 1 (±1 with an even y)"""
    ones = [f32(0x3F800000 + d) for d in (-3, -2, -1, 1, 2, 3)] + [-f32(0x3F800001), -f32(0x3F7FFFFF)]
    huge = [2.0**31, 2.0**32, -(2.0**32), 4294967040.0, 1e10, -1e10, 2.0**40, 3.0e38, math.inf, -math.inf,
            2.0**24 + 2.0, 16777217.0 * 3]
    xs = [x for x in ones + [1.0, -1.0] for _ in huge]
    agree(xs, huge * (len(ones) + 2))


def test_random_pairs_near_the_row_joints() -> None:
    """random y and x = 2^((k + 1/2 + d) / 32 / y) with |d| below 2^-20: w lands within a
    hair of a row joint, for results across the whole range"""
    rng = np.random.default_rng(231)
    k = rng.integers(-4790, 4090, 300)
    y = (10.0 ** rng.uniform(-2.0, 3.0, 300)) * rng.choice([-1.0, 1.0], 300)
    d = rng.uniform(-(2.0**-20), 2.0**-20, 300)
    with np.errstate(over="ignore", under="ignore"):
        x = np.exp2((k + 0.5 + d) / 32 / y).astype(F32)
    keep = [(float(a), float(F32(b))) for a, b in zip(x, y, strict=True) if math.isfinite(a) and a != 0.0]
    agree([p[0] for p in keep], [p[1] for p in keep])
