"""The seams of the table-driven log and of the exact float // and %, on every target
(the suite runs once per target): log at both ends of each of its 32 table rows, next to 1
and at every exponent (within 1 ulp of NumPy's float64 log rounded to float32), and
// and % for every exponent gap between the operands that fmod's square-and-multiply
walks (0..276, subnormal divisors included: bit for bit NumPy float32)."""

from __future__ import annotations

from typing import Any

import copapy as cp
import numpy as np
import refsem as R
from helpers import run

LOG_OFF = 0x3F360000  # mathlib.c CPM_LOG_OFF: the split of the exponent


def _f32(bits: list[int]) -> list[float]:
    return [float(x) for x in np.array(bits, dtype=np.uint32).view(np.float32)]


def _run(outs: list[Any]) -> list[Any]:
    got: list[Any] = run(outs).read_value(outs)
    return got


def test_log_at_the_edges_of_every_table_row() -> None:
    rows = [LOG_OFF + (i << 18) for i in range(32)]
    bits = [b + d for b in rows for d in (0, 1, 1 << 17, (1 << 18) - 1)]
    bits += [0x3F800000 + k for k in range(-6, 7)]  # next to 1, where log c = 0
    bits += [b + (e << 23) for b in rows[::5] for e in (-100, -20, -1, 1, 20, 60)]
    bits += [1, 0x3FF, 0x400000, 0x7FFFFF, 0x7F7FFFFF]  # subnormals, FLT_MAX
    xs = _f32(bits)
    got = _run([cp.log(cp.value(x)) for x in xs])
    want = np.log(np.array(xs, dtype=np.float64)).astype(np.float32)
    bad = [f"log({x!r}) = {g!r}, want {float(w)!r}" for x, g, w in zip(xs, got, want, strict=True)
           if R.ulp_distance(g, float(w)) > 1]
    assert not bad, bad[:8]
    assert R.f32_bits(got[bits.index(0x3F800000)]) == 0  # log(1) = +0


def _gap_pairs() -> tuple[list[float], list[float]]:
    rng = np.random.default_rng(23)
    ys = [1.0, 1.5, 3.0e-3, 0.7071068, 1.0e-40, 1.4e-45, 6.0e-39]  # normal and subnormal divisors
    xs, ds = [], []
    for y in ys:
        for gap in list(range(0, 277, 23)) + [15, 16, 17, 31, 32, 33, 255, 256, 276]:
            m = float(rng.uniform(1.0, 2.0))
            with np.errstate(over="ignore"):  # past FLT_MAX: skipped below
                x = np.float32(np.ldexp(np.float64(y) * m, gap))
            if np.isfinite(x) and x != 0:
                xs += [float(x), -float(x)]
                ds += [y, -y if gap % 2 else y]
    return xs, ds


def test_floor_divide_and_remainder_over_every_exponent_gap() -> None:
    xs, ys = _gap_pairs()
    a = [cp.value(x) for x in xs]
    b = [cp.value(y) for y in ys]
    got = _run([p // q for p, q in zip(a, b, strict=True)] + [p % q for p, q in zip(a, b, strict=True)])
    x32, y32 = np.array(xs, dtype=np.float32), np.array(ys, dtype=np.float32)
    with np.errstate(all="ignore"):
        want = np.concatenate([np.floor_divide(x32, y32), np.remainder(x32, y32)])
    names = ["//"] * len(xs) + ["%"] * len(xs)
    pairs = list(zip(xs, ys, strict=True)) * 2
    bad = [f"{p[0]!r} {n} {p[1]!r} = {g!r}, want {float(w)!r}"
           for n, p, g, w in zip(names, pairs, got, want, strict=True)
           if R.f32_bits(g) != R.f32_bits(float(w))]
    assert not bad, bad[:8]
