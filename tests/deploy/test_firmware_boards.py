"""The two reference firmwares (firmware/, docs/firmware.md) under QEMU, end to end.

scripts/build_firmware.sh builds a Cortex-M4F firmware for QEMU's `mps2-an386` and an
RV32IMAFC one for QEMU's `virt`, each linking the copapy-firmware library. One boot per
board runs a job list that QEMU's loader device puts in RAM: programs saved from Python
with `Target("cortex-m4")` / `Target("riscv32")` (operators, math, integers, arrays, a
state loop, the run files) and bad files. The firmware prints every variable's bits over
the UART; each is compared bit for bit with the same program in the in-process emulator
and compiled for this machine, and the named results with an independent reference
(NumPy float32 / int32 via refsem, the run files' hand-written values). Bad files are
refused with the right code and message, and nothing of theirs runs.

The module names its targets itself, so scripts/test.sh's repeats of the suite under
COPAPY_TEST_TARGET would only boot the same firmwares with the same programs again: it
runs in the main pass only.
"""

from __future__ import annotations

import math
import shutil
import struct
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import program_layout
import pytest
import refsem as R
from conftest import TARGET
from copapy import array, cos, sin, sqrt, value
from copapy._core import Target  # explicit targets: independent of COPAPY_TEST_TARGET
from helpers import F32, ROOT, ordered_sum
from test_runfiles import FILES, RunFile, _matches

OUT = ROOT / "target" / "firmware-boards"
KEEP_FEATURES = 0xFFFF_FFFF
JOB_MAGIC = 0x4C4A5043  # "CPJL", firmware/common/runner.c


@dataclass(frozen=True)
class Board:
    arch: str
    elf: str
    qemu: list[str]
    jobs_at: int  # link.ld: __copapy_jobs
    features: int  # what the library was built for (copapy_runner.h)


BOARDS = [
    Board("cortex-m4", "mps2-an386.elf",
          ["qemu-system-arm", "-M", "mps2-an386", "-semihosting-config", "enable=on,target=native"],
          0x2100_0000, 0xC0),
    Board("riscv32", "virt-rv32.elf", ["qemu-system-riscv32", "-M", "virt", "-bios", "none"],
          0x8100_0000, 0x700),
]
if TARGET:
    pytest.skip("independent of COPAPY_TEST_TARGET: boots both firmwares in the main pass",
                allow_module_level=True)


# ---------------------------------------------------------------- programs and references

Check = Callable[[dict[str, list[Any]]], list[str]]


@dataclass
class Spec:
    """A program: its named outputs, state updates, steps per run, and a reference check."""

    names: dict[str, Any]
    check: Check
    updates: dict[Any, Any] = field(default_factory=dict)
    steps: int = 1


def _binop_spec(ta: str, tb: str, ops: tuple[str, ...], ea: list[Any], eb: list[Any]) -> Spec:
    """Every op over every edge pair, on two distinct input variables per pair."""
    xs = [value(a) for a in ea]
    ys = [value(b) for b in eb]
    names: dict[str, Any] = {}
    want: dict[str, list[tuple[Any, str]]] = {}
    for op in ops:
        names[op] = [R.PY_OP[op](x, y) for x in xs for y in ys]
        want[op] = [R.binop(op, a, ta, b, tb) for a in ea for b in eb]

    def check(got: dict[str, list[Any]]) -> list[str]:
        bad = []
        for op, refs in want.items():
            for k, (g, (w, rt)) in enumerate(zip(got[op], refs, strict=True)):
                if not R.matches(g, w, rt):
                    a, b = ea[k // len(eb)], eb[k % len(eb)]
                    bad.append(f"{a!r} {R.SYMBOL[op]} {b!r} = {g!r}, NumPy {w!r}")
        return bad

    return Spec(names, check)


FLOATS = [0.0, -0.0, 1.0, -7.5, 0.5, 3.0, math.inf, -math.inf, math.nan,
          float(F32(1e30)), float(F32(1.401298464324817e-45))]
INTS = [0, 1, -1, 7, -7, 33, R.INT_MAX, R.INT_MIN]


def float_operators() -> Spec:
    return _binop_spec("float", "float", R.ARITH + R.COMPARE, FLOATS, FLOATS)


def int_operators() -> Spec:
    return _binop_spec("int", "int", R.BINARY_OPS, INTS, INTS)


def mixed_operators() -> Spec:
    return _binop_spec("int", "float", R.ARITH + ("lt", "eq"), INTS[:6], FLOATS[:9])


def math_functions() -> Spec:
    xs = [0.0, -0.0, 0.5, 1.0, 2.0, 3.14159, -10.5, 100.0, 1e-20, 3e5, math.inf, math.nan]
    vs = [value(x) for x in xs]
    names = {"sqrt": [sqrt(v) for v in vs], "sin": [sin(v) for v in vs], "cos": [cos(v) for v in vs]}

    def check(got: dict[str, list[Any]]) -> list[str]:
        bad = []
        for x, g in zip(xs, got["sqrt"], strict=True):
            if not R.matches(g, R.sqrt(x), "float"):
                bad.append(f"sqrt({x!r}) = {g!r}")
        for name, ref in (("sin", R.sin), ("cos", R.cos)):
            for x, g in zip(xs, got[name], strict=True):
                w = float(ref(x))
                ok = math.isnan(g) if math.isnan(w) else R.ulp_distance(g, w) <= 1  # docs/math.md
                if not ok:
                    bad.append(f"{name}({x!r}) = {g!r}, float64 reference {w!r}")
        return bad

    return Spec(names, check)


def arrays() -> Spec:
    rng = np.random.default_rng(16)
    x = (rng.standard_normal(37) * 100).astype(F32)
    y = (rng.standard_normal(37) * 3).astype(F32)
    k = rng.integers(-(2**31), 2**31 - 1, 29, dtype=np.int64).astype(np.int32)
    j = rng.integers(-50, 50, 29).astype(np.int32)
    a, b, ia, ja = array(x), array(y), array(k), array(j)
    names = {"sum": a.sum(), "dot": a @ b, "axpy": a * 2.0 + b, "isum": ia.sum(), "iprod": ia * ja,
             "ifloordiv": ia // ja}
    with np.errstate(over="ignore"):
        want = {
            "sum": [ordered_sum(x)], "dot": [ordered_sum((x * y).astype(F32))],
            "axpy": list((x * F32(2.0) + y).astype(F32)),
            "isum": [int(k.astype(np.int64).sum().astype(np.int32))],  # wraps, as int32
            "iprod": [int(v) for v in (k * j)],
            "ifloordiv": [R.wrap32(int(a_) // int(b_)) if b_ else 0 for a_, b_ in zip(k, j, strict=True)],
        }

    def check(got: dict[str, list[Any]]) -> list[str]:
        bad = []
        for name, refs in want.items():
            rt = "float" if name in ("sum", "dot", "axpy") else "int"
            for i, (g, w) in enumerate(zip(got[name], refs, strict=True)):
                if not R.matches(g, w, rt):
                    bad.append(f"{name}[{i}] = {g!r}, NumPy {w!r}")
        return bad

    return Spec(names, check)


def state_loop() -> Spec:
    """A mass-spring step function advancing its own state 200 times (one job, 200 runs)."""
    x, v, n = value(0.5, name="x"), value(0.0, name="v"), value(0, name="n")
    force = -4.0 * x - 0.3 * v
    xr, vr, fr = F32(0.5), F32(0.0), F32(0.0)
    for _ in range(200):  # outputs from the step's state, then the updates
        fr = F32(F32(F32(-4.0) * xr) - F32(F32(0.3) * vr))
        xr, vr = F32(xr + F32(F32(0.01) * vr)), F32(vr + F32(F32(0.01) * fr))

    def check(got: dict[str, list[Any]]) -> list[str]:
        bad = [] if got["n"] == [200] else [f"n = {got['n']}"]
        for name, want in (("x", xr), ("v", vr), ("force", fr)):
            if not R.same_float(got[name][0], want):
                bad.append(f"{name} = {got[name][0]!r}, NumPy {want!r}")
        return bad

    return Spec({"force": force}, check,  # x, v and n are named by value(name=)
                updates={x: x + 0.01 * v, v: v + 0.01 * force, n: n + 1}, steps=200)


def _runfile_spec(rf: RunFile) -> Callable[[], Spec]:
    def build() -> Spec:
        scope: dict[str, Any] = {"cp": __import__("copapy")}
        exec("\n".join(rf.body), scope)  # noqa: S102 - the run file's own program text
        outputs = [eval(expr, scope) for _, expr, _ in rf.runs]  # noqa: S307
        names = {f"r{i}": out for i, out in enumerate(outputs)}

        def check(got: dict[str, list[Any]]) -> list[str]:
            return [f"{rf.path.name}:{no}: {expr} gave {got[f'r{i}'][0]!r}, expected {want}"
                    for i, (no, expr, want) in enumerate(rf.runs) if not _matches(got[f"r{i}"][0], want)]

        return Spec(names, check)

    return build


CASES: dict[str, Callable[[], Spec]] = {
    "float_operators": float_operators, "int_operators": int_operators,
    "mixed_operators": mixed_operators, "math": math_functions, "arrays": arrays,
    "state_loop": state_loop,
    **{f"runfile_{p.stem}": _runfile_spec(RunFile(p)) for p in FILES},
}


# ---------------------------------------------------------------- running a board

@dataclass
class Ran:
    """One program compiled for a target and run `steps` times there."""

    program: bytes
    variables: dict[str, tuple[str, list[int]]]  # name -> (dtype, element bits)
    prelinked: bytes = b""  # the same program pre-linked for a board's buffers, if asked


def _bits(v: Any, dtype: str) -> int:
    if dtype == "float":
        return int(struct.unpack("<I", struct.pack("<f", v))[0])
    return int(v) & (0xFF if dtype == "byte" else 0xFFFF_FFFF)


def _flat(v: Any) -> list[Any]:
    return [y for x in v for y in _flat(x)] if isinstance(v, list) else [v]


def run_on(arch: str, build: Callable[[], Spec], buffers: tuple[int, int] | None = None) -> Ran:
    spec = build()
    tg = Target(arch)
    tg.compile(names=spec.names, updates=spec.updates or None)
    program = tg.program_bytes()
    prelinked = b"" if buffers is None else tg.program_bytes(code_base=buffers[0], data_base=buffers[1])
    for _ in range(spec.steps):
        tg.run()
    variables = {name: (dtype, [_bits(x, dtype) for x in _flat(tg.read_value(name))])
                 for name, _, dtype, _ in tg.variables()}
    return Ran(program, variables, prelinked)


def buffers_of(board: Board) -> tuple[int, int]:
    """The addresses of the firmware's code and data buffers (runner_code, runner_data),
    from its symbol table: what its pre-linked images are saved for."""
    nm = shutil.which("llvm-nm")
    assert nm, "llvm-nm not found: scripts/setup.sh installs llvm"
    out = subprocess.run([nm, str(OUT / board.elf)], capture_output=True, text=True, check=True).stdout
    found = {name: int(addr, 16) for addr, _, name in (line.split() for line in out.splitlines()
                                                        if len(line.split()) == 3)}
    return found["runner_code"], found["runner_data"]


PRELINKED_ONLY = 1 << 32  # in a job's features: load it with copapy_load_prelinked (job flag bit 0)


def job_list(jobs: list[tuple[bytes, int, int]]) -> bytes:
    """firmware/common/runner.c's input: (file, steps, cpu features | PRELINKED_ONLY) per job."""
    out = struct.pack("<II", JOB_MAGIC, len(jobs))
    for file, steps, features in jobs:
        flags = 1 if features & PRELINKED_ONLY else 0
        out += struct.pack("<IIII", len(file), steps, features & 0xFFFF_FFFF, flags)
        out += file + bytes(-len(file) % 4)
    return out


@dataclass
class JobResult:
    load: int
    message: str
    needs: tuple[int, int] | None = None
    variables: dict[str, tuple[str, list[int]]] = field(default_factory=dict)


def parse(lines: list[str]) -> tuple[int, list[JobResult]]:
    head = lines[0].split()
    assert head[0] == "copapy" and head[-2] == "features", lines[0]
    jobs: list[JobResult] = []
    for line in lines[1:]:
        words = line.split(" ")
        if words[0] == "job" and words[2] == "load":
            jobs.append(JobResult(int(words[3]), " ".join(words[4:])))
        elif words[0] == "job" and words[2] == "needs":
            jobs[-1].needs = (int(words[3], 16), int(words[5], 16))
        elif line == "done":
            break
        else:
            name, kind, hexes = words
            dtype = {"f": "float", "i": "int", "b": "bool", "u": "byte"}[kind]
            jobs[-1].variables[name] = (dtype, [int(h, 16) for h in hexes.split(",")])
    assert lines[-1] == "done", lines[-3:]
    return int(head[-1], 16), jobs


def boot(board: Board, jobs: bytes, tmp: Path) -> list[str]:
    qemu = shutil.which(board.qemu[0])
    assert qemu, f"{board.qemu[0]} not found: scripts/setup.sh installs QEMU (Debian qemu-system-arm, -misc)"
    path = tmp / f"{board.arch}-jobs.bin"
    path.write_bytes(jobs)
    out = subprocess.run(
        [qemu, *board.qemu[1:], "-display", "none", "-serial", "stdio", "-monitor", "none",
         "-kernel", str(OUT / board.elf),
         "-device", f"loader,file={path},addr={board.jobs_at:#x},force-raw=on"],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300, check=False)
    lines = [line.rstrip("\r") for line in out.stdout.splitlines()]
    assert out.returncode == 0, f"QEMU exit {out.returncode}: {out.stdout[-2000:]}{out.stderr[-2000:]}"
    return lines


@dataclass
class Session:
    board: Board
    features: int
    good: dict[str, tuple[Ran, Ran, JobResult]]  # case -> (board arch in the emulator, host, firmware)
    bad: dict[str, tuple[JobResult, bytes]]
    prelinked: dict[str, JobResult]  # case -> the firmware's run of its pre-linked image


@pytest.fixture(scope="module")
def firmwares() -> Path:
    built = subprocess.run([str(ROOT / "scripts" / "build_firmware.sh")], cwd=ROOT, capture_output=True,
                           text=True, check=False)
    assert built.returncode == 0, f"scripts/build_firmware.sh failed:\n{built.stdout}{built.stderr}"
    return OUT


@pytest.fixture(scope="module", params=BOARDS, ids=[b.arch for b in BOARDS])
def session(request: pytest.FixtureRequest, firmwares: Path,
            tmp_path_factory: pytest.TempPathFactory) -> Session:
    board: Board = request.param
    buffers = buffers_of(board)
    ran = {name: (run_on(board.arch, build, buffers), run_on("native", build))
           for name, build in CASES.items()}
    jobs = [(emu.program, CASES[name]().steps, KEEP_FEATURES) for name, (emu, _) in ran.items()]
    # every program again as a pre-linked image for this firmware's buffers (no patches),
    # loaded by the loader that takes nothing else
    jobs += [(emu.prelinked, CASES[name]().steps, KEEP_FEATURES | PRELINKED_ONLY)
             for name, (emu, _) in ran.items()]
    good_program = ran["state_loop"][0].program
    corrupted = bytearray(good_program)
    corrupted[len(corrupted) // 2] ^= 0x10
    # a version 9 file (the format before pair records): this library reads version 10 only
    older = bytearray(good_program)
    older[4] = 9
    other = next(b.arch for b in BOARDS if b is not board)
    elsewhere, loop = Target(board.arch), state_loop()
    elsewhere.compile(names=loop.names, updates=loop.updates)
    bad = {
        "pre-linked for other buffers": elsewhere.program_bytes(code_base=buffers[0] + 0x1000,
                                                                 data_base=buffers[1]),
        "relocatable, to the pre-linked loader": good_program,
        "another architecture": ran["state_loop"][1].program,  # x86_64
        "the other board's architecture": run_on(other, state_loop).program,
        "no CPU features": good_program,
        "truncated": good_program[:-5],
        "empty": b"",
        "corrupted": bytes(corrupted),
        "format version 9": program_layout.reseal(older),
    }
    flags = {"no CPU features": 0, "relocatable, to the pre-linked loader": KEEP_FEATURES | PRELINKED_ONLY}
    jobs += [(file, 1, flags.get(name, KEEP_FEATURES)) for name, file in bad.items()]
    jobs.append((good_program, 200, KEEP_FEATURES))  # the firmware still works after refusals
    features, results = parse(boot(board, job_list(jobs), tmp_path_factory.mktemp("qemu")))
    assert len(results) == len(jobs)
    good = {name: (*ran[name], results[i]) for i, name in enumerate(ran)}
    prelinked = {name: results[len(ran) + i] for i, name in enumerate(ran)}
    refused = {name: (results[2 * len(ran) + i], file) for i, (name, file) in enumerate(bad.items())}
    assert results[-1].load == 0 and results[-1].variables == good["state_loop"][2].variables
    return Session(board, features, good, refused, prelinked)


def _same(a: tuple[str, list[int]], b: tuple[str, list[int]]) -> bool:
    """Bit for bit; any NaN matches any NaN (docs: NaN sign and payload unspecified)."""
    if a[0] != b[0] or len(a[1]) != len(b[1]):
        return False
    if a[0] != "float":
        return a[1] == b[1]
    return all(x == y or (_nan(x) and _nan(y)) for x, y in zip(a[1], b[1], strict=True))


def _nan(bits: int) -> bool:
    return bits & 0x7F80_0000 == 0x7F80_0000 and bits & 0x7F_FFFF != 0


def _decode(dtype: str, bits: list[int]) -> list[Any]:
    if dtype == "float":
        return [struct.unpack("<f", struct.pack("<I", b))[0] for b in bits]
    if dtype == "bool":
        return [bool(b) for b in bits]
    if dtype == "int":
        return [b - (1 << 32) if b & 0x8000_0000 else b for b in bits]
    return bits


@pytest.mark.parametrize("case", list(CASES))
def test_the_firmware_computes_what_the_emulator_host_and_numpy_do(session: Session, case: str) -> None:
    emu, host, fw = session.good[case]
    assert fw.load == 0, fw.message
    assert fw.variables.keys() == emu.variables.keys() == host.variables.keys()
    differ = [n for n in fw.variables if not (_same(fw.variables[n], emu.variables[n])
                                              and _same(fw.variables[n], host.variables[n]))]
    assert not differ, f"{differ[:5]}: firmware {[fw.variables[n] for n in differ[:2]]}, " \
                       f"emulator {[emu.variables[n] for n in differ[:2]]}"
    failures = CASES[case]().check({n: _decode(*fw.variables[n]) for n in fw.variables})
    assert not failures, R.describe_failures(failures)


def test_the_firmware_has_the_cpu_features_of_its_build(session: Session) -> None:
    assert session.features == session.board.features


def test_the_firmware_refuses_bad_files_and_runs_nothing_of_them(session: Session) -> None:
    expect = {
        "pre-linked for other buffers": (-22, "pre-linked program for other buffer addresses"),
        "relocatable, to the pre-linked loader": (-23, "copapy_load_prelinked takes only pre-linked"),
        "another architecture": (-5, "program is for another architecture"),
        "the other board's architecture": (-5, "program is for another architecture"),
        "no CPU features": (-6, "program needs CPU features this runner lacks"),
        "truncated": (-7, "file truncated"),
        "empty": (-7, "file truncated"),
        "corrupted": (-9, "checksum mismatch"),
        "format version 9": (-3, "unsupported program format version (this library reads version 10"),
    }
    for name, (code, message) in expect.items():
        result, file = session.bad[name]
        assert (result.load, result.message[: len(message)]) == (code, message), name
        assert result.variables == {}, f"{name}: nothing runs, nothing is read"
    result, file = session.bad["no CPU features"]
    assert result.needs == (program_layout.header9(file)["features"], 0), "names what it needs and has"
    assert result.needs[0] & session.board.features == result.needs[0] != 0


@pytest.mark.parametrize("case", list(CASES))
def test_a_prelinked_image_runs_bit_for_bit_as_the_relocatable_program(session: Session, case: str) -> None:
    """The same program pre-linked for the firmware's buffers: loaded with no patch
    applied, it computes every variable's bits as the relocatable file does there (and so
    as the emulator, the host and NumPy, by the test above)."""
    emu, _, fw = session.good[case]
    linked = session.prelinked[case]
    assert linked.load == 0, linked.message
    assert linked.variables == fw.variables
    failures = CASES[case]().check({n: _decode(*linked.variables[n]) for n in linked.variables})
    assert not failures, R.describe_failures(failures)


def test_a_prelinked_image_is_code_data_and_a_small_header(session: Session) -> None:
    """No patches: the file is header (with the two addresses), code, data and symbols."""
    for case, (emu, _, _) in session.good.items():
        h, hi = program_layout.header9(emu.program), program_layout.header9(emu.prelinked)
        assert (emu.prelinked[4], hi["flags"] & 1, hi["patches"]) == (10, 1, 0), case  # type: ignore[operator]
        assert (hi["code"], hi["data"]) == (h["code"], h["data"])
        assert emu.prelinked[hi["data at"][1]:] == emu.program[h["patches at"][1]:], case  # type: ignore[index]
        assert int(h["patches"]) > 0 and len(emu.prelinked) < len(emu.program), case  # type: ignore[call-overload]
