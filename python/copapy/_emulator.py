"""The emulator device: runs programs for a foreign architecture in unicorn.

``cp.Target("riscv32")`` on an x86_64 machine compiles riscv32 code and runs it here,
placed in memory as a real runner places it: one region, code pages followed by data
pages, a separate stack, and the entry called with the return address pointing at a
stop address. The program file is the only thing that crosses to this device; the
runner core (``_core.place_program``) validates it and applies its patches for the
addresses chosen here, exactly as a runner on the board would.

unicorn (GPL-2.0) is an optional dependency, the ``emulate`` extra of the copapy-rs
distribution; without it, creating an emulator raises an ImportError that says how to
install it (``INSTALL_HINT``: never by the name ``copapy``, which on PyPI is the original
Copapy, a different project). capstone, if installed,
disassembles the code around a fault for the error message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import _core, _targets
from ._emulator_imports import EmulatedImports

CODE_BASE = 0x0001_0000
STACK_TOP = 0x4000_0000
STACK_SIZE = 0x10_0000
STOP = 0x0000_F000  # the return address of the entry call; a page of its own
PAGE = 0x1000
#: Instructions one run may execute before it is stopped as runaway.
DEFAULT_BUDGET = 200_000_000

INSTALL_HINT = (
    "running code for {target} on this machine needs the unicorn emulator, an optional "
    "dependency: pip install unicorn capstone (into this environment), or reinstall copapy-rs "
    "with its emulate extra: pip install '.[emulate]' in a checkout of copapy-rs, "
    "pip install 'dist/copapy_rs-<version>-<tags>.whl[emulate]' for a wheel "
    "(the package named copapy on PyPI is the original Copapy, a different project)"
)


@dataclass(frozen=True)
class _Machine:
    """How unicorn and capstone see one copapy target."""

    uc_arch: str
    uc_mode: tuple[str, ...]
    cpu: str | None
    cs_arch: str
    cs_mode: tuple[str, ...]
    thumb: bool
    #: unicorn's register constants module, and the registers a call uses
    consts: str
    pc: str
    sp: str
    return_address: str | None
    #: (register, bits, keep) writes that switch the FPU on
    fpu: tuple[tuple[str, int, bool], ...]
    #: how the program calls an imported function
    call: _targets.CallAbi


def _machine(target: str) -> _Machine:
    """The emulated machine for a target name (or alias): unicorn's and capstone's names
    for its instruction set, its registers and its CPU model, all from the shared tables
    (``_targets``; ``crates/copapy-program/src/isas.rs`` and ``targets.rs``)."""
    try:
        info = _targets.find(target)
    except ValueError:
        raise ValueError(f"the emulator has no machine for target {target!r}") from None
    uc = _targets.isa(info.arch).unicorn
    cs = _targets.isa(info.arch).capstone
    return _Machine(uc.mode.arch, uc.mode.modes, info.unicorn_cpu, cs.arch, cs.modes,
                    info.arch == "thumb", uc.consts, uc.pc, uc.sp, uc.return_address, uc.fpu,
                    uc.call)


def _round_up(n: int, to: int = PAGE) -> int:
    return (n + to - 1) // to * to


def _pages(addr: int, size: int) -> tuple[int, int]:
    """The whole pages [start, end) that hold ``size`` bytes at ``addr``."""
    return addr // PAGE * PAGE, _round_up(addr + size)


def _meet(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


class Emulator:
    """A device (see ``_device.py``) that runs one target's programs in unicorn."""

    def __init__(self, target: str, budget: int = DEFAULT_BUDGET,
                 imports: dict[str, Any] | None = None) -> None:
        machine = _machine(target)
        try:
            import unicorn
        except ImportError as e:
            raise ImportError(INSTALL_HINT.format(target=target)) from e
        self.arch = _targets.find(target).name
        self.budget = budget
        self._uc_mod = unicorn
        self._machine = machine
        self._uc: Any = None
        self._entry = 0
        self._data_addr = 0
        self._data_len = 0
        self._code_len = 0
        self._code_addr = CODE_BASE
        self._imports = imports
        self._resolved: EmulatedImports | None = None

    # ---------------------------------------------------------------- device protocol
    def install(self, program: bytes) -> None:
        """Places a program file: validates it, patches it for this memory, maps it."""
        uc_mod = self._uc_mod
        m = self._machine
        # every import resolved before anything is placed (a refusal changes nothing)
        resolved = EmulatedImports(_core.program_imports(program), self._imports)
        placement = _core.program_placement(program)
        if placement is None:
            # the sizes decide the data address, so place once to learn them
            code, data, _ = _core.place_program(program, CODE_BASE, CODE_BASE, self.arch)
            code_addr, data_addr = CODE_BASE, CODE_BASE + _round_up(len(code))
        else:
            # a pre-linked image runs at its own addresses, as on its board
            code_addr, data_addr = placement
        code, data, entry = _core.place_program(program, code_addr, data_addr, self.arch)
        mode = 0
        for name in m.uc_mode:
            mode |= getattr(uc_mod, name)
        uc = uc_mod.Uc(getattr(uc_mod, m.uc_arch), mode)
        if m.cpu is not None:
            uc.ctl_set_cpu_model(getattr(getattr(uc_mod, m.consts), m.cpu))
        code_pages = _pages(code_addr, len(code))
        data_pages = _pages(data_addr, max(len(data), 1))
        fixed = [_pages(STOP, PAGE), _pages(STACK_TOP - STACK_SIZE, STACK_SIZE)]
        if any(_meet(p, f) for p in (code_pages, data_pages) for f in fixed):
            raise RuntimeError(
                f"the emulator cannot place this pre-linked {self.arch} program: its code at "
                f"{code_addr:#x} or data at {data_addr:#x} meets the emulator's stack or stop page "
                f"({STACK_TOP - STACK_SIZE:#x}..{STACK_TOP:#x}, {STOP:#x}); save it without "
                "code_base=/data_base= to run it here")
        if _meet(code_pages, data_pages):
            # code and data share a page (a microcontroller's RAM): one readable, writable
            # and executable mapping, as that RAM is
            start, end = min(code_pages[0], data_pages[0]), max(code_pages[1], data_pages[1])
            uc.mem_map(start, end - start)
        else:
            uc.mem_map(code_pages[0], code_pages[1] - code_pages[0])
            uc.mem_map(data_pages[0], data_pages[1] - data_pages[0])
        uc.mem_map(STOP, PAGE, uc_mod.UC_PROT_READ | uc_mod.UC_PROT_EXEC)
        uc.mem_map(STACK_TOP - STACK_SIZE, STACK_SIZE)
        uc.mem_write(code_addr, code)
        uc.mem_write(data_addr, data)
        if not _meet(code_pages, data_pages):
            # code read+execute, data read+write: never writable and executable at once
            uc.mem_protect(code_pages[0], code_pages[1] - code_pages[0],
                           uc_mod.UC_PROT_READ | uc_mod.UC_PROT_EXEC)
            uc.mem_protect(data_pages[0], data_pages[1] - data_pages[0],
                           uc_mod.UC_PROT_READ | uc_mod.UC_PROT_WRITE)
        resolved.install(uc, uc_mod, getattr(uc_mod, m.consts), m.call, m.thumb,
                         data_addr, PAGE)
        self._enable_fpu(uc)
        self._uc, self._entry, self._resolved = uc, entry, resolved
        self._data_addr, self._data_len, self._code_len = data_addr, len(data), len(code)
        self._code_addr = code_addr

    def run(self) -> None:
        """Calls the entry once; data memory keeps its state between runs."""
        uc = self._require()
        uc_mod = self._uc_mod
        self._prepare_call(uc)
        resolved = self._resolved
        before = uc.mem_read(self._data_addr, self._data_len) if resolved and resolved.calls else None
        try:
            uc.emu_start(self._entry, STOP, timeout=0, count=self.budget)
        except uc_mod.UcError as e:
            pc = self._pc(uc)
            raise RuntimeError(
                f"the {self.arch} program faulted at {pc:#x} ({e}); code is at "
                f"{self._code_addr:#x}..{self._code_addr + self._code_len:#x}, data at "
                f"{self._data_addr:#x}..{self._data_addr + self._data_len:#x}\n"
                + self._disassemble_around(uc, pc)
            ) from None
        if resolved is not None and resolved.error is not None:
            # a callable raised: the run is void, data memory as it was before it
            error, resolved.error = resolved.error, None
            uc.mem_write(self._data_addr, bytes(before or b""))
            raise error
        pc = self._pc(uc)
        if pc != STOP:
            raise RuntimeError(
                f"the {self.arch} program did not return within {self.budget:,} instructions "
                f"(stopped at {pc:#x}); raise the budget with Emulator(..., budget=N) if it is "
                "really this long\n" + self._disassemble_around(uc, pc)
            )

    def read(self, offset: int, size: int) -> bytes:
        """Reads data memory."""
        self._check(offset, size)
        return bytes(self._require().mem_read(self._data_addr + offset, size))

    def write(self, offset: int, data: bytes) -> None:
        """Writes data memory."""
        self._check(offset, len(data))
        self._require().mem_write(self._data_addr + offset, bytes(data))

    # ---------------------------------------------------------------- details
    def _require(self) -> Any:
        if self._uc is None:
            raise RuntimeError("no program installed on this emulator")
        return self._uc

    def _check(self, offset: int, size: int) -> None:
        if offset < 0 or size < 0 or offset + size > self._data_len:
            raise ValueError(
                f"data access {offset}..{offset + size} outside the {self._data_len}-byte data memory"
            )

    def _register(self, name: str) -> Any:
        return getattr(getattr(self._uc_mod, self._machine.consts), name)

    def _enable_fpu(self, uc: Any) -> None:
        for name, bits, keep in self._machine.fpu:
            reg = self._register(name)
            uc.reg_write(reg, (uc.reg_read(reg) | bits) if keep else bits)

    def _prepare_call(self, uc: Any) -> None:
        m = self._machine
        sp = STACK_TOP - 64
        if m.return_address is None:  # the call pushes the return address (x86_64)
            sp -= 8
            uc.mem_write(sp, STOP.to_bytes(8, "little"))
        else:  # Thumb code returns to an address with bit 0 set
            uc.reg_write(self._register(m.return_address), STOP | int(m.thumb))
        uc.reg_write(self._register(m.sp), sp)

    def _pc(self, uc: Any) -> int:
        return int(uc.reg_read(self._register(self._machine.pc)))

    def _disassemble_around(self, uc: Any, pc: int) -> str:
        try:
            import capstone  # type: ignore[import-untyped]
        except ImportError:
            return "(install capstone to see the instructions around it)"
        m = self._machine
        mode = 0
        for name in m.cs_mode:
            mode |= getattr(capstone, name)
        md = capstone.Cs(getattr(capstone, m.cs_arch), mode)
        start = max(self._code_addr, (pc & ~1) - 16)
        end = min(self._code_addr + self._code_len, (pc & ~1) + 16)
        if start >= end:
            return f"(pc {pc:#x} is outside the program's code)"
        code = bytes(uc.mem_read(start, end - start))
        lines = []
        for insn in md.disasm(code, start):
            mark = "=>" if insn.address == pc & ~1 else "  "
            lines.append(f"{mark} {insn.address:#010x}: {insn.mnemonic} {insn.op_str}")
        return "\n".join(lines)
