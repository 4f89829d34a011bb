"""Instructions of one program run counted by qemu-user: a second, independent counter.

Debian's qemu-user has no TCG plugins, so the count comes from its execution log: with
one instruction per translated block (``-one-insn-per-tb``, spelled ``-singlestep`` up
to QEMU 7.2) and ``-d exec,nochain`` qemu logs every block it runs, so every executed
instruction, with its guest PC. The runner (``copapy-run``, a static binary:
``target/cross/<target>/copapy-run`` from scripts/cross_runners.sh) executes its own
code from its ELF's executable segments and the program's code from the buffer it
mapped; counting the PCs outside the ELF's segments counts the program. A static-PIE
runner is loaded at some base: its first instruction is its entry point, so the first
logged PC minus the ELF's entry is that base.

    python tests/qemu_count.py      prints program x target: qemu, unicorn, min, max
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import tempfile
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# target -> the runner's cross build (x86_64: static glibc, scripts/cross_runners.sh)
TARGETS = ["x86_64", "aarch64", "armv7", "armv6", "riscv64"]
_PT_LOAD, _PF_X = 1, 1


def runner_path(target: str) -> Path:
    return ROOT / "target" / "cross" / target / "copapy-run"


def executable_segments(elf: bytes) -> tuple[int, list[tuple[int, int]]]:
    """(entry, [(start, end) of each executable PT_LOAD]) of an ELF file, unrelocated."""
    if elf[:4] != b"\x7fELF" or elf[5] != 1:
        raise ValueError("not a little-endian ELF file")
    wide = elf[4] == 2
    if wide:
        entry, phoff = struct.unpack_from("<QQ", elf, 24)
        phentsize, phnum = struct.unpack_from("<HH", elf, 54)
    else:
        entry, phoff = struct.unpack_from("<II", elf, 24)
        phentsize, phnum = struct.unpack_from("<HH", elf, 42)
    segments = []
    for k in range(phnum):
        at = phoff + k * phentsize
        if wide:
            p_type, p_flags, _, vaddr, _, _, memsz = struct.unpack_from("<IIQQQQQ", elf, at)
        else:
            p_type, _, vaddr, _, _, memsz, p_flags = struct.unpack_from("<IIIIIII", elf, at)
        if p_type == _PT_LOAD and p_flags & _PF_X:
            segments.append((vaddr, vaddr + memsz))
    return entry, segments


@cache
def _one_insn_flag(qemu: str) -> str:
    text = subprocess.run([qemu, "-h"], capture_output=True, text=True, check=False).stdout
    return "-one-insn-per-tb" if "one-insn-per-tb" in text else "-singlestep"


def logged_pcs(log: Path) -> list[int]:
    """The guest PC of every block in a ``-d exec`` log, in order: QEMU prints
    ``Trace N: HOSTPTR [CS_BASE/PC/FLAGS/CFLAGS] SYMBOL``."""
    pcs = []
    with log.open() as f:
        for line in f:
            if line.startswith("Trace "):
                fields = line[line.index("[") + 1:line.index("]")].split("/")
                pcs.append(int(fields[1], 16))
    return pcs


def qemu_count(target: str, program: Path, runs: int = 1) -> int:
    """Instructions executed in the program's code buffer while copapy-run, under
    qemu-user on the table's CPU, loads `program` and runs it `runs` times."""
    from copapy import _targets

    info = _targets.find(target)
    if info.qemu_user is None:
        raise ValueError(f"{target} has no qemu-user emulation")
    qemu, cpu = info.qemu_user
    if not shutil.which(qemu):
        raise FileNotFoundError(f"{qemu} is missing: install qemu-user (scripts/setup.sh does)")
    runner = runner_path(target)
    if not runner.is_file():
        raise FileNotFoundError(f"{runner} is missing: build it with scripts/cross_runners.sh "
                                f"{target}")
    entry, segments = executable_segments(runner.read_bytes())
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "exec.log"
        subprocess.run([qemu, "-cpu", cpu, _one_insn_flag(qemu), "-d", "exec,nochain",
                        "-D", str(log), str(runner), str(program), "-n", str(runs)],
                       check=True, capture_output=True, timeout=120)
        pcs = logged_pcs(log)
    if not pcs:
        raise RuntimeError(f"{qemu} logged no executed blocks")
    base = pcs[0] - entry  # 0 for a static binary, the load address for a static PIE
    own = [(base + lo, base + hi) for lo, hi in segments]
    return sum(1 for pc in pcs if not any(lo <= pc < hi for lo, hi in own))


def _table() -> None:
    """Prints the counts of tests/deploy/test_qemu_counts.py's programs."""
    sys_path = str(ROOT / "tests")
    import sys

    sys.path.insert(0, sys_path)
    sys.path.insert(0, str(ROOT / "tests" / "deploy"))
    import copapy as cp
    from instruction_count import counted_run
    from test_qemu_counts import PROGRAMS

    print("| program | target | qemu-user | unicorn | min | max |")
    print("| --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        for name, build in PROGRAMS.items():
            for target in TARGETS:
                tg = cp.Target(target)
                tg.compile(build())
                path = Path(tmp) / f"{name}-{target}.cpy"
                tg.save(str(path))
                print(f"| {name} | {target} | {qemu_count(target, path)} | {counted_run(tg)} "
                      f"| {tg.min_instructions()} | {tg.max_instructions()} |", flush=True)


if __name__ == "__main__":
    os.environ.setdefault("COPAPY_QUIET", "1")
    _table()
