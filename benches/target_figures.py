"""Per-target figures for the README: stencil object size, program sizes, instructions per op.

    .venv/bin/python benches/target_figures.py

For every target: the size of its committed stencil object; code and data bytes of the
README's basic example and of the 48-step inverse-kinematics program; and the number of
instructions the stencils for `add`, `mul` and `sin` cost (from the golden disassembly
`stencils/<target>.dis`, without the dropped tail jump; `sin` also counts its helper
`cpm_sinf`, which is copied once per program).
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any

import copapy as cp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGETS = ["x86_64", "aarch64", "armv7", "armv6", "cortex-m4", "riscv64", "riscv32"]


def functions(dis: str) -> dict[str, list[str]]:
    """Instruction lines per function of an objdump listing (literal data excluded)."""
    out: dict[str, list[str]] = {}
    cur: list[str] | None = None
    data = False
    for line in dis.splitlines():
        m = re.match(r"^[0-9a-f]+ <([^>]+)>:$", line)
        if m:
            if m.group(1).startswith("$"):
                data = m.group(1).startswith("$d")
            else:
                cur, data = out.setdefault(m.group(1), []), False
            continue
        if cur is not None and not data and re.match(r"^\s+[0-9a-f]+:\s+\S", line) \
                and not re.match(r"^\s+[0-9a-f]+:\s+R_", line):
            cur.append(line)
    return out


def instructions(funcs: dict[str, list[str]], name: str, target: str) -> int:
    """Instructions of a stencil as linked: its tail jump (two on RISC-V) is dropped."""
    tail = 2 if target.startswith("riscv") else 1
    return len(funcs[name]) - tail


def basic() -> list[Any]:
    a, b = cp.value(0.25), cp.value(0.87)
    c = a + b * 2.0
    return [c, c**2 + cp.sin(a), cp.sqrt(b)]


def inverse_kinematics() -> list[Any]:
    target = cp.vector([0.7, 0.7])
    theta: Any = cp.vector([cp.value(0.0), cp.value(0.5)])
    for _ in range(48):
        x = cp.cos(theta[0]) + 0.5 * cp.cos(theta[0] + theta[1])
        y = cp.sin(theta[0]) + 0.5 * cp.sin(theta[0] + theta[1])
        err = (x - target[0]) ** 2 + (y - target[1]) ** 2
        theta = theta - 0.1 * cp.vector(cp.grad(err, [theta[0], theta[1]]))
    return [theta[0], theta[1], err]


def sizes(target: str, build: Any) -> tuple[int, int]:
    tg = cp.Target(target)
    tg.compile(build())
    _, code, data = tg.stats()
    return code, data


def main() -> int:
    print("| target | stencil object | basic example code + data | inverse kinematics code + data "
          "| add | mul | sin (+ cpm_sinf) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for t in TARGETS:
        obj = os.path.getsize(os.path.join(ROOT, "stencils", f"{t}.o"))
        with open(os.path.join(ROOT, "stencils", f"{t}.dis")) as f:
            funcs = functions(f.read())
        bc, bd = sizes(t, basic)
        ic, idata = sizes(t, inverse_kinematics)
        add = instructions(funcs, "st_add_f_r0r1_r0", t)
        mul = instructions(funcs, "st_mul_f_r0r1_r0", t)
        sin = instructions(funcs, "st_sin_f_r0_r0", t)
        helper = len(funcs["cpm_sinf"])
        print(f"| {t} | {obj:,} B | {bc:,} + {bd:,} B | {ic:,} + {idata:,} B | {add} | {mul} "
              f"| {sin} (+ {helper}) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
