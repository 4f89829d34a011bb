"""The targets and instruction sets copapy knows, as the Rust core defines them
(``_core.targets()``, ``_core.isas()``).

One table in ``crates/copapy-program/src/targets.rs`` names every target, its aliases,
instruction set, CPU features, the emulators that run it and its stencil compiler flags;
the compiler, the runners, the firmware and this module all read it, so Python keeps no
second list (scripts that run before the extension is built read the same rows from
``stencils/targets.json``, which a test keeps equal to the table).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from . import _core


@dataclass(frozen=True)
class TargetInfo:
    """One target: what ``cp.Target(name)`` compiles for."""

    name: str
    aliases: tuple[str, ...]
    #: Instruction set (``"x86_64"``, ``"aarch64"``, ``"arm"``, ``"thumb"``, ``"riscv64"``, ``"riscv32"``).
    arch: str
    #: CPU features its code needs (``"armv7"``, ``"vfp3"``, ...).
    features: tuple[str, ...]
    #: Machines it is for.
    machines: str
    #: ``(binary, cpu)`` that run a Linux ``copapy-run`` for it under qemu-user, e.g.
    #: ``("qemu-arm", "arm1176")``; ``None`` for microcontrollers.
    qemu_user: tuple[str, str] | None
    #: unicorn's CPU model constant (``"UC_CPU_ARM_1176"``), ``None`` for its default.
    unicorn_cpu: str | None
    #: The ``zig cc`` flags its stencils are compiled with (``stencils/build.py``).
    cflags: tuple[str, ...]


@cache
def targets() -> tuple[TargetInfo, ...]:
    """Every target, in the order of the Rust table (most capable first per instruction set)."""
    return tuple(TargetInfo(name, tuple(aliases), arch, tuple(features), machines, qemu, uc_cpu,
                            tuple(cflags))
                 for name, aliases, arch, features, machines, qemu, uc_cpu, cflags
                 in _core.targets())


def names() -> list[str]:
    """The names of every target."""
    return [t.name for t in targets()]


def find(name: str) -> TargetInfo:
    """The target called ``name`` or one of its aliases."""
    for t in targets():
        if name == t.name or name in t.aliases:
            return t
    raise ValueError(f"unknown target {name!r}: copapy compiles for {', '.join(names())}")


@dataclass(frozen=True)
class LibMode:
    """How unicorn or capstone names an instruction set: its architecture constant and
    the mode constants or-ed together."""

    arch: str
    modes: tuple[str, ...]


@dataclass(frozen=True)
class CallAbi:
    """How a program calls an imported function (unicorn's register constants)."""

    float_args: tuple[str, ...]
    int_args: tuple[str, ...]
    float_result: str
    int_result: str
    #: The bytes of a return instruction.
    return_insn: bytes
    #: Singles live NaN-boxed in 64-bit float registers (RISC-V).
    nan_boxed: bool


@dataclass(frozen=True)
class Unicorn:
    """How unicorn runs an instruction set."""

    mode: LibMode
    #: The module of its register constants (``"arm_const"``).
    consts: str
    #: Program counter, stack pointer, and the register that takes a call's return
    #: address (``None``: the call pushes it, 8 bytes).
    pc: str
    sp: str
    return_address: str | None
    #: ``(register, bits, keep)`` writes that switch the FPU on: ``keep`` ors the bits in.
    fpu: tuple[tuple[str, int, bool], ...]
    #: How a program calls an imported function.
    call: CallAbi


@dataclass(frozen=True)
class IsaInfo:
    """One instruction set (``crates/copapy-program/src/isas.rs``)."""

    #: Its name, as ``TargetInfo.arch``.
    arch: str
    #: The ELF relocations a stencil object may contain (``llvm-objdump``'s names).
    relocs: tuple[str, ...]
    #: ELF relocation of the tail jump that ends every stencil.
    tail_reloc: str
    #: ELF relocations of calls.
    call_relocs: tuple[str, ...]
    #: The hardware square root instruction.
    sqrt_insn: str
    #: The disassembler that reads its objects.
    objdump: str
    #: How unicorn runs it.
    unicorn: Unicorn
    #: How capstone disassembles it.
    capstone: LibMode


@cache
def isas() -> tuple[IsaInfo, ...]:
    """Every instruction set, in the order of the Rust table."""
    return tuple(IsaInfo(arch, tuple(relocs), tail, tuple(calls), sqrt, objdump,
                         Unicorn(LibMode(uc[0][0], tuple(uc[0][1])), uc[1], uc[2], uc[3], uc[4],
                                 tuple(uc[5]), _call_abi(uc[6])),
                         LibMode(cs[0], tuple(cs[1])))
                 for arch, relocs, tail, calls, sqrt, objdump, uc, cs in _core.isas())


def _call_abi(row: tuple[list[str], list[str], str, str, list[int], bool]) -> CallAbi:
    fargs, iargs, fres, ires, ret, boxed = row
    return CallAbi(tuple(fargs), tuple(iargs), fres, ires, bytes(ret), boxed)


def isa(arch: str) -> IsaInfo:
    """The instruction set called ``arch`` (a ``TargetInfo.arch``)."""
    for i in isas():
        if i.arch == arch:
            return i
    raise ValueError(f"unknown instruction set {arch!r}: copapy knows "
                     f"{', '.join(i.arch for i in isas())}")
