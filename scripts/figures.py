"""Every size and timing table of README.md and docs/*.md, regenerated from measurements.

A figure lives between marker comments, and only this script writes what is between them:

    <!-- figures:NAME -->
    ...generated text...
    <!-- /figures -->

    .venv/bin/python scripts/figures.py --check         # size figures: exit 1 if one differs
    .venv/bin/python scripts/figures.py --write         # measure and rewrite every figure
    .venv/bin/python scripts/figures.py --write --only runner-size,program-sizes
    .venv/bin/python scripts/figures.py --print NAME    # print one figure's text

Sizes (program files, code bytes, runner builds, the examples list) are deterministic for a
source tree and a toolchain, so ``--check`` (run by scripts/test.sh) fails when a committed
one differs from what the tree gives now; rerun ``--write`` after changing code. Timings are
measured anew by ``--write`` and never checked. Everything is measured, nothing is typed in:
when another change moves a size, ``--write`` picks it up.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import importlib
import re
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
FIRMWARE_BAR = 4096  # bytes of copapy code for load+run on Cortex-M4 (README's bar)
BLOCK = re.compile(r"(<!-- figures:([a-z0-9-]+) -->\n)(.*?)(<!-- /figures -->)", re.S)


@dataclass(frozen=True)
class Figure:
    name: str
    checked: bool  # sizes: checked by --check; timings: only rewritten by --write
    make: Callable[[], str]


# -- measuring -----------------------------------------------------------------------------


def run(cmd: list[str], **kwargs: object) -> str:
    """stdout of a command that must succeed; its stderr is shown when it fails."""
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, **kwargs)  # type: ignore[call-overload]
    except OSError as e:
        raise SystemExit(f"figures: cannot run {cmd[0]} ({e.strerror}); scripts/setup.sh installs what "
                         "the figures need (Rust, llvm, .venv)") from None
    if done.returncode != 0:
        raise SystemExit(f"figures: {' '.join(cmd)} failed:\n{done.stderr}{done.stdout}")
    if done.stderr.strip():
        print(done.stderr.rstrip(), file=sys.stderr)
    return str(done.stdout)


def first_table(text: str) -> str:
    """The first Markdown table in a script's output."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("|")), None)
    if start is None:
        raise SystemExit(f"figures: no table in this output:\n{text}")
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return "\n".join(lines[start:end]) + "\n"


def script_table(script: str, *args: str) -> Callable[[], str]:
    return lambda: first_table(run([PYTHON, script, *args]))


def rustc_version() -> str:
    version = run(["rustc", "--version"]).split()
    return " ".join(version[:2])


def section_size(elf: Path, section: str = ".text") -> int:
    sizes = run(["llvm-size", "-A", str(elf)])
    return sum(int(f[1]) for f in (line.split() for line in sizes.splitlines()) if f and f[0] == section)


def functions(elf: Path) -> list[tuple[int, str]]:
    """(size, demangled name) of every function kept in ``elf``: once per address, as the
    linker folds identical functions (two instances of one generic) into one body that
    keeps both symbols."""
    out, seen = [], set()
    for line in run(["llvm-nm", "-S", "-t", "d", "-C", str(elf)]).splitlines():
        f = line.split(maxsplit=3)
        if len(f) == 4 and f[2] in "Tt" and int(f[1]) > 0 and f[0] not in seen:  # not labels
            seen.add(f[0])
            out.append((int(f[1]), f[3]))
    return out


def short(name: str) -> str:
    """A legacy-mangled Rust name as llvm-nm leaves it, readable: escapes undone, the
    hash suffix (which changes with any code change) dropped."""
    for code, char in (("$LT$", "<"), ("$GT$", ">"), ("$u20$", " "), ("$C$", ","), ("$u5b$", "["),
                       ("$u5d$", "]"), ("$RF$", "&"), ("..", "::")):
        name = name.replace(code, char)
    return re.sub(r"::h[0-9a-f]{16}$", "", name).lstrip("_")


def is_ours(name: str) -> bool:
    return "copapy" in name


def gc_link(lib: Path, keep: list[str], out: Path, entry: str = "copapy_load") -> Path:
    """The static library linked as a firmware links it: only what ``entry`` (the loader
    it calls) and the ``keep`` symbols reach survives --gc-sections."""
    lld = next(Path(run(["rustc", "--print", "sysroot"]).strip()).rglob("rust-lld"))
    run([str(lld), "-flavor", "gnu", "--gc-sections", "--unresolved-symbols=ignore-all", "-e",
         entry, *[a for s in keep for a in ("-u", s)], "-o", str(out), str(lib)])
    return out


def firmware_lib(target: str) -> Path:
    run(["cargo", "build", "--profile", "firmware", "-q", "-p", "copapy-firmware", "--target", target])
    return ROOT / "target" / target / "firmware" / "libcopapy_firmware.a"


def runner_size() -> str:
    """.text of the firmware runner core per target, stable toolchain, firmware profile."""
    rows = ["| build | functions kept | total `.text` | copapy code | bar | met |",
            "| --- | --- | ---: | ---: | --- | --- |"]
    notes = []
    verdict = ""
    with tempfile.TemporaryDirectory() as tmp:
        for target, host in (("thumbv7em-none-eabihf", False), ("riscv32imafc-unknown-none-elf", False),
                             ("x86_64-unknown-linux-gnu", True)):
            lib = firmware_lib(target)
            for what, keep, entry in (
                    ("load + run", ["copapy_run"], "copapy_load"),
                    ("+ symbol, messages", ["copapy_run", "copapy_symbol", "copapy_error_message"],
                     "copapy_load"),
                    ("pre-linked images only: load + run", ["copapy_run"], "copapy_load_prelinked")):
                elf = gc_link(lib, keep, Path(tmp) / f"{target}.elf", entry)
                funcs = functions(elf)
                ours = sum(size for size, name in funcs if is_ours(name))
                total = "—" if host else f"{section_size(elf):,} B"
                bar = met = ""
                if target.startswith("thumbv7em") and what == "load + run":
                    bar = "≤ 4 KiB"
                    met = f"copapy code: {against_bar(ours)}; total: {against_bar(section_size(elf))}"
                    verdict = (f"The runner core's copapy code on {target} is {ours:,} B: the ≤ 4 KiB bar "
                               f"is {against_bar(ours)}.")
                    others = sorted(((s, short(n)) for s, n in funcs if not is_ours(n)), reverse=True)
                    largest = max((s, short(n)) for s, n in funcs if is_ours(n))
                    notes.append(
                        f"On {target} (load + run), what `core` and `compiler_builtins` add to our "
                        f"{ours:,} B is `{others[0][1]}` ({others[0][0]:,} B) and {len(others) - 1} "
                        f"smaller functions ({sum(s for s, _ in others[1:]):,} B); the largest "
                        f"function of ours is `{largest[1]}` ({largest[0]:,} B).")
                label = f"{target}{' (host; its total includes std)' if host else ''}"
                rows.append(f"| {label} | {what} | {total} | {ours:,} B | {bar} | {met} |")
    caption = (f"{verdict} Measured with {rustc_version()} (stable), profile `firmware` "
               "(`opt-level = \"z\"`, fat LTO, `panic = \"abort\"`).")
    return "\n".join(rows) + "\n\n" + textwrap.fill(caption + " " + " ".join(notes), 92) + "\n"


def against_bar(size: int) -> str:
    return "met" if size <= FIRMWARE_BAR else f"not met ({size - FIRMWARE_BAR:,} B over)"


def copapy_run_size() -> str:
    """Code of the standalone copapy-run binary (file sizes embed the build's paths, so the
    deterministic figure is `.text`)."""
    run(["cargo", "build", "--release", "-q", "-p", "copapy-run"])
    host = run(["rustc", "-vV"]).split("host: ")[1].split()[0]
    elf = ROOT / "target" / "release" / "copapy-run"
    return ("| `copapy-run` build | `.text` |\n| --- | ---: |\n"
            f"| {host}, release, {rustc_version()} | {section_size(elf):,} B |\n")


def math_helper_sizes() -> str:
    """Bytes of each math helper (the scalar ``cpm_*`` functions, copied once into a
    program that uses them) per target, from the committed stencil objects."""
    targets = ["x86_64", "aarch64", "armv7", "armv6", "cortex-m4", "riscv64", "riscv32"]
    sizes: dict[str, dict[str, int]] = {}
    for target in targets:
        for line in run(["llvm-nm", "-S", "-t", "d", f"stencils/{target}.o"]).splitlines():
            f = line.split()
            if len(f) == 4 and f[2] in "Tt" and f[3].startswith("cpm_") and not f[3].startswith("cpm_arr_"):
                sizes.setdefault(f[3], {})[target] = int(f[1])
    rows = ["| helper | " + " | ".join(targets) + " |", "| --- |" + " ---: |" * len(targets)]
    # "—": the target needs no such helper (only 32-bit ARM lacks an integer divide)
    for name in sorted(sizes):
        cells = " | ".join(f"{sizes[name][t]:,}" if t in sizes[name] else "—" for t in targets)
        rows.append(f"| `{name}` | {cells} |")
    return "\n".join(rows) + "\n"


def x86_constants() -> str:
    """The shared constant section the basic example copies on x86_64."""
    cst16 = section_size(ROOT / "stencils" / "x86_64.o", ".rodata.cst16")
    return textwrap.fill(
        "On x86_64 the basic example also copies the whole `.rodata.cst16` section of the stencil "
        f"object ({cst16:,} B of 16-byte constants, shared by every stencil that uses one), which "
        "grows as stencils are added.", 92) + "\n"


def array_code() -> str:
    """Code bytes of the README benchmark on cp.array (benches/bench_arrays.py) at two n."""
    sys.path.insert(0, str(ROOT / "benches"))
    readme_program = importlib.import_module("bench_arrays").readme_program
    code = {n: readme_program(n)[0].stats()[1] for n in (600, 100_000)}
    same = "the same" if code[600] == code[100_000] else f"{code[100_000]:,} B"
    met = "met" if code[600] <= 4096 else "not met"
    return textwrap.fill(
        f"Code of the README benchmark on `cp.array`: {code[600]:,} B at n = 600 ({same} at n = "
        f"100,000: the arrays are data, the loops are kernels); bar ≤ 4 KiB: {met}.", 92) + "\n"


def examples_list() -> str:
    """Every example with the first line of its docstring."""
    rows = ["| example | what it shows |", "| --- | --- |"]
    for path in sorted((ROOT / "examples").glob("*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        first = doc.strip().splitlines()[0].rstrip(".") if doc.strip() else ""
        rows.append(f"| `{path.name}` | {first} |")
    return "\n".join(rows) + "\n"


def pid_loop() -> str:
    """The 1 kHz PID loop under copapy-run for 10 s: step time and wake-up lateness."""
    run(["cargo", "build", "--release", "-q", "-p", "copapy-run"])
    with tempfile.TemporaryDirectory() as tmp:
        prog = str(Path(tmp) / "pid.cpy")
        run([PYTHON, "examples/pid_state_loop.py", prog])
        done = subprocess.run([str(ROOT / "target" / "release" / "copapy-run"), prog, "--period", "1ms",
                               "--duration", "10s"], capture_output=True, text=True, check=True)
    stats = {}
    for line in done.stderr.splitlines():
        key, _, rest = line.partition(": ")
        if key in ("step time", "wake-up lateness"):
            stats[key] = dict(re.findall(r"(min|median|p99\.9|p99|max) ([\d.]+ µs)", rest))
    rows = ["| 10,000 steps at 1 kHz | min | median | p99 | p99.9 | max |",
            "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for key, label in (("step time", "step time (wake-up to end of step)"),
                       ("wake-up lateness", "wake-up lateness (wake-up − deadline)")):
        s = stats[key]
        cells = " | ".join(s[k] for k in ("min", "median", "p99", "p99.9", "max"))
        rows.append(f"| {label} | {cells} |")
    said = [line for line in done.stderr.splitlines() if line.startswith(("realtime:", "period "))]
    return "\n".join(rows) + "\n\n" + textwrap.fill("; ".join(said) + ".", 92) + "\n"


LAYOUT_BASELINE = "3025029"
"""main before the redesign of issue 21 (one shape module, no import circles): the "before"."""
CONTAINER_MODULES = ("_arrays", "_elements", "_vectors", "_tensors", "_ndarray", "_array", "_packing",
                     "_protocol", "_casts", "_shapes", "_constructors", "_ndmethods", "_typed_ops")
"""The modules of Python's containers (tensor, vector, cp.array and their bridge), by either name."""


def room_lines(rev: str | None) -> dict[str, int]:
    """Lines per room at ``rev`` (None: the working tree): the Python containers, the rest of
    the Python package, and each Rust crate's sources."""
    if rev is None:
        files = [str(p.relative_to(ROOT)) for p in (ROOT / "python").rglob("*") if p.is_file()]
        files += [str(p.relative_to(ROOT)) for p in (ROOT / "crates").rglob("*.rs")]
    else:
        files = run(["git", "ls-tree", "-r", "--name-only", rev, "python", "crates"]).split()
    rooms: dict[str, int] = {}
    for f in sorted(files):
        path = Path(f)
        if path.suffix == ".py" and path.parts[:2] == ("python", "copapy"):
            room = "Python containers" if path.stem in CONTAINER_MODULES else "Python, the rest"
        elif path.suffix == ".rs" and path.parts[0] == "crates" and "src" in path.parts:
            room = path.parts[1]
        else:
            continue
        text = (ROOT / path).read_text() if rev is None else run(["git", "show", f"{rev}:{f}"])
        rooms[room] = rooms.get(room, 0) + text.count("\n")
    return rooms


def layout_lines() -> str:
    """Python and Rust lines per room, before the redesign and now."""
    before, now = room_lines(LAYOUT_BASELINE), room_lines(None)
    rows = [f"| room | lines at {LAYOUT_BASELINE} | lines now |", "| --- | ---: | ---: |"]
    for room in sorted(set(before) | set(now), key=lambda r: (not r.startswith("Python"), r)):
        rows.append(f"| {room} | {before.get(room, 0):,} | {now.get(room, 0):,} |")
    return "\n".join(rows) + "\n"


FIGURES = [
    Figure("layout-lines", False, layout_lines),
    Figure("examples", True, examples_list),
    Figure("targets", True, script_table("benches/target_figures.py")),
    Figure("x86-constants", True, x86_constants),
    Figure("math-helper-sizes", True, math_helper_sizes),
    Figure("array-code", True, array_code),
    Figure("loops", True, script_table("benches/bench_loops.py")),
    Figure("program-sizes", True, script_table("benches/bench_program_size.py")),
    Figure("runner-size", True, runner_size),
    Figure("copapy-run-size", True, copapy_run_size),
    Figure("bench-core", False, script_table("benches/bench_core.py")),
    Figure("bench-vectors", False, script_table("benches/bench_vectors.py")),
    Figure("bench-arrays", False, script_table("benches/bench_arrays.py")),
    Figure("bench-grad", False, script_table("benches/bench_grad.py")),
    Figure("bench-jit", False, script_table("benches/bench_jit.py")),
    Figure("bench-math", False, script_table("benches/math_speed.py")),
    Figure("pid-loop", False, pid_loop),
    Figure("kalman-ops", True, script_table("benches/kalman_ops.py")),
    Figure("workload-sizes", True, script_table("benches/workload_sizes.py")),
    Figure("workload-bytes", True, script_table("benches/workload_sizes.py", "--breakdown")),
    Figure("bench-workloads", False, script_table("benches/bench_workloads.py")),
]


# -- the documents -------------------------------------------------------------------------


def documents(root: Path) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def blocks(root: Path) -> dict[str, list[tuple[Path, str]]]:
    """Every marked block: name -> [(file, current text)]."""
    found: dict[str, list[tuple[Path, str]]] = {}
    for doc in documents(root):
        for m in BLOCK.finditer(doc.read_text()):
            found.setdefault(m.group(2), []).append((doc, m.group(3)))
    return found


def rewrite(doc: Path, name: str, text: str) -> None:
    content = doc.read_text()
    doc.write_text(BLOCK.sub(lambda m: m.group(1) + text + m.group(4) if m.group(2) == name else m.group(0),
                             content))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="compare the size figures with the documents")
    mode.add_argument("--write", action="store_true", help="measure and rewrite the figures")
    mode.add_argument("--print", metavar="NAME", help="print one figure")
    ap.add_argument("--only", help="comma-separated figure names")
    ap.add_argument("--root", type=Path, default=ROOT, help="where README.md and docs/ are")
    args = ap.parse_args()
    known = {f.name: f for f in FIGURES}
    if args.print:
        print(known[args.print].make(), end="")
        return 0
    wanted = args.only.split(",") if args.only else list(known)
    unknown = [n for n in wanted if n not in known]
    present = blocks(args.root)
    strays = [n for n in present if n not in known]
    if unknown or strays:
        print(f"figures: unknown figure names: {', '.join(unknown + strays)}; known: {', '.join(known)}")
        return 1
    failed = False
    for name in wanted:
        fig = known[name]
        if args.check and not fig.checked:
            continue
        if name not in present:
            print(f"figures: no <!-- figures:{name} --> block in README.md or docs/*.md")
            failed = True
            continue
        text = fig.make()
        for doc, current in present[name]:
            where = doc.relative_to(args.root)
            if args.write:
                if current != text:
                    rewrite(doc, name, text)
                    print(f"figures: {name}: rewrote {where}")
            elif current != text:
                failed = True
                diff = difflib.unified_diff(current.splitlines(), text.splitlines(), f"{where} (committed)",
                                            "measured now", lineterm="")
                print(f"figures: {name} in {where} differs from what this tree gives; if the change is "
                      "intended, run .venv/bin/python scripts/figures.py --write --only " + name)
                print("\n".join(diff))
            else:
                print(f"figures: {name}: {where} is up to date")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
