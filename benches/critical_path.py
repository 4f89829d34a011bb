"""The dependency chain of a workload's x86_64 step, from one emulated run.

Usage (from the repository root):

    .venv/bin/python benches/critical_path.py [WORKLOAD] [--program FILE.cpy] [--dump FIRST COUNT]

A latency-bound step (IK: 48 gradient steps, each waiting for the last) runs as fast as
its longest chain of dependent instructions, which instruction counts do not show. This
runs the step once in unicorn (``copapy._emulator``), records every executed instruction
with the memory it read and wrote, and follows each value from the instruction that made
it to the ones that read it: through registers (capstone's read/write sets) and through
memory at byte granularity, so a value stored and read back pays a store-to-load
forwarding on the chain. Latencies are a simple Zen-3-like model (float add/mul 3, logic
1, an L1 float load 7, a forwarded load 7 after its store's data), not a simulator: the
model's cycles per step compare two builds of one program, and its chain names the
instructions that set the step's time. ``--dump`` prints the chain from its FIRST-th
instruction on, with each instruction's finish cycle. Programs saved by another build
(``tg.save``) are read with ``--program``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_workloads as BW  # noqa: E402
import workloads as W  # noqa: E402

# cycles from operands ready to result ready; loads add LOAD_* from the address (or the
# store's data) being ready
LATENCY = {
    "addss": 3, "subss": 3, "mulss": 3, "addps": 3, "subps": 3, "mulps": 3,
    "divss": 10, "divps": 10, "sqrtss": 14, "sqrtps": 14,
    "cvttps2dq": 3, "cvtdq2ps": 3, "cvtps2dq": 3, "cvttss2si": 4, "cvtss2si": 4,
    "cvtsi2ss": 4, "roundss": 3, "roundps": 3, "imul": 3, "movd": 3, "movq": 3,
    "movaps": 0, "movdqa": 0,  # register renaming (a load adds LOAD_FLOAT)
}
FREE = ("call", "ret", "jmp", "nop", "push", "pop")
LOAD_FLOAT, LOAD_INT = 7, 4
GPR_FAMILIES = {
    "rax": "eax ax al", "rbx": "ebx bx bl", "rcx": "ecx cx cl", "rdx": "edx dx dl",
    "rsi": "esi si sil", "rdi": "edi di dil", "rbp": "ebp bp bpl", "rsp": "esp sp spl",
}
GPR_OF = {small: big for big, smalls in GPR_FAMILIES.items() for small in smalls.split()}


def latency(mnemonic: str) -> int:
    if mnemonic in LATENCY:
        return LATENCY[mnemonic]
    if mnemonic.startswith(FREE) or mnemonic.startswith("j"):
        return 0
    return 1


def register(name: str) -> str:
    """One name per physical register (xmm/ymm, and the parts of a general register)."""
    if name.startswith("ymm"):
        return "xmm" + name[3:]
    if name in GPR_OF:
        return GPR_OF[name]
    if name[0] == "r" and name[-1] in "dwb" and name[1:-1].isdigit():
        return name[:-1]
    return name


def trace_run(program: bytes) -> list[tuple[Any, list[tuple[int, int]], list[tuple[int, int]]]]:
    """Every executed instruction with the (address, size) it read and wrote."""
    import capstone  # type: ignore[import-untyped]
    from copapy import _emulator

    emu = _emulator.Emulator("x86_64", budget=10**8)
    emu.install(program)
    uc = emu._require()
    uc_mod = emu._uc_mod
    md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    md.detail = True
    decoded: dict[tuple[int, int], Any] = {}
    trace: list[tuple[Any, list[tuple[int, int]], list[tuple[int, int]]]] = []

    def on_code(uc_: Any, addr: int, size: int, _: Any) -> None:
        insn = decoded.get((addr, size))
        if insn is None:
            insn = decoded[(addr, size)] = next(md.disasm(bytes(uc_.mem_read(addr, size)), addr))
        trace.append((insn, [], []))

    def on_mem(_uc: Any, access: int, addr: int, size: int, _value: int, _: Any) -> None:
        trace[-1][1 if access == uc_mod.UC_MEM_READ else 2].append((addr, size))

    uc.hook_add(uc_mod.UC_HOOK_CODE, on_code)
    uc.hook_add(uc_mod.UC_HOOK_MEM_READ | uc_mod.UC_HOOK_MEM_WRITE, on_mem)
    emu.run()
    return trace


def critical_chain(trace: list[Any]) -> tuple[list[int], list[int]]:
    """(finish cycle of each instruction, the longest chain's instruction indices)."""
    from capstone import x86  # type: ignore[import-untyped]

    reg_ready: dict[str, int] = defaultdict(int)
    reg_from: dict[str, int] = {}
    mem_ready: dict[int, int] = {}
    mem_from: dict[int, int] = {}
    finish: list[int] = []
    came_from: list[int | None] = []
    for i, (insn, reads, writes) in enumerate(trace):
        m = insn.mnemonic
        start, source = 0, None
        ops = insn.operands
        zeroing = (m in ("xorps", "pxor", "xor") and len(ops) == 2
                   and all(o.type == x86.X86_OP_REG for o in ops) and ops[0].reg == ops[1].reg)
        regs_read, regs_written = insn.regs_access()
        if not zeroing:
            for r in regs_read:
                name = register(insn.reg_name(r))
                if name != "rip" and reg_ready[name] > start:
                    start, source = reg_ready[name], reg_from.get(name)
        if reads and not m.startswith(FREE):
            load = LOAD_FLOAT if "xmm" in insn.op_str else LOAD_INT
            for addr, size in reads:
                for b in range(addr, addr + size):
                    if mem_ready.get(b, 0) + load > start:
                        start, source = mem_ready.get(b, 0) + load, mem_from.get(b)
        done = start + latency(m)
        finish.append(done)
        came_from.append(source)
        for r in regs_written:
            name = register(insn.reg_name(r))
            reg_ready[name], reg_from[name] = done, i
        if not m.startswith(("call", "push")):
            for addr, size in writes:
                for b in range(addr, addr + size):
                    mem_ready[b], mem_from[b] = done, i
    last = max(range(len(finish)), key=finish.__getitem__)
    chain: list[int] = []
    at: int | None = last
    while at is not None:
        chain.append(at)
        at = came_from[at]
    chain.reverse()
    return finish, chain


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("workload", nargs="?", default="ik", choices=sorted(W.WORKLOADS))
    parser.add_argument("--program", help="a saved program (tg.save) instead of this build's")
    parser.add_argument("--dump", nargs=2, type=int, metavar=("FIRST", "COUNT"))
    args = parser.parse_args()
    if args.program:
        program = Path(args.program).read_bytes()
    else:
        tg, _, _ = BW.traced_target(args.workload, W.example_args()[args.workload])
        path = Path(tempfile.mkdtemp()) / "step.cpy"
        tg.save(str(path))
        program = path.read_bytes()
    trace = trace_run(program)
    finish, chain = critical_chain(trace)
    total = finish[chain[-1]]
    per = f", {total / W.IK_STEPS:.1f} per gradient step" if args.workload == "ik" else ""
    print(f"{len(trace):,} instructions; longest chain {len(chain):,} instructions, "
          f"{total:,} model cycles{per}")
    spent: Counter[str] = Counter()
    for j, i in enumerate(chain):
        insn, reads, _ = trace[i]
        key = insn.mnemonic + (" (memory operand)" if reads else "")
        spent[key] += finish[i] - (finish[chain[j - 1]] if j else 0)
    for key, cycles in spent.most_common(16):
        print(f"  {key:32s} {cycles:6,} cycles")
    if args.dump:
        first, count = args.dump
        for i in chain[first:first + count]:
            insn = trace[i][0]
            print(f"{finish[i]:7,}  {insn.address:#8x}  {insn.mnemonic} {insn.op_str}")


if __name__ == "__main__":
    main()
