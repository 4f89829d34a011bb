"""Instructions one run of a compiled program executes, counted by unicorn.

The independent reference of the instruction-bound tests (tests/targets/
test_determinism.py, test_array_bounds.py): every instruction executed in the
program's code is counted (UC_HOOK_CODE), one at a time, during one run.
"""

from __future__ import annotations

from typing import Any

import capstone  # type: ignore[import-untyped]
from copapy import _core, _emulator


def _it_block(uc: Any, addr: int) -> list[int]:
    """Addresses of the instructions an IT instruction at addr predicates (none if it
    is not one): Thumb ``IT`` is 0xBFxy with a non-zero mask y."""
    hw = int.from_bytes(bytes(uc.mem_read(addr, 2)), "little")
    if hw & 0xFF00 != 0xBF00 or hw & 0xF == 0:
        return []
    mask = hw & 0xF
    length = 4 - (mask & -mask).bit_length() + 1
    md = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB | capstone.CS_MODE_MCLASS)
    code = bytes(uc.mem_read(addr + 2, 4 * length))
    return [i.address for i in md.disasm(code, addr + 2, count=length)]


def counted_run(tg: Any) -> int:
    """Instructions one run of tg's program executes, counted by unicorn.

    On Thumb, unicorn does not report an instruction of an IT block whose condition
    fails; the core still issues it (the Armv7-M manual: it executes as a NOP), so
    such a block counts all its instructions, as the static bounds do."""
    program = bytes(tg.program_bytes())
    # imported functions (cp.extern) answer 0: their own instructions are outside the
    # program's code and its bounds (only the call stencils count)
    stubs = {name: (lambda *_: 0) for name, _, _ in _core.program_imports(program)}
    emu = _emulator.Emulator(tg.arch, imports=stubs)
    emu.install(program)
    uc = emu._require()
    count = [0]
    predicated: set[int] = set()
    thumb = tg.arch == "cortex-m4"

    def hook(_uc: Any, addr: int, _size: int, _data: Any) -> None:
        if addr in predicated:
            predicated.discard(addr)  # counted with its IT instruction
            return
        count[0] += 1
        if thumb:
            block = _it_block(_uc, addr)
            predicated.update(block)
            count[0] += len(block)

    code_end = _emulator.CODE_BASE + emu._code_len
    uc.hook_add(emu._uc_mod.UC_HOOK_CODE, hook, begin=_emulator.CODE_BASE, end=code_end - 1)
    emu.run()
    return count[0]
