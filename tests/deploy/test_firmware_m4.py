"""The MCU path end to end: the runner core built for Cortex-M4F (thumbv7em-none-eabihf)
loads and runs a program compiled with Target("cortex-m4") inside an emulated Cortex-M4
(unicorn), and the results read back are bit-identical to the same program on this machine.

The image is the copapy-firmware static library linked bare-metal; the test calls its C
functions (copapy_load, copapy_symbol, copapy_run) in the emulator as firmware would, with
the program file, code buffer and data buffer in the emulated RAM. The code buffer is
writable while copapy_load installs the program and read+execute after, never both.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest
import unicorn  # a test dependency (scripts/requirements-dev.txt), as for the emulated targets
from copapy._core import Target, value  # explicit targets: independent of COPAPY_TEST_TARGET
from helpers import ROOT
from unicorn import arm_const as A

LIB = ROOT / "target" / "thumbv7em-none-eabihf" / "firmware" / "libcopapy_firmware.a"

FILE, CODE, DATA, SCRATCH = 0x2000_0000, 0x2001_0000, 0x2002_0000, 0x2002_8000
CODE_CAP, DATA_CAP = 0x1_0000, 0x8000
STACK_TOP, STOP = 0x2010_0000, 0x3000_0000


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[tuple[int, bytes]], dict[str, int]]:
    if not LIB.exists():
        subprocess.run(["cargo", "build", "--profile", "firmware", "-q", "-p", "copapy-firmware",
                        "--target", "thumbv7em-none-eabihf"], cwd=ROOT, check=True)
    sysroot = subprocess.run(["rustc", "--print", "sysroot"], capture_output=True, text=True,
                             check=True).stdout.strip()
    lld = next(Path(sysroot).rglob("rust-lld"))
    elf = tmp_path_factory.mktemp("m4") / "runner.elf"
    subprocess.run([str(lld), "-flavor", "gnu", "--gc-sections", "-e", "copapy_load", "-u", "copapy_run",
                    "-u", "copapy_symbol", "-o", str(elf), str(LIB)], check=True)
    raw = elf.read_bytes()
    assert raw[:4] == b"\x7fELF" and raw[4] == 1, "a 32-bit ELF"
    phoff, = struct.unpack_from("<I", raw, 0x1C)
    phentsize, phnum = struct.unpack_from("<HH", raw, 0x2A)
    segments = []
    for i in range(phnum):
        header = struct.unpack_from("<8I", raw, phoff + i * phentsize)
        p_type, p_offset, p_vaddr, _, p_filesz, p_memsz = header[:6]
        if p_type == 1:  # PT_LOAD
            segments.append((p_vaddr, raw[p_offset:p_offset + p_filesz] + bytes(p_memsz - p_filesz)))
    nm = shutil.which("llvm-nm") or "nm"
    symbols = {}
    listing = subprocess.run([nm, str(elf)], capture_output=True, text=True, check=True).stdout
    for line in listing.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2].startswith("copapy_"):
            symbols[parts[2]] = int(parts[0], 16)
    return segments, symbols


class Mcu:
    """An emulated Cortex-M4F with the runner image in flash and 1 MiB of RAM."""

    def __init__(self, image: tuple[list[tuple[int, bytes]], dict[str, int]]) -> None:
        segments, self.symbols = image
        uc = unicorn.Uc(unicorn.UC_ARCH_ARM, unicorn.UC_MODE_THUMB | unicorn.UC_MODE_MCLASS)
        uc.ctl_set_cpu_model(A.UC_CPU_ARM_CORTEX_M4)
        uc.mem_map(0, 0x10_0000, unicorn.UC_PROT_READ | unicorn.UC_PROT_EXEC)  # flash: the runner
        for addr, data in segments:
            uc.mem_write(addr, data)
        uc.mem_map(FILE, CODE - FILE)
        uc.mem_map(CODE, CODE_CAP, unicorn.UC_PROT_READ | unicorn.UC_PROT_WRITE)
        uc.mem_map(DATA, STACK_TOP - DATA, unicorn.UC_PROT_READ | unicorn.UC_PROT_WRITE)
        uc.mem_map(STOP, 0x1000, unicorn.UC_PROT_READ | unicorn.UC_PROT_EXEC)
        uc.reg_write(A.UC_ARM_REG_C1_C0_2, uc.reg_read(A.UC_ARM_REG_C1_C0_2) | (0xF << 20))  # FPU on
        self.uc = uc

    def call(self, name: str, *args: int) -> int:
        uc = self.uc
        sp = STACK_TOP - 256
        for i, a in enumerate(args[4:]):
            uc.mem_write(sp + 4 * i, struct.pack("<I", a & 0xFFFF_FFFF))
        for reg, a in zip((A.UC_ARM_REG_R0, A.UC_ARM_REG_R1, A.UC_ARM_REG_R2, A.UC_ARM_REG_R3), args,
                          strict=False):
            uc.reg_write(reg, a & 0xFFFF_FFFF)
        uc.reg_write(A.UC_ARM_REG_SP, sp)
        uc.reg_write(A.UC_ARM_REG_LR, STOP | 1)
        uc.emu_start(self.symbols[name] | 1, STOP, count=50_000_000)
        assert uc.reg_read(A.UC_ARM_REG_PC) == STOP, f"{name} did not return"
        r: int = uc.reg_read(A.UC_ARM_REG_R0)
        return r - (1 << 32) if r & 0x8000_0000 else r

    def load(self, program: bytes) -> int:
        self.uc.mem_write(FILE, program)
        r = self.call("copapy_load", FILE, len(program), CODE, CODE_CAP, DATA, DATA_CAP, SCRATCH)
        if r == 0:
            self.uc.mem_protect(CODE, CODE_CAP, unicorn.UC_PROT_READ | unicorn.UC_PROT_EXEC)
        return r

    def read(self, name: str) -> list[bytes]:
        self.uc.mem_write(SCRATCH + 0x100, name.encode() + b"\0")
        out = []
        n = 1
        i = 0
        while i < n:
            n = self.call("copapy_symbol", SCRATCH, SCRATCH + 0x100, i, SCRATCH + 0x200, SCRATCH + 0x204)
            assert n > 0, f"copapy_symbol({name!r}) returned {n}"
            offset, = struct.unpack("<I", bytes(self.uc.mem_read(SCRATCH + 0x200, 4)))
            out.append(bytes(self.uc.mem_read(DATA + offset, 4)))
            i += 1
        return out

    def run(self) -> None:
        assert self.call("copapy_run", SCRATCH) == 0


def build(target: str) -> Any:
    x = value(0.5, name="x")
    v = value(0.0, name="v")
    k = value(0, name="k")
    force = -4.0 * x - 0.3 * v
    tg = Target(target)
    tg.compile(force, names={"force": force, "state": [x, v]},
               updates={x: x + 0.01 * v, v: v + 0.01 * force, k: k + 1})
    return tg


def test_the_cortex_m4_runner_core_matches_this_machine(image: Any) -> None:
    m4, host = build("cortex-m4"), build("native")
    program = m4.program_bytes()
    assert program[10] & 7 == 4  # thumb (format version 10's architecture bits)
    mcu = Mcu(image)
    assert mcu.load(program) == 0
    for _ in range(200):
        mcu.run()
        host.run()
    host_bits = {name: [struct.pack("<f" if name != "k" else "<i", x) for x in
                        (host.read_value(name) if isinstance(host.read_value(name), list)
                         else [host.read_value(name)])]
                 for name in ("force", "state", "k")}
    for name in ("force", "state", "k"):
        assert mcu.read(name) == host_bits[name], name
    assert struct.unpack("<i", mcu.read("k")[0])[0] == 200


def test_the_mcu_runner_refuses_bad_files(image: Any) -> None:
    program = bytearray(build("cortex-m4").program_bytes())
    mcu = Mcu(image)
    host_program = build("native").program_bytes()
    assert mcu.load(host_program) == -5  # an x86_64 program on a Cortex-M4
    program[60] ^= 0x01
    assert mcu.load(bytes(program)) == -9  # corrupted
    assert mcu.load(bytes(program[:30])) == -7  # truncated
    good = build("cortex-m4").program_bytes()
    mcu.uc.mem_write(FILE, good)
    for code, data in ((CODE, CODE), (CODE, CODE + 0x100), (FILE, DATA), (CODE, FILE + 8)):  # overlaps
        assert mcu.call("copapy_load", FILE, len(good), code, CODE_CAP, data, DATA_CAP, SCRATCH) == -18
    assert mcu.call("copapy_load", 0, len(good), CODE, CODE_CAP, DATA, DATA_CAP, SCRATCH) == -1  # NULL
    mcu.uc.mem_write(SCRATCH, bytes(64))
    assert mcu.call("copapy_run", 0) == -1  # NULL
    assert mcu.call("copapy_run", SCRATCH) == -19  # a zeroed struct: not loaded, nothing runs
