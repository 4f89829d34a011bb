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
import sys
from typing import Any

import copapy as cp
from copapy import _targets

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "stencils"))
from build import parse_functions  # noqa: E402  (the golden-disassembly reader)

TARGETS = _targets.names()  # the shared table (crates/copapy-program/src/targets.rs)


def instructions(funcs: dict[str, Any], name: str, target: str) -> int:
    """Instructions of a stencil as linked (literal data excluded): its tail jump (two
    instructions on RISC-V) is dropped."""
    tail = 2 if target.startswith("riscv") else 1
    return sum(1 for insn in funcs[name] if not insn[3]) - tail


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
            funcs = parse_functions(f.read())
        bc, bd = sizes(t, basic)
        ic, idata = sizes(t, inverse_kinematics)
        add = instructions(funcs, "st_add_f_r0r1_r0", t)
        mul = instructions(funcs, "st_mul_f_r0r1_r0", t)
        sin = instructions(funcs, "st_sin_f_r0_r0", t)
        helper = sum(1 for insn in funcs["cpm_sinf"] if not insn[3])
        print(f"| {t} | {obj:,} B | {bc:,} + {bd:,} B | {ic:,} + {idata:,} B | {add} | {mul} "
              f"| {sin} (+ {helper}) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
