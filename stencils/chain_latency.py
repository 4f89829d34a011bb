#!/usr/bin/env python3
"""Cycles per step of a dependent chain of fused sin/cos, by llvm-mca, at a revision and now.

    python3 stencils/chain_latency.py REV [--cpus znver3,skylake,cortex-a72]

The chain is the one benches/trig_latency.py times through the stencils (v = x + sin v ·
cos v · 10^-3, each step waiting for the one before, as the IK example's gradient steps
do), here with cpm_sincos_body inlined into one C function compiled with the stencil
flags of x86_64 and aarch64 (zig cc, stencils/build.py's -mcpu). llvm-mca runs the
function's body 200 times with its result fed back as its argument: the cycles per
iteration are the chain's latency on the CPU model, without the noise of a shared
machine. Two bodies: the scalar one (one sincos a step, as the st_sincos_f stencils and
the benchmark's chain run it) and the packed one (four lanes a step in the vector
registers, as IK's st_pack4_sincos_f steps run it). mathlib.c at git revision REV and
the working tree's, side by side.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ITERATIONS = 200
STEPS = {
    # one sincos per step, the scalar body (cpm_sincosf, the st_sincos_f stencils)
    "scalar": r"""
#include "mathlib.c"
float step(float v, float x) { float s, c; cpm_sincos_body(v, &s, &c, 0); return x + s * c * 1e-3f; }
""",
    # four lanes per step, the vector body as gen_packs.py's cpm_pack4_sincos_f runs it
    # (IK's sincos packs)
    "packed": r"""
#include "mathlib.c"
typedef float v4 __attribute__((vector_size(16)));
v4 step(v4 v, v4 x) {
    float xs[4] = {v[0], v[1], v[2], v[3]}, s[4], c[4];
    _Pragma("clang loop vectorize_width(4) interleave_count(1)")
    for (int k = 0; k < 4; k++) cpm_sincos_body(xs[k], &s[k], &c[k], 1);
    v4 sv = {s[0], s[1], s[2], s[3]}, cv = {c[0], c[1], c[2], c[3]};
    return x + sv * cv * 1e-3f;
}
""",
}
# llvm-mca CPU models -> (zig target, stencils/build.py's -mcpu for it, llvm-mca triple)
ARCH = {"x86_64": ("x86_64-freestanding", "-mcpu=x86_64", "x86_64"),
        "aarch64": ("aarch64-freestanding", "-mcpu=generic", "aarch64")}


def arch_of(cpu: str) -> str:
    return "aarch64" if cpu.startswith(("cortex", "neoverse", "apple")) else "x86_64"


def body_asm(src_dir: str, arch: str, form: str) -> str:
    """The instructions of step() without its return, as llvm-mca reads them."""
    target, mcpu, _ = ARCH[arch]
    with open(os.path.join(src_dir, "step.c"), "w") as f:
        f.write(STEPS[form])
    out = os.path.join(src_dir, f"step_{arch}_{form}.s")
    subprocess.run([sys.executable, "-m", "ziglang", "cc", "-target", target, mcpu, "-O2",
                    "-ffp-contract=off", "-fno-builtin", "-ffreestanding", "-fno-pic", "-g0",
                    "-I", src_dir, "-S", "-o", out, os.path.join(src_dir, "step.c")],
                   check=True, capture_output=True)
    lines, inside = [], False
    for line in open(out):
        if re.match(r"^step:", line):
            inside = True
            continue
        if inside and re.match(r"^\s*(ret|retq)\b", line):
            break
        if inside and line.strip() and not re.match(r"^\s*(\.|#|//|\.L)", line) \
                and not line.startswith(".L"):
            lines.append(line)
    return "".join(lines)


def cycles(asm: str, arch: str, cpu: str) -> tuple[float, int]:
    with tempfile.NamedTemporaryFile("w", suffix=".s", delete=False) as f:
        f.write(asm)
    try:
        out = subprocess.run(["llvm-mca", f"-mtriple={ARCH[arch][2]}", f"-mcpu={cpu}",
                              f"-iterations={ITERATIONS}", f.name],
                             check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(f.name)
    total = int(re.search(r"Total Cycles:\s+(\d+)", out).group(1))
    count = int(re.search(r"Instructions:\s+(\d+)", out).group(1)) // ITERATIONS
    return total / ITERATIONS, count


def sources(rev: str, tmp: str) -> dict[str, str]:
    dirs = {}
    for name, ref in ((rev, rev), ("now", None)):
        d = os.path.join(tmp, name.replace("/", "_"))
        os.makedirs(d)
        for file in ("mathlib.c", "mathlib.h"):
            if ref is None:
                text = open(os.path.join(HERE, file)).read()
            else:
                text = subprocess.run(["git", "show", f"{ref}:stencils/{file}"], cwd=HERE, check=True,
                                      capture_output=True, text=True).stdout
            with open(os.path.join(d, file), "w") as f:
                f.write(text)
        dirs[name] = d
    return dirs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rev", help="git revision to compare with (e.g. main)")
    ap.add_argument("--cpus", default="znver3,skylake,cortex-a72", help="llvm-mca CPU models")
    args = ap.parse_args()
    cpus = args.cpus.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        dirs = sources(args.rev, tmp)
        asm = {(name, arch, form): body_asm(d, arch, form) for name, d in dirs.items()
               for arch in {arch_of(c) for c in cpus} for form in STEPS}
        print(f"| body | llvm-mca CPU | {args.rev}: cycles/step (instructions) | now | now / {args.rev} |")
        print("| --- | --- | ---: | ---: | ---: |")
        for form in STEPS:
            for cpu in cpus:
                arch = arch_of(cpu)
                (before, nb), (after, na) = (cycles(asm[(name, arch, form)], arch, cpu) for name in dirs)
                print(f"| {form} | {cpu} ({arch}) | {before:.0f} ({nb}) | {after:.0f} ({na}) | "
                      f"{after / before:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
