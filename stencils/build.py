#!/usr/bin/env python3
"""Build the stencil objects for every target and check them.

    python3 stencils/build.py                  regenerate generated/stencils.c, rebuild
                                               <target>.o for every target, verify them,
                                               compare each <target>.dis
    COPAPY_BLESS=1 python3 stencils/build.py   ... and rewrite the golden <target>.dis
    python3 stencils/build.py --check          rebuild into a temp dir; exit 1 unless the
                                               generated C, every object's bytes and every
                                               golden disassembly match what is committed,
                                               and every object passes the ABI checks here
                                               and the copapy linker's own (stencil-check)
    python3 stencils/build.py --target NAME    one target only (see TARGETS)

The compiler is `python3 -m ziglang cc` (pip install -r stencils/requirements.txt). It
always compiles generated/stencils.c from the stencils/ directory, so the object does
not depend on where the checkout is: the same compiler gives the same bytes.

ABI checks (see README.md), the same for every target: the only undefined symbols are
cp_next, cp_mf, cp_mi, cp_mf2, cp_mi2, cp_head (the loop back-edge's target); the st_*
functions are exactly the ones gen_stencils.py lists; every stencil except st_return has
exactly one reference to cp_next, the target's tail jump, as its last instruction (only
literal data may follow it); stencils call only cpm_* helpers; helpers never use the holes; only relocation
types the linker supports appear; sqrt is the hardware instruction. Then the object is
handed to the Rust stencil database (`cargo run --example stencil-check`), so an object
the compiler would reject can never be committed.
"""
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bounds  # noqa: E402
import branch_allowlist  # noqa: E402
import cfg  # noqa: E402
import cycles  # noqa: E402
import gen_packs  # noqa: E402
import gen_stencils  # noqa: E402

SOURCE = "generated/stencils.c"  # relative to HERE: a fixed path gives fixed bytes

COMMON_FLAGS = [
    "-O2", "-g0", "-ffreestanding", "-fno-pic", "-ffunction-sections",
    "-fno-asynchronous-unwind-tables", "-fno-unwind-tables", "-fno-stack-protector",
    "-fomit-frame-pointer", "-ffp-contract=off", "-fno-math-errno", "-fno-builtin", "-c",
]


@dataclass
class Isa:
    """What the checks here know of an instruction set's objects."""
    objdump: list          # disassembler command that understands it
    tail_reloc: str        # relocation of the final tail jump to cp_next
    call_relocs: set       # relocations of calls (they may only call cpm_* helpers)
    sqrt_insn: str         # what __builtin_sqrtf must become
    relocs: set            # every relocation type the copapy linker accepts for it


@dataclass
class Target(Isa):
    flags: list            # -target / -mcpu (+ extra) for zig cc, before COMMON_FLAGS
    # instructions whose results would differ from IEEE float32 on this core (ARMv7 NEON
    # flushes subnormals to zero, so a vector float compare or add is not bit-exact)
    forbidden: str | None = None
    # whether its stencils include the packed math (gen_packs.py, st_pack4_*)
    vector_math: bool = False
    # its fused multiply-add instructions (one rounding of a*b + c), none of which may
    # appear in any stencil or helper
    fused_madd: str | None = None


# The targets (names, instruction sets and zig flags) and what the checks here know of
# each instruction set come from the shared tables in crates/copapy-program/src/
# (targets.rs, isas.rs), written out as targets.json and isas.json (a cargo test keeps
# them equal; isas.json adds the relocations the compiler's isa/ module accepts). Cores
# are chosen as the least capable of their family, so a program runs on every board of
# the row: armv7 is a Cortex-A9 (no integer divide in ARM mode: our helper cpm_div_s32
# divides), armv6 the ARM1176JZF-S of the Raspberry Pi 1/Zero (VFPv2, no MOVW/MOVT, so
# addresses come from literal pools).
ISA_TABLE = os.path.join(HERE, "isas.json")


def load_isas():
    """{instruction set: Isa} for every row of the shared instruction set table."""
    with open(ISA_TABLE, encoding="utf-8") as f:
        rows = json.load(f)
    return {row["arch"]: Isa([row["objdump"]], row["tail_reloc"], set(row["call_relocs"]),
                             row["sqrt_insn"], set(row["relocs"])) for row in rows}


ISAS = load_isas()
# armv7: NEON flushes subnormals, so float code must stay on VFP (its zig flags switch
# the SLP vectoriser off; CPM_FLOAT_LOOP the loop vectoriser per float loop)
FORBIDDEN = {"armv7": r"v(?!mov|ld|st)\w*\.f32\s+[qd]\d+"}
# Fused multiply-add instructions, by instruction set: they round a*b + c once, where
# copapy's float semantics (and the multiply-add superinstructions, optable.FUSED) round
# the product and the sum separately. -ffp-contract=off keeps clang from forming them;
# this catches any that slip in. ARM's VMLA/VMLS (VFP) round the product and the sum
# separately (ARM ARM: "not fused"), so they are allowed; x86_64's FMA3 is not in the
# baseline the x86_64 target compiles for, but a newer -mcpu would bring it.
FUSED_MADD = {
    "x86_64": r"v?fn?m(add|sub)(132|213|231)[sp][sd]\b",
    "aarch64": r"(fn?m(add|sub)|fml[as])\b",
    "arm": r"vfn?m[as]\.",
    "thumb": r"vfn?m[as]\.",
    "riscv64": r"fn?m(add|sub)\.[sdh]\b",
    "riscv32": r"fn?m(add|sub)\.[sdh]\b",
}
# the instruction sets with a hardware fused multiply-add at the targets' cores, where
# __builtin_fmaf becomes one instruction (elsewhere a call of fmaf): the self-test's case
FMA_HARDWARE = {"aarch64", "thumb", "riscv64", "riscv32"}
# the instruction sets whose SIMD float arithmetic is IEEE, where arrays.h sets
# CPM_VEC_MATH: the array kernels run math 4 lanes at a time and the packed scalar math
# (gen_packs.py) exists; verify() checks that each object agrees
VECTOR_MATH_ISAS = {"x86_64", "aarch64"}


TABLE = os.path.join(HERE, "targets.json")


def load_targets():
    """{name: Target} for every row of the shared table, in its order."""
    with open(TABLE, encoding="utf-8") as f:
        rows = json.load(f)
    out = {}
    for row in rows:
        isa = ISAS.get(row["arch"])
        if isa is None:
            sys.exit(f"build.py: target {row['name']} has instruction set {row['arch']}, "
                     f"which stencils/isas.json does not describe (add its row to "
                     f"crates/copapy-program/src/isas.rs)")
        out[row["name"]] = Target(**vars(isa), flags=row["cflags"],
                                  forbidden=FORBIDDEN.get(row["name"]),
                                  vector_math=row["arch"] in VECTOR_MATH_ISAS,
                                  fused_madd=FUSED_MADD[row["arch"]])
    return out


TARGETS = load_targets()

HOLES = {"cp_next", "cp_mf", "cp_mi", "cp_mf2", "cp_mi2", "cp_a0", "cp_a1", "cp_a2", "cp_a3", "cp_n",
         "cp_head"}


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
    """{name: [(offset, text, [(reloc_type, symbol, offset)], is_data)]} from disassemble().

    ARM mapping symbols ($a, $t, $d, $x) are not functions: lines after a `$d` label
    are literal data of the function they sit in."""
    funcs, cur, data = {}, None, False
    for line in dis.splitlines():
        m = re.match(r"^[0-9a-f]+ <([^>]+)>:$", line)
        if m:
            if m.group(1).startswith("$"):
                data = m.group(1).startswith("$d")
            else:
                cur, data = funcs.setdefault(m.group(1), []), False
            continue
        if line.startswith("Disassembly of section"):
            cur = None
            continue
        if cur is None:
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+(R_\S+)\s+(\S+)$", line)
        if m and cur:
            sym = re.sub(r"[-+]0x[0-9a-f]+$", "", m.group(3))
            cur[-1][2].append((m.group(2), sym, int(m.group(1), 16)))
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+(.*)$", line)
        if m:
            cur.append((int(m.group(1), 16), m.group(2).strip(), [], data))
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
    if not t.vector_math:
        expected -= set(gen_packs.names())
    have = {n for n in gfuncs if n.startswith("st_")}
    for n in sorted(expected - have):
        errors.append(f"missing stencil {n}")
    for n in sorted(have - expected):
        errors.append(f"unexpected stencil {n}")
    for n in sorted(gfuncs):
        if not (n.startswith("st_") or n.startswith("cpm_")):
            errors.append(f"global function {n} is neither a stencil st_* nor a helper cpm_*")
    funcs = parse_functions(dis)
    # no conditional branch outside branch_allowlist.py (none at all in a stencil)
    errors += cfg.branch_errors(target, funcs, branch_allowlist.allowed,
                                branch_allowlist.SKIP_LIMIT)
    for name, insns in sorted(funcs.items()):
        relocs = [(ty, sym, off, text) for _, text, rs, _ in insns for ty, sym, off in rs]
        for ty, sym, _off, text in relocs:
            if ty not in t.relocs:
                errors.append(f"{name}: relocation {ty} against {sym} (allowed: {sorted(t.relocs)})")
            if name.startswith("cpm_") and sym in HOLES:
                errors.append(f"{name}: helper uses the hole {sym}")
            if sym in undef - HOLES:
                errors.append(f"{name}: refers to undefined {sym}")
            is_call = ty in t.call_relocs and (ty != t.tail_reloc or text.split()[0] in
                                               ("call", "callq", "jalr", "auipc"))
            if is_call and sym not in ("cp_next", "cp_head") and not sym.startswith("cpm_"):
                errors.append(f"{name}: calls {sym} (only cpm_* helpers may be called)")
        fused = next((text for _, text, _, _ in insns if re.match(t.fused_madd, text)), None)
        if fused:
            errors.append(f"{name}: {fused!r} is a fused multiply-add (one rounding of a*b + c; "
                          "copapy rounds the product and the sum separately: keep "
                          "-ffp-contract=off and no fmaf)")
        if t.forbidden:
            for _, text, _, _ in insns:
                if re.match(t.forbidden, text):
                    errors.append(f"{name}: {text!r} is a NEON float instruction (not IEEE: "
                                  "subnormals flush to zero); keep the loop scalar with "
                                  "CPM_FLOAT_LOOP")
                    break
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
        code = [i for i in insns if not i[3]]
        last_relocs = [(ty, sym) for ty, sym, _ in code[-1][2]] if code else []
        # RISC-V's tail call is an auipc+jalr pair whose relocation sits on the auipc
        tail = code[-2] if target.startswith("riscv") and len(code) >= 2 else (code[-1] if code else None)
        tail_relocs = [(ty, sym) for ty, sym, _ in tail[2]] if tail else []
        if (t.tail_reloc, "cp_next") not in tail_relocs or (
                target.startswith("riscv") and not code[-1][1].startswith("jr")) or (
                not target.startswith("riscv") and not last_relocs):
            errors.append(f"{name}: does not end with its tail jump to cp_next "
                          f"({code[-1][1] if code else 'no code'!r})")
        # array stencils call their kernel (cpm_arr_sqrt_f holds the instruction)
        is_sqrt = "_sqrt_" in name and not name.startswith("st_arr_")
        if is_sqrt and not any(text.startswith(t.sqrt_insn) for _, text, _, _ in insns):
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
    /* long paths, so no target turns them into predicated code with one jump */
    if (i)
        __attribute__((musttail)) return cp_next(b * a - b / a, a / b + a * b * a, i, j - 3);
    __attribute__((musttail)) return cp_next(a / b * a - b, b / a - a * b * b, i + 5, j);
}
void st_bad_fma(float a, float b, int32_t i, int32_t j) {
    __attribute__((musttail)) return cp_next(__builtin_fmaf(a, b, a), b, i, j);
}
"""


def selftest(target):
    """The checker must catch a libc call, an absolute relocation (x86_64), a missing
    tail and a second exit, on every target."""
    with tempfile.TemporaryDirectory() as tmp:
        src, obj = os.path.join(tmp, "bad.c"), os.path.join(tmp, "bad.o")
        with open(src, "w") as f:
            f.write(SELFTEST_C)
        cmd = [sys.executable, "-m", "ziglang", "cc", *TARGETS[target].flags, *COMMON_FLAGS,
               src, "-o", obj]
        subprocess.run(cmd, check=True, capture_output=True)
        errors = "\n".join(verify(target, obj, disassemble(target, obj)))
    wanted = ["undefined symbols must be exactly", "st_bad_call: calls floorf",
              "st_bad_tail: does not end with its tail jump",
              "missing stencil st_add_f_r0r0_r0", "unexpected stencil st_bad_call",
              "st_bad_two: 2 jumps to cp_next", "st_bad_two: conditional branch"]
    if target == "x86_64":
        wanted.append("relocation R_X86_64_32")
    arch = next(r["arch"] for r in json.load(open(TABLE, encoding="utf-8")) if r["name"] == target)
    wanted.append("is a fused multiply-add" if arch in FMA_HARDWARE else "st_bad_fma: calls fmaf")
    return [f"checker self-test: expected an error containing {w!r}" for w in wanted
            if w not in errors]


def paths(target):
    return os.path.join(HERE, f"{target}.o"), os.path.join(HERE, f"{target}.dis")


def linker_check(obj):
    """Errors the copapy linker's stencil database reports for obj (its exact rules)."""
    root = os.path.dirname(HERE)
    r = subprocess.run(["cargo", "run", "-q", "-p", "copapy-compiler", "--example",
                        "stencil-check", "--", obj], cwd=root, capture_output=True, text=True)
    if r.returncode == 0:
        return []
    return [line for line in (r.stdout + r.stderr).splitlines() if line.strip()] or [
        f"stencil-check failed with exit code {r.returncode}"]


def summary(target, obj, dis):
    funcs = parse_functions(dis)
    st = {n: i for n, i in funcs.items() if n.startswith("st_")}
    # bytes a stencil contributes when its tail jump (5 bytes on x86_64) is dropped
    _, gfuncs = symbols(target, obj)
    code = sum(gfuncs[n] for n in st)
    helpers = {n: gfuncs[n] for n in gfuncs if n.startswith("cpm_")}
    # every helper's size goes to a file (a 4 KB line per target would bury the test log)
    details = os.path.join(os.path.dirname(HERE), "target", "stencil-sizes", f"{target}.txt")
    os.makedirs(os.path.dirname(details), exist_ok=True)
    with open(details, "w") as f:
        f.writelines(f"{n} {s}\n" for n, s in sorted(helpers.items()))
    return (f"{target}: {len(st)} stencils, {code} bytes of stencil code, {len(helpers)} helpers "
            f"({sum(helpers.values())} bytes; each: {os.path.relpath(details)}); "
            f"object {os.path.getsize(obj)} bytes")


def diff_summary(old, new, name):
    d = list(difflib.unified_diff(old.splitlines(), new.splitlines(), f"{name} (committed)",
                                  f"{name} (rebuilt)", lineterm="", n=1))
    head = "\n".join(d[:40])
    return head + (f"\n... ({len(d) - 40} more diff lines)" if len(d) > 40 else "")


def build_target(target, check, bless, failures):
    failures += selftest(target) if check else []
    obj_path, dis_path = paths(target)
    with tempfile.TemporaryDirectory() as tmp:
        fresh = os.path.join(tmp, f"{target}.o")
        compile_object(target, fresh)
        dis = disassemble(target, fresh)
        errors = verify(target, fresh, dis)
        errors += [f"linker: {e}" for e in linker_check(fresh)]
        for e in errors:
            print(f"ABI ({target}): {e}", file=sys.stderr)
        if errors:
            failures.append(f"{len(errors)} ABI violations in the {target} object")
        new_bytes = open(fresh, "rb").read()
        if check:
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
        old_dis = open(dis_path).read() if os.path.exists(dis_path) else ""
        if (bless or not old_dis) and not check:
            with open(dis_path, "w", newline="\n") as f:
                f.write(dis)
            print(f"wrote {os.path.relpath(dis_path)}" + (" (blessed)" if bless else ""))
        elif old_dis != dis:
            print(diff_summary(old_dis, dis, os.path.basename(dis_path)), file=sys.stderr)
            failures.append(f"{os.path.relpath(dis_path)} differs from the disassembly of the "
                            "fresh object: review the diff, then rerun with COPAPY_BLESS=1")
        print(summary(target, fresh, dis))


def generated_from_dis(check):
    """The instruction-bounds table and its doc (bounds.py), from the committed
    disassembly of every target: written, or with --check compared."""
    funcs = {t: parse_functions(open(paths(t)[1]).read()) for t in TARGETS}
    tab = bounds.table(funcs)
    cyc = {cycles.TARGET: cycles.table(funcs[cycles.TARGET])}
    varying = {t: bounds.data_dependent(t, funcs[t], tab[t]) for t in TARGETS}
    failures = []
    for path, text in ((bounds.TABLE, bounds.encode(tab)),
                       (bounds.DOC, bounds.doc(tab, cyc, varying)),
                       (bounds.CYCLES, bounds.encode(cyc)),
                       (bounds.VARYING, json.dumps(varying, indent=1) + "\n")):
        old = open(path).read() if os.path.exists(path) else ""
        if old == text:
            continue
        if check:
            failures.append(f"{os.path.relpath(path)} is out of date: run "
                            "`python3 stencils/build.py` and commit it")
        else:
            with open(path, "w", newline="\n") as f:
                f.write(text)
            print(f"wrote {os.path.relpath(path)}")
    return failures


def main(argv):
    check = "--check" in argv
    targets = list(TARGETS)
    if "--target" in argv:
        target = argv[argv.index("--target") + 1]
        if target not in TARGETS:
            sys.exit(f"build.py: unknown target {target}; known: {', '.join(TARGETS)}")
        targets = [target]
    bless = os.environ.get("COPAPY_BLESS") == "1"
    failures = []

    if check:
        if gen_stencils.main(["--check"]) != 0:
            failures.append("generated/stencils.c is out of date (run gen_stencils.py)")
    else:
        gen_stencils.main([])
    for target in targets:
        build_target(target, check, bless, failures)
    failures += generated_from_dis(check)

    if failures:
        for f in failures:
            print(f"FAILED: {f}", file=sys.stderr)
        return 1
    print("ok" + (" (check)" if check else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
