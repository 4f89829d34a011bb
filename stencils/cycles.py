"""Cortex-M4 cycles per call of every stencil and helper, from its control-flow graph.

The same longest/shortest path walk as ``bounds.py`` (``cfg.path_bounds``), each
instruction weighted by its cycle count from the Cortex-M4 Technical Reference Manual
(ARM DDI 0439, "Processor instruction timings", and the FPU's "FPU instruction set"
table). Assumptions, which the numbers hold under: code and data in zero-wait-state
memory (SRAM or flash with the accelerator hitting, on the same bus matrix path as
copapy's firmware places them), no interrupt during the run, no contention from DMA.

Per instruction, (fewest, most) cycles:

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

A conditional branch is charged its taken cost on every path (an upper bound). The 1-D
array kernels (loops over n) are left without a cycle bound (``null``) for now, as are
the kernels with nested loops, so ``Target.max_cycles()`` covers scalar programs.
"""

from __future__ import annotations

import re

TARGET = "cortex-m4"

_ONE = re.compile(r"^(vadd|vsub|vmul|vneg|vabs|vcmp|vcmpe|vcvt|vmrs|vmsr|it[te]*)$")
_LOAD_STORE = re.compile(r"^(ldr|ldrb|ldrh|ldrsb|ldrsh|str|strb|strh|vldr|vstr|ldrex|strex)$")
_MULTIPLE = re.compile(r"^(ldm|ldmia|ldmdb|stm|stmia|stmdb|push|pop|vpush|vpop|vldmia|vstmia|"
                       r"vldmdb|vstmdb)$")
_COND = "(eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le|al)"


def _base(mnemonic):
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


def _registers(operands):
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


def weight(i):
    """(fewest, most) cycles of one classified instruction (cfg.Insn)."""
    parts = i.text.split(None, 1)
    mnem, ops = parts[0], (parts[1] if len(parts) > 1 else "")
    base = _base(mnem)
    if i.kind in ("cond", "jump", "call", "tail", "tailcall") or base in ("b", "bl", "bx", "cbz",
                                                                            "cbnz"):
        return (1, 4)
    if base in ("ldrd", "strd"):
        return (3, 3)
    if _MULTIPLE.match(base):
        n = _registers(ops)
        refill = 3 if "pc" in ops else 0
        return (1 + n + (1 if refill else 0), 1 + n + refill)
    if _LOAD_STORE.match(base):
        return (2, 3) if ops.startswith("d") else (1, 2)  # VLDR.64 / VSTR.64: 3
    if base in ("sdiv", "udiv"):
        return (2, 12)
    if base in ("vdiv", "vsqrt"):
        return (14, 14)
    if base in ("vmla", "vmls", "vfma", "vfms", "vnmla", "vnmls"):
        return (3, 3)
    if base == "vmov" and ops.count(",") >= 2:
        return (2, 2)  # two core registers <-> a double or two singles
    if i.kind == "ret":
        return (2, 4)  # bx lr / pop {.., pc} counted above; a refill
    return (1, 1)


def table(funcs):
    """{name: [fewest, most] cycles or None} for the Cortex-M4 object's functions
    (build.parse_functions output)."""
    import bounds

    return {n: (list(b) if b else None)
            for n, b in sorted(bounds.target_bounds(TARGET, funcs, weight).items())}
