"""Bit-for-bit comparison of math helpers at an older commit and in the working tree.

    python3 stencils/compare_bits.py REV [--funcs expf,logf,powf] [--stride N] [--pairs N]

A rewrite meant to keep every result (a cheaper special-case selection, say) is checked
here: mathlib.c at git revision REV and the working tree's are compiled natively (zig cc,
the flags of ulp_error.py) into two shared libraries, and a C driver calls both. A
one-argument function runs on every float32 bit pattern (or every N-th with --stride);
powf on pairs: its special values against each other and against random bit patterns,
random bit-pattern pairs, x = 2^(w/y) over the whole result range (subnormal to overflow,
negative x with integer y), x within 1000 ulp of 1 with |y| up to 10^11, integer grids
and ordinary values. Exits 1 on any difference, printing the first ones.

The x86_64 build compares the x86_64 forms of the helpers; the forms other targets take
(e.g. masks on the bits where x86_64 uses minss) compile on this host too when their
`#if defined(__x86_64__) ...` is edited out by hand — the emulated test passes compare
the stencils of every target with NumPy.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

DRIVER = r"""
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
typedef float (*f1)(float);
typedef float (*f2)(float, float);
static uint64_t s = 88172645463325252ull;
static uint32_t rnd(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return (uint32_t)(s >> 11); }
static float fb(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t bf(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static double unif(void) { return (rnd() >> 8) * (1.0 / 16777216.0); }
static long bad = 0, total = 0;
static f2 po, pn;
static void check2(float x, float y) {
    uint32_t o = bf(po(x, y)), n = bf(pn(x, y));
    total++;
    if (o != n && bad++ < 10) printf("(%08x, %08x): old %08x new %08x\n", bf(x), bf(y), o, n);
}
static void pairs(long N) {
    static const float sp[] = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN, -NAN, 0.5f, -0.5f,
        2.0f, -2.0f, 3.0f, -3.0f, 0.999999f, 1.0000001f, -0.999999f, 16777215.0f, 16777216.0f,
        16777217.0f, -16777215.0f, 8388607.0f, 8388607.5f, 8388609.0f, 2147483648.0f, 4294967296.0f,
        4294967040.0f, -4294967296.0f, 2147483520.0f, 1.5f, -1.5f, 2.5f, -2.5f, 1e-45f, -1e-45f,
        1e-40f, 1.17549435e-38f, 3.4028235e38f, -3.4028235e38f, 100.0f, -100.0f, 1e10f, 1e-10f,
        127.0f, 128.0f, -149.0f, -150.0f, 0.1f, 7.0f};
    int ns = sizeof sp / sizeof sp[0];
    for (int i = 0; i < ns; i++)
        for (int j = 0; j < ns; j++) check2(sp[i], sp[j]);
    for (int i = 0; i < ns; i++)
        for (long k = 0; k < 20000; k++) { check2(sp[i], fb(rnd())); check2(fb(rnd()), sp[i]); }
    for (long k = 0; k < N; k++) check2(fb(rnd()), fb(rnd()));
    for (long k = 0; k < N; k++) {
        double w = -152 + 282 * unif();
        float y = (float)pow(10, -3 + 12.6 * unif());
        if (rnd() & 1) y = -y;
        float x = (float)exp2(w / y), yi = rintf(y);
        check2(x, y); check2(-x, yi); check2(x, yi);
    }
    for (long k = 0; k < N; k++)
        check2(1.0f + (float)((int32_t)(rnd() % 2001) - 1000) * 0x1p-23f,
               (float)((unif() * 2 - 1) * pow(10, 11 * unif())));
    for (int xi = -20; xi <= 20; xi++)
        for (int yi = -40; yi <= 40; yi++) { check2((float)xi, (float)yi); check2((float)xi, yi + 0.5f); }
    for (long k = 0; k < N; k++) {
        check2((float)(10 * unif()), (float)(20 * (unif() * 2 - 1)));
        check2(-(float)(10 * unif()), (float)(int)(40 * (unif() * 2 - 1)));
    }
}
int main(int argc, char **argv) {
    void *a = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL), *b = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
    if (!a || !b) { fprintf(stderr, "%s\n", dlerror()); return 2; }
    const char *name = argv[3];
    uint64_t stride = strtoull(argv[4], 0, 10);
    if (!strcmp(name, "cpm_powf")) {
        po = (f2)dlsym(a, name); pn = (f2)dlsym(b, name);
        pairs(atol(argv[5]));
    } else {
        f1 fo = (f1)dlsym(a, name), fn = (f1)dlsym(b, name);
        for (uint64_t k = 0; k < 0x100000000ull; k += stride) {
            float x = fb((uint32_t)k);
            uint32_t o = bf(fo(x)), n = bf(fn(x));
            total++;
            if (o != n && bad++ < 10) printf("%08x: old %08x new %08x\n", (uint32_t)k, o, n);
        }
    }
    printf("%s: %ld of %ld results differ\n", name, bad, total);
    return bad != 0;
}
"""


def build_lib(src_dir: str, out: str) -> None:
    subprocess.run([sys.executable, "-m", "ziglang", "cc", "-O2", "-ffp-contract=off", "-fno-builtin",
                    "-shared", "-fPIC", "-I", src_dir, "-o", out, os.path.join(src_dir, "mathlib.c")],
                   check=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("rev", help="the git revision of the old mathlib.c")
    ap.add_argument("--funcs", default="expf,logf,powf", help="helpers without the cpm_ prefix")
    ap.add_argument("--stride", type=int, default=1, help="every N-th bit pattern (one-argument)")
    ap.add_argument("--pairs", type=int, default=2_000_000, help="pairs per powf class")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        old = os.path.join(tmp, "old")
        os.mkdir(old)
        for name in ("mathlib.c", "mathlib.h"):
            text = subprocess.run(["git", "show", f"{args.rev}:stencils/{name}"], cwd=HERE, check=True,
                                  capture_output=True, text=True).stdout
            with open(os.path.join(old, name), "w") as f:
                f.write(text)
        build_lib(old, os.path.join(tmp, "old.so"))
        build_lib(HERE, os.path.join(tmp, "new.so"))
        with open(os.path.join(tmp, "driver.c"), "w") as f:
            f.write(DRIVER)
        driver = os.path.join(tmp, "driver")
        subprocess.run([sys.executable, "-m", "ziglang", "cc", "-O2", "-o", driver,
                        os.path.join(tmp, "driver.c"), "-ldl", "-lm"], check=True)
        failed = False
        for fn in args.funcs.split(","):
            run = subprocess.run([driver, os.path.join(tmp, "old.so"), os.path.join(tmp, "new.so"),
                                  f"cpm_{fn}", str(args.stride), str(args.pairs)])
            failed |= run.returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
