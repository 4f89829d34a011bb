"""Instructions one run of a compiled program executes, counted by unicorn.

The independent reference of the instruction-bound tests (tests/targets/
test_determinism.py, test_array_bounds.py): every instruction executed in the
program's code is counted (UC_HOOK_CODE), one at a time, during one run.
"""

from __future__ import annotations

from typing import Any

import capstone  # type: ignore[import-untyped]
from copapy import Target, _core, _emulator


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


class ProgramOnly:
    """A device (``Target(arch, runner=ProgramOnly(arch))``) that only keeps the program
    it is given: for a Target whose program :func:`counted_run` runs in an emulator of its
    own, so compiling does not first set up a second emulator (for a foreign target) that
    nothing runs. Running or reading it is a test error."""

    def __init__(self, arch: str) -> None:
        self.arch = arch
        self.program = b""

    def install(self, program: bytes) -> None:
        self.program = bytes(program)

    def run(self) -> None:
        raise AssertionError("ProgramOnly runs nothing: count the program with counted_run()")

    def read(self, offset: int, size: int) -> bytes:
        raise AssertionError("ProgramOnly holds no data memory")

    def write(self, offset: int, data: bytes) -> None:
        raise AssertionError("ProgramOnly holds no data memory")


def counted_target(arch: str, program: Any) -> tuple[int, int, int]:
    """(instructions counted by unicorn, min bound, max bound) of one compiled program."""
    tg = Target(arch, runner=ProgramOnly(arch))
    tg.compile(program)
    # nothing ran: the initial values are the current ones (ProgramOnly cannot read them)
    counted = count_program(tg.arch, bytes(tg.program_bytes(initial=True)))
    return counted, tg.min_instructions(), tg.max_instructions()


def counted_run(tg: Any) -> int:
    """Instructions one run of tg's program executes, counted by unicorn.

    On Thumb, unicorn does not report an instruction of an IT block whose condition
    fails; the core still issues it (the Armv7-M manual: it executes as a NOP), so
    such a block counts all its instructions, as the static bounds do."""
    return count_program(tg.arch, bytes(tg.program_bytes()))


def count_program(arch: str, program: bytes) -> int:
    """Instructions one run of a program file for arch executes (:func:`counted_run`)."""
    # imported functions (cp.extern) answer 0: their own instructions are outside the
    # program's code and its bounds (only the call stencils count)
    stubs = {name: (lambda *_: 0) for name, _, _ in _core.program_imports(program)}
    emu = _emulator.Emulator(arch, imports=stubs)
    emu.install(program)
    uc = emu._require()
    count = [0]
    predicated: set[int] = set()
    thumb = arch == "cortex-m4"

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
