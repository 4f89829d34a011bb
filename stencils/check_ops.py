#!/usr/bin/env python3
"""Check every op_* in ops.h against NumPy int32 / float32, bit for bit.

ops.h is compiled natively (zig cc, -O2 -ffp-contract=off) with a harness generated
from gen_stencils' table, so every operation the stencils use is covered; inputs are
edge values (0, +-1, INT_MIN, INT_MAX, shift counts around 32, +-0, +-inf, NaN,
subnormals, ...) crossed with each other, plus random values. The math functions
(sin cos tan asin acos atan exp log tanh atan2 pow) are measured by ulp_error.py instead
(they are not exact), sigmoid (exp's bits, an add and a divide) by tests/numerics/test_neural.py.

min/max (np.minimum / np.maximum) and select (np.where(c != 0, x, y), for cp.iif) are
compared on the exact bits, NaN payloads included: they must return one operand
unchanged, and a NaN or inf in the operand not chosen must not leak.

Usage: python3 stencils/check_ops.py     (needs numpy; exit 1 on any mismatch)
"""
import ctypes
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_stencils  # noqa: E402
import optable  # noqa: E402

SKIP = {"sin", "cos", "tan", "asin", "acos", "atan", "exp", "log", "tanh", "atan2", "pow",
        "sigmoid"}
EXACT_BITS = {"min", "max"}

NP_BIN = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
    "floordiv": np.floor_divide, "mod": np.remainder, "and": np.bitwise_and,
    "or": np.bitwise_or, "xor": np.bitwise_xor, "shl": np.left_shift, "shr": np.right_shift,
    "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal,
    "eq": np.equal, "ne": np.not_equal, "min": np.minimum, "max": np.maximum,
}


def saturated(x, lo, hi):
    """The documented cast rule (docs/math.md, "Casts"), written out: truncate toward 0,
    NaN gives 0, out of range saturates (NumPy's astype leaves those cases undefined)."""
    if x.dtype != np.float32:
        return np.clip(x, lo, hi)
    x64 = x.astype(np.float64)
    return np.where(np.isnan(x64), 0.0, np.clip(np.trunc(x64), lo, hi)).astype(np.int64)


NP_UN = {"neg": np.negative, "abs": np.abs, "sqrt": np.sqrt, "copy": lambda x: x.copy(),
         "itof": lambda x: x.astype(np.float32),
         "ftoi": lambda x: saturated(x, -2**31, 2**31 - 1),
         "tobyte": lambda x: saturated(x, 0, 255)}
CT = {"f": "float", "i": "int32_t"}
NPT = {"f": np.float32, "i": np.int32}


def harness():
    lines = [f'#include "{os.path.join(HERE, "ops.h")}"']
    for (ty, rty), ops in gen_stencils.BINARY.items():
        for op in ops.split():
            if op in SKIP:
                continue
            lines.append(f"void t_{op}_{ty}(const {CT[ty]} *x, const {CT[ty]} *y, {CT[rty]} *o, int n)"
                         f" {{ for (int k = 0; k < n; k++) o[k] = op_{op}_{ty}(x[k], y[k]); }}")
    for (ty, rty), ops in gen_stencils.UNARY.items():
        for op in ops.split():
            if op in SKIP:
                continue
            lines.append(f"void t_{op}_{ty}(const {CT[ty]} *x, {CT[rty]} *o, int n)"
                         f" {{ for (int k = 0; k < n; k++) o[k] = op_{op}_{ty}(x[k]); }}")
    lines.append("void t_select_f(const int32_t *c, const float *x, const float *y, float *o, int n)"
                 " { for (int k = 0; k < n; k++) o[k] = op_select_f(c[k], x[k], y[k]); }")
    lines.append(f'#include "{os.path.join(HERE, "mathlib.c")}"')
    return "\n".join(lines) + "\n"


def inputs(ty, rng):
    if ty == "i":
        edge = [0, 1, -1, 2, -2, 3, -3, 7, -7, 31, 32, 33, -32, 64, 100, -100,
                2**31 - 1, -2**31, -2**31 + 1, 2**30, 12345, -98765]
        edge = np.array(edge, dtype=np.int64).astype(np.int32)
        rand = rng.integers(-2**31, 2**31, 4000, dtype=np.int64).astype(np.int32)
        small = rng.integers(-40, 40, 4000).astype(np.int32)
        x, y = np.meshgrid(edge, edge)
        return (np.concatenate([x.ravel(), rand, small, rand]),
                np.concatenate([y.ravel(), small, rand, np.roll(rand, 1)]))
    edge = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -1.5, 2.0, 3.0, -7.0, 1e-45, -1e-45, 1.1754942e-38,
                     3.4028235e38, -3.4028235e38, np.inf, -np.inf, np.nan, 0.1, 1e7, 16777217.0],
                    dtype=np.float32)
    # NaNs with other signs and payloads (min/max/select must pass them through unchanged)
    nans = np.array([0xffc00000, 0x7fc00001, 0x7f800001, 0xffbfffff], dtype=np.uint32).view(np.float32)
    edge = np.concatenate([edge, nans])
    rand = rng.integers(0, 2**32, 4000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    nice = (rng.standard_normal(4000) * 10).astype(np.float32)
    x, y = np.meshgrid(edge, edge)
    return (np.concatenate([x.ravel(), rand, nice, nice]),
            np.concatenate([y.ravel(), nice, rand, np.roll(nice, 1)]))


def same(a, b, exact=False):
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype == np.float32 and exact:
        return a.view(np.uint32) == b.view(np.uint32)
    if a.dtype == np.float32:
        return (a.view(np.uint32) == b.view(np.uint32)) | (np.isnan(a) & np.isnan(b))
    return a == b


def missing_references():
    """Table ops this script has no NumPy reference for (and does not skip)."""
    refs = {**NP_BIN, **NP_UN}
    return [op.name for op in optable.OPS if op.name not in SKIP and op.name not in refs]


def main():
    rng = np.random.default_rng(7)
    bad = 0
    for name in missing_references():
        print(f"op '{name}' of stencils/optable.py has no NumPy reference in check_ops.py "
              "(add it to NP_BIN / NP_UN, or to SKIP if ulp_error.py measures it)")
        bad += 1
    with tempfile.TemporaryDirectory() as tmp:
        src, so = os.path.join(tmp, "ops.c"), os.path.join(tmp, "ops.so")
        open(src, "w").write(harness())
        subprocess.run([sys.executable, "-m", "ziglang", "cc", "-O2", "-ffp-contract=off",
                        "-fno-builtin", "-shared", "-fPIC", "-o", so, src], check=True)
        lib = ctypes.CDLL(so)
        ptr = lambda a: a.ctypes.data_as(ctypes.c_void_p)  # noqa: E731
        np.seterr(all="ignore")
        for (ty, rty), ops in gen_stencils.BINARY.items():
            x, y = inputs(ty, rng)
            for op in ops.split():
                if op in SKIP:
                    continue
                out = np.empty(x.size, dtype=NPT[rty])
                getattr(lib, f"t_{op}_{ty}")(ptr(x), ptr(y), ptr(out), ctypes.c_int(x.size))
                ref = NP_BIN[op](x, y).astype(NPT[rty])
                ok = same(out, ref, exact=op in EXACT_BITS)
                n = int((~ok).sum())
                if n:
                    k = int(np.flatnonzero(~ok)[0])
                    print(f"op_{op}_{ty}: {n} mismatches, e.g. ({x[k]!r}, {y[k]!r}) -> {out[k]!r},"
                          f" numpy {ref[k]!r}")
                bad += n
        for (ty, rty), ops in gen_stencils.UNARY.items():
            x, _ = inputs(ty, rng)
            for op in ops.split():
                if op in SKIP:
                    continue
                out = np.empty(x.size, dtype=NPT[rty])
                getattr(lib, f"t_{op}_{ty}")(ptr(x), ptr(out), ctypes.c_int(x.size))
                ref = NP_UN[op](x).astype(NPT[rty])
                ok = same(out, ref)
                n = int((~ok).sum())
                if n:
                    k = int(np.flatnonzero(~ok)[0])
                    print(f"op_{op}_{ty}: {n} mismatches, e.g. {x[k]!r} -> {out[k]!r}, numpy {ref[k]!r}")
                bad += n
        # select: every condition class against every operand pair, incl. NaN/inf in
        # the operand not chosen; compared on the exact bits
        x, y = inputs("f", rng)
        conds = np.array([0, 1, -1, 2, -2**31, 2**31 - 1, 256], dtype=np.int64).astype(np.int32)
        c = np.repeat(conds, x.size)
        x, y = np.tile(x, conds.size), np.tile(y, conds.size)
        out = np.empty(x.size, dtype=np.float32)
        lib.t_select_f(ptr(c), ptr(x), ptr(y), ptr(out), ctypes.c_int(x.size))
        ref = np.where(c != 0, x, y)
        ok = same(out, ref, exact=True)
        n = int((~ok).sum())
        if n:
            k = int(np.flatnonzero(~ok)[0])
            print(f"op_select_f: {n} mismatches, e.g. ({c[k]}, {x[k]!r}, {y[k]!r}) -> {out[k]!r},"
                  f" numpy {ref[k]!r}")
        bad += n
    print("all ops match NumPy bit for bit" if not bad else f"{bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
