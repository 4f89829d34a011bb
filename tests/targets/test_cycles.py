"""Cortex-M4 cycle bounds (``tg.max_cycles()`` / ``min_cycles()``, stencils/cycles.py).

Two references: the per-instruction costs are checked against the Cortex-M4 Technical
Reference Manual's timing tables (numbers typed from the manual here, not read from
cycles.py), and whole programs run in unicorn: every executed instruction (a failed
IT-block one included, which the core issues as a NOP) is weighted with those costs, and
the sum must lie between the static bounds, which come from the control-flow walk.
"""

from __future__ import annotations

import math
import os
import re
import sys
from pathlib import Path
from typing import Any

import capstone  # type: ignore[import-untyped]
import copapy as cp
import pytest
from copapy import _emulator
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "stencils"))
import cfg  # type: ignore[import-not-found]  # noqa: E402
import cycles  # type: ignore[import-not-found]  # noqa: E402

pytestmark = pytest.mark.skipif(bool(os.environ.get("COPAPY_TEST_TARGET")),
                                reason="Cortex-M4 in the emulator, once in the native run")


def _cost(text: str, kind: str = "op") -> tuple[int, int]:
    return tuple(cycles.weight(cfg.Insn(0, text, kind)))  # type: ignore[return-value]


@pytest.mark.parametrize(("text", "kind", "want"), [
    ("adds r0, r1, r2", "op", (1, 1)),
    ("umull r0, r1, r2, r3", "op", (1, 1)),
    ("moveq r0, #1", "op", (1, 1)),
    ("ldr r0, [r1, #4]", "op", (1, 2)),  # 2, or 1 pipelined with a neighbour
    ("str.w r0, [r1]", "op", (1, 2)),
    ("ldrd r0, r1, [r2]", "op", (3, 3)),
    ("push {r4, r5, r6, r7, lr}", "op", (6, 6)),  # 1 + N
    ("pop {r4, r5, r7, pc}", "ret", (6, 8)),  # 1 + N + P, P = 1..3
    ("vpush {d8, d9}", "op", (5, 5)),  # 1 + N, N words
    ("sdiv r0, r1, r2", "op", (2, 12)),
    ("vdiv.f32 s0, s1, s2", "op", (14, 14)),
    ("vsqrt.f32 s0, s0", "op", (14, 14)),
    ("vmul.f32 s0, s1, s2", "op", (1, 1)),
    ("vldr s0, [r0]", "op", (1, 2)),
    ("vmov r0, s0", "op", (1, 1)),
    ("bne.w 0x40", "cond", (1, 4)),  # 1 not taken, 1 + P taken
    ("bl 0x80", "call", (1, 4)),
])
def test_instruction_costs_follow_the_reference_manual(text: str, kind: str,
                                                        want: tuple[int, int]) -> None:
    assert _cost(text, kind) == want


BRANCH = re.compile(r"^(b|bl|bx|blx|cbz|cbnz|b(eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le))"
                    r"(\.w|\.n)?$")


def weighted_run(tg: Any) -> tuple[int, int]:
    """(fewest, most) cycles of one run in unicorn, each executed instruction weighted."""
    emu = _emulator.Emulator(tg.arch)
    emu.install(bytes(tg.program_bytes()))
    uc = emu._require()
    md = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB | capstone.CS_MODE_MCLASS)
    total = [0, 0]
    pending: set[int] = set()

    def add(insn: Any) -> None:
        kind = "cond" if BRANCH.match(insn.mnemonic) else "op"
        lo, hi = _cost(f"{insn.mnemonic} {insn.op_str}", kind)
        total[0] += lo
        total[1] += hi

    def hook(_uc: Any, addr: int, size: int, _data: Any) -> None:
        if addr in pending:
            pending.discard(addr)
            return
        insn = next(md.disasm(bytes(_uc.mem_read(addr, size)), addr))
        add(insn)
        if insn.mnemonic.startswith("it"):
            block = list(md.disasm(bytes(_uc.mem_read(addr + 2, 16)), addr + 2,
                                   count=len(insn.mnemonic) - 1))
            for b in block:  # issued even when the condition fails
                add(b)
                pending.add(b.address)

    code_end = _emulator.CODE_BASE + emu._code_len
    uc.hook_add(emu._uc_mod.UC_HOOK_CODE, hook, begin=_emulator.CODE_BASE, end=code_end - 1)
    emu.run()
    return total[0], total[1]


FLOATS = [0.0, -0.0, 1.5, -3.25, math.nan, math.inf, -math.inf, 1e-45, 3e38, 100.0]
OPS = [lambda a, b: a + b, lambda a, b: a * b, lambda a, b: a / b, cp.minimum,
       lambda a, b: cp.exp(a) * b, lambda a, b: cp.sin(a) + b, lambda a, b: a ** b,
       lambda a, b: cp.sqrt(a), lambda a, b: a // b, lambda a, b: cp.tanh(a) - b]


@settings(max_examples=25, deadline=None)
@given(ops=st.lists(st.integers(0, len(OPS) - 1), min_size=1, max_size=8),
       x=st.sampled_from(FLOATS), y=st.sampled_from(FLOATS))
def test_a_run_stays_within_its_cycle_bounds(ops: list[int], x: float, y: float) -> None:
    a, b = cp.value(x), cp.value(y)
    for k in ops:
        a, b = OPS[k](a, b), a
    tg = cp.Target("cortex-m4")
    tg.compile(a)
    lo, hi = weighted_run(tg)
    assert tg.min_cycles() <= lo <= hi <= tg.max_cycles()
    assert tg.min_instructions() <= tg.min_cycles()


def test_other_targets_say_what_is_covered() -> None:
    tg = cp.Target("x86_64")
    tg.compile(cp.value(1.0) + 2.0)
    with pytest.raises(ValueError, match="cortex-m4 only"):
        tg.max_cycles()


ARRAYS = [lambda xs: cp.exp(cp.array(xs)), lambda xs: cp.sin(cp.array(xs)) * 2.0,
          lambda xs: cp.array(xs).sort(),
          lambda xs: cp.array(xs).reshape(2, 3) @ cp.array(xs).reshape(3, 2),
          lambda xs: cp.array(xs).reshape(2, 3).max(axis=0) / cp.array(xs[:3]),
          lambda xs: cp.solve(cp.array([[2.0, 1.0], [1.0, 3.0]]), cp.array(xs[:2])),
          lambda xs: cp.nn.avg_pool2d(cp.array(xs).reshape(1, 2, 3), 2, padding=1)]


@pytest.mark.parametrize("build", ARRAYS)
def test_array_steps_run_their_cycle_bounds(build: Any) -> None:
    # array steps are weighted along the path they run (one per shape): the sums agree
    for xs in ([1.5, -0.0, math.nan, 3e38, 1e-45, -math.inf], [float(k) for k in range(6)]):
        tg = cp.Target("cortex-m4")
        tg.compile(build(xs))
        lo, hi = weighted_run(tg)
        if build is ARRAYS[1]:  # sin's paths depend on the elements: a + b·n bounds them
            assert tg.min_cycles() <= lo <= hi <= tg.max_cycles()
        else:
            assert (tg.min_cycles(), tg.max_cycles()) == (lo, hi)
