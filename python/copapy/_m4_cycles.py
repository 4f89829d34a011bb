"""Cortex-M4 cycles of one instruction, from the core's documented timings.

The Cortex-M4 Technical Reference Manual (ARM DDI 0439, "Processor instruction
timings", and the FPU's "FPU instruction set" table), assuming code and data in
zero-wait-state memory, no interrupt during the run and no contention from DMA. Per
instruction, (fewest, most) cycles:

* data processing, multiplies including the 64-bit UMULL/SMULL/UMLAL/SMLAL, IT (the most
  it costs; it can fold to 0), single-precision VADD/VSUB/VMUL/VNEG/VABS/VCMP/VCVT/VMRS and
  VMOV between a core and an FP register: 1;
* single loads and stores (LDR*, STR*, VLDR, VSTR): 1 when pipelined with a neighbour,
  else 2 (VLDR/VSTR of a double: 3); LDRD/STRD: 3; LDM/STM/PUSH/POP and VPUSH/VPOP: 1 +
  the number of 32-bit words moved (POP of PC adds a pipeline refill, 1-3);
* branches (B, BL, BX, conditional branches, CBZ/CBNZ): 1 (not taken) to 1 + 3 (taken,
  the pipeline refill P of 1-3 cycles);
* SDIV/UDIV: 2-12; VDIV.F32 and VSQRT.F32: 14; VMLA/VMLS/VFMA (never emitted:
  -ffp-contract=off): 3; VMOV of two core registers: 2.

Used by the stencil build (``stencils/cycles.py``, on the objdump text of each
function) and by ``_step_count.py`` (on capstone's text of what an array step runs);
both spell mnemonics and operands the same way for these rules.
"""

from __future__ import annotations

import re

_ONE = re.compile(r"^(vadd|vsub|vmul|vneg|vabs|vcmp|vcmpe|vcvt|vmrs|vmsr|it[te]*)$")
_LOAD_STORE = re.compile(r"^(ldr|ldrb|ldrh|ldrsb|ldrsh|str|strb|strh|vldr|vstr|ldrex|strex)$")
_MULTIPLE = re.compile(r"^(ldm|ldmia|ldmdb|stm|stmia|stmdb|push|pop|vpush|vpop|vldmia|vstmia|"
                       r"vldmdb|vstmdb)$")
_COND = "(eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le|al)"
_BRANCHES = ("b", "bl", "bx", "cbz", "cbnz")


def _base(mnemonic: str) -> str:
    """The mnemonic without width (.w/.n), data type (.f32) and condition suffixes."""
    m = mnemonic.split(".")[0]
    for known in ("ldrd", "strd", "sdiv", "udiv", "vdiv", "vsqrt", "vmla", "vmls", "vfma",
                  "vfms", "vnmla", "vnmls", "umull", "smull", "umlal", "smlal"):
        if m.startswith(known):
            return known
    if _MULTIPLE.match(m) or _LOAD_STORE.match(m):
        return m
    stripped = re.sub(_COND + "$", "", m)
    return stripped or m


def _registers(operands: str) -> int:
    """Registers in the {...} list of a load/store multiple (ranges r4-r7 counted)."""
    inside = re.search(r"\{([^}]*)\}", operands)
    if not inside:
        return 1
    count = 0
    for part in inside.group(1).split(","):
        part = part.strip()
        rng = re.match(r"^([a-z]+)(\d+)\s*-\s*[a-z]+(\d+)$", part)
        words = 2 if part.startswith("d") else 1  # a double register moves two words
        count += words * (int(rng.group(3)) - int(rng.group(2)) + 1 if rng else 1)
    return count


def weight(mnemonic: str, operands: str, branch: bool = False,
           ret: bool = False) -> tuple[int, int]:
    """(fewest, most) cycles of one instruction; `branch` / `ret` when the caller's
    control-flow analysis classified it as a jump or call / a return."""
    base = _base(mnemonic)
    if branch or base in _BRANCHES:
        return (1, 4)
    if base in ("ldrd", "strd"):
        return (3, 3)
    if _MULTIPLE.match(base):
        n = _registers(operands)
        refill = 3 if "pc" in operands else 0
        return (1 + n + (1 if refill else 0), 1 + n + refill)
    if _LOAD_STORE.match(base):
        return (2, 3) if operands.startswith("d") else (1, 2)  # VLDR.64 / VSTR.64: 3
    if base in ("sdiv", "udiv"):
        return (2, 12)
    if base in ("vdiv", "vsqrt"):
        return (14, 14)
    if base in ("vmla", "vmls", "vfma", "vfms", "vnmla", "vnmls"):
        return (3, 3)
    if base == "vmov" and operands.count(",") >= 2:
        return (2, 2)  # two core registers <-> a double or two singles
    if ret:
        return (2, 4)  # bx lr / pop {.., pc} counted above; a refill
    return (1, 1)
