"""The vectorised array kernels of exp and tanh (SSE2 on x86_64, NEON on AArch64) give the
scalar helper's bits element by element, and both stay within 1 ulp of the exact result.

The array kernel runs groups of 4 elements through vector code and the last n % 4
through the scalar code (stencils/gen_arrays.py VECTOR_MATH); lengths 1..13 put every
element position in both. The reference is Python's float64 math rounded to float32 for
the ulp bar, and NumPy's float32 special values (NaN, inf, signed zeros) exactly.
"""

from __future__ import annotations

import math
import os
import struct
from collections.abc import Callable
from typing import Any

import copapy as cp
import numpy as np
import pytest

# the module checks both vectorising targets itself (x86_64 natively, aarch64 in the
# emulator); the suite's reruns under COPAPY_TEST_TARGET would repeat the same runs
pytestmark = pytest.mark.skipif(bool(os.environ.get("COPAPY_TEST_TARGET")),
                                reason="covers x86_64 and aarch64 in the native run")


def f32(bits: int) -> float:
    return float(struct.unpack("<f", struct.pack("<I", bits))[0])


def bits(x: float) -> int:
    return int(struct.unpack("<I", struct.pack("<f", x))[0])


ADVERSARIAL = [0.0, -0.0, math.nan, math.inf, -math.inf, f32(1), f32(0x807FFFFF), 3.0e38,
               -3.0e38, 88.72, 88.73, -87.4, -103.9, -104.5, 9.49, 9.51, 2.0**-12, -(2.0**-13),
               1e-30, 0.5, -0.25]
FUNCS: dict[str, tuple[Callable[[Any], Any], Callable[[float], float]]] = {
    "exp": (cp.exp, math.exp),
    "tanh": (cp.tanh, math.tanh),
}


def _inputs(seed: int) -> list[float]:
    rng = np.random.default_rng(seed)
    rand = rng.uniform(-20.0, 20.0, 40).astype(np.float32).tolist()
    return [float(np.float32(x)) for x in ADVERSARIAL] + [float(x) for x in rand]


def _reference(ref: Callable[[float], float], x: float) -> float:
    """float64 reference (inf on overflow, NaN on NaN)."""
    if math.isnan(x):
        return math.nan
    try:
        return ref(x)
    except OverflowError:
        return math.inf


def _ulp_error(got: float, exact: float) -> float:
    if math.isnan(exact):
        return 0.0 if bits(got) == 0x7FC00000 else math.inf
    r32 = float(np.float32(exact)) if abs(exact) < 3.5e38 else math.copysign(math.inf, exact)
    if math.isinf(r32) or r32 == 0.0 or math.isinf(got):
        return 0.0 if bits(got) == bits(r32) else math.inf
    e = math.frexp(exact)[1]
    ulp = math.ldexp(1.0, max(e - 24, -149))
    return abs(got - exact) / ulp


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
@pytest.mark.parametrize("name", sorted(FUNCS))
def test_vector_kernel_gives_the_scalar_bits_within_one_ulp(arch: str, name: str) -> None:
    fn, ref = FUNCS[name]
    xs = _inputs(7)
    for n in (1, 3, 4, 5, 13):
        for start in range(0, len(xs) - n + 1, max(1, n)):
            chunk = xs[start:start + n]
            arr = fn(cp.array(chunk))
            scal = [fn(cp.value(x)) for x in chunk]
            tg = cp.Target(arch)
            tg.compile([arr, *scal])
            tg.run()
            got_arr = [float(v) for v in tg.read_value(arr)]
            got_scal = [float(v) for v in tg.read_value(scal)]
            for x, a, s in zip(chunk, got_arr, got_scal, strict=True):
                assert bits(a) == bits(s), (arch, name, n, x, a, s)
                assert _ulp_error(a, _reference(ref, x)) <= 1.0, (arch, name, x, a)
