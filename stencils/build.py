#!/usr/bin/env python3
"""Build the stencil object for a target and check it.

    python3 stencils/build.py                  regenerate generated/stencils.c, rebuild
                                               x86_64.o, verify it, compare x86_64.dis
    COPAPY_BLESS=1 python3 stencils/build.py   ... and rewrite the golden x86_64.dis
    python3 stencils/build.py --check          rebuild into a temp dir; exit 1 unless the
                                               generated C, the object bytes and the golden
                                               disassembly all match what is committed and
                                               the object passes the ABI checks
    python3 stencils/build.py --target NAME    another target (see TARGETS); targets not
                                               marked committed are built into stencils/build/

The compiler is `python3 -m ziglang cc` (pip install -r stencils/requirements.txt). It
always compiles generated/stencils.c from the stencils/ directory, so the object does
not depend on where the checkout is: the same compiler gives the same bytes.

ABI checks (see README.md): the only undefined symbols are cp_next, cp_mf, cp_mi, cp_mf2, cp_mi2;
the st_* functions are exactly the ones gen_stencils.py lists; every stencil except
st_return ends with the tail jump to cp_next; stencils call only cpm_* helpers; helpers
never use the holes; only the target's PC-relative relocations appear (x86_64); sqrt
is the hardware instruction.
"""
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_stencils  # noqa: E402

SOURCE = "generated/stencils.c"  # relative to HERE: a fixed path gives fixed bytes

COMMON_FLAGS = [
    "-O2", "-g0", "-ffreestanding", "-fno-pic", "-ffunction-sections",
    "-fno-asynchronous-unwind-tables", "-fno-unwind-tables", "-fno-stack-protector",
    "-fomit-frame-pointer", "-ffp-contract=off", "-fno-math-errno", "-fno-builtin", "-c",
]


@dataclass
class Target:
    flags: list            # -target / -mcpu (+ extra) for zig cc, before COMMON_FLAGS
    objdump: list          # disassembler command that understands this target
    tail_reloc: str        # relocation of the final tail jump to cp_next
    sqrt_insn: str         # what __builtin_sqrtf must become
    relocs: set = field(default_factory=set)  # allowed relocation types (empty: any)
    committed: bool = False  # object + golden disassembly kept in the repo


# Flags from /work/shared/DESIGN.md (verified for zig 0.17.1). Only x86_64 is built,
# verified and committed for now; the others compile but their relocation rules and
# helper calls (e.g. integer division on cores without a divide instruction) are not
# checked yet.
TARGETS = {
    "x86_64": Target(
        ["-target", "x86_64-freestanding", "-mcpu=x86_64"], ["objdump"],
        "R_X86_64_PLT32", "sqrtss", {"R_X86_64_PLT32", "R_X86_64_PC32"}, committed=True),
    "aarch64": Target(
        ["-target", "aarch64-freestanding", "-mcpu=generic"], ["llvm-objdump"],
        "R_AARCH64_JUMP26", "fsqrt"),
    "armv7a": Target(
        ["-target", "arm-freestanding-eabihf", "-mcpu=cortex_a7"], ["llvm-objdump"],
        "R_ARM_JUMP24", "vsqrt.f32"),
    "cortex_m4": Target(
        ["-target", "thumb-freestanding-eabihf", "-mcpu=cortex_m4+vfp4d16sp"], ["llvm-objdump"],
        "R_ARM_THM_JUMP24", "vsqrt.f32"),
    "riscv64": Target(
        ["-target", "riscv64-freestanding", "-mcpu=baseline_rv64", "-mno-relax", "-mcmodel=medany"],
        ["llvm-objdump"], "R_RISCV_CALL_PLT", "fsqrt.s"),
    "riscv32": Target(
        ["-target", "riscv32-freestanding", "-mcpu=generic_rv32+m+a+f+c", "-mno-relax",
         "-mcmodel=medany"], ["llvm-objdump"], "R_RISCV_CALL_PLT", "fsqrt.s"),
}

HOLES = {"cp_next", "cp_mf", "cp_mi", "cp_mf2", "cp_mi2"}


def compile_cmd(target, out):
    return [sys.executable, "-m", "ziglang", "cc", *TARGETS[target].flags, *COMMON_FLAGS,
            SOURCE, "-o", out]


def compile_object(target, out):
    cmd = compile_cmd(target, out)
    r = subprocess.run(cmd, cwd=HERE, capture_output=True, text=True)
    if r.returncode != 0 or r.stderr.strip():
        sys.stderr.write(r.stderr)
        if r.returncode != 0:
            sys.exit(f"build.py: compiling failed: {' '.join(cmd)}")


def disassemble(target, obj):
    """objdump -d -r text, without the file-name header and the meaningless
    `<.LCPI...>` / `# addr <sym+off>` annotations (all sections start at 0 in a .o)."""
    cmd = [*TARGETS[target].objdump, "-d", "-r", "--no-show-raw-insn", obj]
    text = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("Disassembly of section"))
    out = []
    for line in lines[start:]:
        line = re.sub(r"\s+# [0-9a-f]+ <[^>]*>$", "", line)
        line = re.sub(r" <\.L[^>]*>", "", line)
        out.append(line.rstrip())
    return "\n".join(out).strip("\n") + "\n"


def parse_functions(dis):
    """{name: [(offset, text, [(reloc_type, symbol)])]} from disassemble() output."""
    funcs, cur = {}, None
    for line in dis.splitlines():
        m = re.match(r"^[0-9a-f]+ <([^>]+)>:$", line)
        if m:
            cur = funcs.setdefault(m.group(1), [])
            continue
        if cur is None:
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+(R_\S+)\s+(\S+)$", line)
        if m:
            sym = re.sub(r"[-+]0x[0-9a-f]+$", "", m.group(3))
            cur[-1][2].append((m.group(2), sym, int(m.group(1), 16)))
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+(.*)$", line)
        if m:
            cur.append((int(m.group(1), 16), m.group(2).strip(), []))
    return funcs


def symbols(target, obj):
    """(undefined names, {global function name: size})"""
    cmd = [*TARGETS[target].objdump, "-t", obj]
    text = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    undef, funcs = set(), {}
    for line in text.splitlines():
        parts = line.split()
        if "*UND*" in parts and len(parts) >= 4:
            undef.add(parts[-1])
        elif len(parts) >= 6 and parts[1] == "g" and "F" in parts[2:4]:
            funcs[parts[-1]] = int(parts[-2], 16)
    return undef, funcs


def verify(target, obj, dis):
    """Return a list of ABI violations (empty when the object is good)."""
    t = TARGETS[target]
    errors = []
    undef, gfuncs = symbols(target, obj)
    if undef != HOLES:
        errors.append(f"undefined symbols must be exactly {sorted(HOLES)}, got {sorted(undef)}")
    expected = set(gen_stencils.names())
    have = {n for n in gfuncs if n.startswith("st_")}
    for n in sorted(expected - have):
        errors.append(f"missing stencil {n}")
    for n in sorted(have - expected):
        errors.append(f"unexpected stencil {n}")
    for n in sorted(gfuncs):
        if not (n.startswith("st_") or n.startswith("cpm_")):
            errors.append(f"global function {n} is neither a stencil st_* nor a helper cpm_*")
    funcs = parse_functions(dis)
    for name, insns in sorted(funcs.items()):
        relocs = [(ty, sym, off, text) for _, text, rs in insns for ty, sym, off in rs]
        for ty, sym, _off, text in relocs:
            if t.relocs and ty not in t.relocs:
                errors.append(f"{name}: relocation {ty} against {sym} (allowed: {sorted(t.relocs)})")
            if name.startswith("cpm_") and sym in HOLES:
                errors.append(f"{name}: helper uses the hole {sym}")
            if sym in undef - HOLES:
                errors.append(f"{name}: refers to undefined {sym}")
            if target == "x86_64" and text.startswith("call") and not sym.startswith("cpm_"):
                errors.append(f"{name}: calls {sym} (only cpm_* helpers may be called)")
        if not name.startswith("st_"):
            continue
        if name == "st_return":
            if relocs:
                errors.append("st_return must not have relocations")
            continue
        exits = sum(1 for ty, sym, _, _ in relocs if sym == "cp_next")
        if exits != 1:
            # e.g. a select compiled into a branch with a tail call on each side: the
            # linker drops only the final jump, so there must be exactly one
            errors.append(f"{name}: {exits} jumps to cp_next (exactly one, the last, allowed)")
        if target == "x86_64":
            last_off, last_text, last_relocs = insns[-1]
            size = gfuncs.get(name, 0)
            if not (last_text.startswith("jmp") and
                    [(ty, sym) for ty, sym, _ in last_relocs] == [(t.tail_reloc, "cp_next")] and
                    last_relocs[0][2] == size - 4):
                errors.append(f"{name}: does not end with `jmp cp_next` ({last_text!r})")
        else:
            if not any(ty == t.tail_reloc and sym == "cp_next" for ty, sym, _, _ in relocs):
                errors.append(f"{name}: no {t.tail_reloc} tail call to cp_next")
        if "_sqrt_" in name and not any(text.startswith(t.sqrt_insn) for _, text, _ in insns):
            errors.append(f"{name}: sqrt is not the {t.sqrt_insn} instruction")
    return errors


SELFTEST_C = r"""
#include <stdint.h>
extern void cp_next(float a, float b, int32_t i, int32_t j);
extern float cp_mf;
extern float floorf(float);
static const int32_t table[4] = {3, 1, 4, 1};
int32_t idx;
void st_bad_call(float a, float b, int32_t i, int32_t j) {
    a = floorf(a);
    __attribute__((musttail)) return cp_next(a, b, i, j);
}
void st_bad_tail(float a, float b, int32_t i, int32_t j) { cp_mf = a + (float)table[idx & 3]; }
void st_bad_two(float a, float b, int32_t i, int32_t j) {
    if (i)
        __attribute__((musttail)) return cp_next(b, a, i, j);
    __attribute__((musttail)) return cp_next(a, b, i, j);
}
"""


def selftest(target):
    """The checker must catch a libc call, an absolute relocation, a missing tail and
    a second exit."""
    if target != "x86_64":
        return []
    with tempfile.TemporaryDirectory() as tmp:
        src, obj = os.path.join(tmp, "bad.c"), os.path.join(tmp, "bad.o")
        with open(src, "w") as f:
            f.write(SELFTEST_C)
        cmd = [sys.executable, "-m", "ziglang", "cc", *TARGETS[target].flags, *COMMON_FLAGS,
               src, "-o", obj]
        subprocess.run(cmd, check=True, capture_output=True)
        errors = "\n".join(verify(target, obj, disassemble(target, obj)))
    wanted = ["undefined symbols must be exactly", "st_bad_call: calls floorf",
              "relocation R_X86_64_32", "st_bad_tail: does not end with `jmp cp_next`",
              "missing stencil st_add_f_r0r0_r0", "unexpected stencil st_bad_call",
              "st_bad_two: 2 jumps to cp_next"]
    return [f"checker self-test: expected an error containing {w!r}" for w in wanted
            if w not in errors]


def paths(target):
    if TARGETS[target].committed:
        return os.path.join(HERE, f"{target}.o"), os.path.join(HERE, f"{target}.dis")
    d = os.path.join(HERE, "build")
    os.makedirs(d, exist_ok=True)
    return os.path.join(d, f"{target}.o"), os.path.join(d, f"{target}.dis")


def summary(target, obj, dis):
    funcs = parse_functions(dis)
    st = {n: i for n, i in funcs.items() if n.startswith("st_")}
    # bytes a stencil contributes when its tail jump (5 bytes on x86_64) is dropped
    _, gfuncs = symbols(target, obj)
    code = sum(gfuncs[n] for n in st)
    helpers = {n: gfuncs[n] for n in gfuncs if n.startswith("cpm_")}
    return (f"{target}: {len(st)} stencils, {code} bytes of stencil code, helpers "
            + ", ".join(f"{n} {s}" for n, s in sorted(helpers.items()))
            + f"; object {os.path.getsize(obj)} bytes")


def diff_summary(old, new, name):
    d = list(difflib.unified_diff(old.splitlines(), new.splitlines(), f"{name} (committed)",
                                  f"{name} (rebuilt)", lineterm="", n=1))
    head = "\n".join(d[:40])
    return head + (f"\n... ({len(d) - 40} more diff lines)" if len(d) > 40 else "")


def main(argv):
    check = "--check" in argv
    target = "x86_64"
    if "--target" in argv:
        target = argv[argv.index("--target") + 1]
        if target not in TARGETS:
            sys.exit(f"build.py: unknown target {target}; known: {', '.join(TARGETS)}")
    bless = os.environ.get("COPAPY_BLESS") == "1"
    failures = []

    if check:
        failures += selftest(target)
        if gen_stencils.main(["--check"]) != 0:
            failures.append("generated/stencils.c is out of date (run gen_stencils.py)")
    else:
        gen_stencils.main([])

    obj_path, dis_path = paths(target)
    with tempfile.TemporaryDirectory() as tmp:
        fresh = os.path.join(tmp, f"{target}.o")
        compile_object(target, fresh)
        dis = disassemble(target, fresh)
        errors = verify(target, fresh, dis)
        for e in errors:
            print(f"ABI: {e}", file=sys.stderr)
        if errors:
            failures.append(f"{len(errors)} ABI violations in the {target} object")
        new_bytes = open(fresh, "rb").read()
        if check:
            if not TARGETS[target].committed:
                print(f"note: {target} has no committed object; checked the ABI only")
            else:
                old_bytes = open(obj_path, "rb").read() if os.path.exists(obj_path) else b""
                if old_bytes != new_bytes:
                    failures.append(
                        f"{os.path.relpath(obj_path)} differs from a fresh build "
                        f"({len(old_bytes)} vs {len(new_bytes)} bytes): run "
                        "`python3 stencils/build.py` with the pinned compiler "
                        "(stencils/requirements.txt) and commit the result")
        else:
            shutil.copyfile(fresh, obj_path)
            print(f"wrote {os.path.relpath(obj_path)} ({len(new_bytes)} bytes)")
        if TARGETS[target].committed or not check:
            old_dis = open(dis_path).read() if os.path.exists(dis_path) else ""
            if (bless or not TARGETS[target].committed) and not check:
                with open(dis_path, "w", newline="\n") as f:
                    f.write(dis)
                print(f"wrote {os.path.relpath(dis_path)}"
                      + (" (blessed)" if TARGETS[target].committed else ""))
            elif old_dis != dis:
                print(diff_summary(old_dis, dis, os.path.basename(dis_path)), file=sys.stderr)
                failures.append(f"{os.path.relpath(dis_path)} differs from the disassembly of the "
                                "fresh object: review the diff, then rerun with COPAPY_BLESS=1")
        print(summary(target, fresh, dis))

    if failures:
        for f in failures:
            print(f"FAILED: {f}", file=sys.stderr)
        return 1
    print("ok" + (" (check)" if check else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
