"""Instructions (and Cortex-M4 cycles) of one array step, from running it alone.

An array step's loops run as often as its shape says, and its shape is fixed when the
program is compiled: the stencil build allows a conditional branch in a loop kernel
only on element counts and shape words (``stencils/branch_allowlist.py``), never on
element values. So the step's instruction count is one number per compiled program,
and one run of the step alone finds it: the compiler links the step with the
program's data (its shape words) and ``st_return`` into a program of its own
(``Target`` passes these to ``_bounds.py``), and that program runs here in the
emulator. Each translated block of code the run enters is decoded once and its
instructions counted (all of them: an IT block's predicated instructions execute as
NOPs on the core, as the static tables count them).

The element values of that run are the program's initial ones; which values they are
does not matter, because no branch reads them (``tests/arrays/test_array_bounds.py``
runs every kernel over adversarial values on every target and finds the same count).
Array kernels that call a helper with data-dependent paths (``sin``/``cos``/``tan``)
are not counted this way: ``_bounds.py`` gives them the build's static a + b·n bound.
"""

from __future__ import annotations

import hashlib
from typing import Any

from copapy import _emulator, _m4_cycles

# far more than any step: an emulated run stops there with an error instead of hanging
_BUDGET = 4_000_000_000
# counts of the one-step programs run so far, by their bytes' digest (a program is
# often bounded twice: max_instructions() and min_instructions(), then save())
_COUNTED: dict[tuple[str, bytes], tuple[int, int, int]] = {}
_KEEP = 4096


def _disassembler(arch: str) -> Any:
    import capstone  # type: ignore[import-untyped]

    m = _emulator._machine(arch)
    mode = 0
    for name in m.cs_mode:
        mode |= getattr(capstone, name)
    return capstone.Cs(getattr(capstone, m.cs_arch), mode)


def step_cost(arch: str, program: bytes) -> tuple[int, int, int]:
    """(instructions, fewest cycles, most cycles) of one run of a one-step program,
    its final st_return included; the cycles are Cortex-M4's (``_m4_cycles.py``) and 0
    on other targets."""
    key = (arch, hashlib.sha256(program).digest())
    if key not in _COUNTED:
        if len(_COUNTED) >= _KEEP:
            _COUNTED.clear()
        _COUNTED[key] = _run(arch, program)
    return _COUNTED[key]


def _run(arch: str, program: bytes) -> tuple[int, int, int]:
    emu = _emulator.Emulator(arch, budget=_BUDGET)
    emu.install(program)
    uc = emu._require()
    md = _disassembler(arch)
    code_end = _emulator.CODE_BASE + emu._code_len
    cycles = arch == "cortex-m4"
    blocks: dict[tuple[int, int], tuple[int, int, int]] = {}
    total = [0, 0, 0]

    def hook(_uc: Any, addr: int, size: int, _data: Any) -> None:
        key = (addr, size)
        cost = blocks.get(key)
        if cost is None:
            insns = list(md.disasm(bytes(_uc.mem_read(addr, size)), addr))
            if sum(i.size for i in insns) != size:
                raise RuntimeError(f"could not decode the {size}-byte block at {addr:#x}")
            lo = hi = 0
            if cycles:
                for i in insns:
                    w = _m4_cycles.weight(i.mnemonic, i.op_str)
                    lo, hi = lo + w[0], hi + w[1]
            cost = blocks[key] = (len(insns), lo, hi)
        total[0] += cost[0]
        total[1] += cost[1]
        total[2] += cost[2]

    uc.hook_add(emu._uc_mod.UC_HOOK_BLOCK, hook, begin=_emulator.CODE_BASE, end=code_end - 1)
    emu.run()
    return total[0], total[1], total[2]
