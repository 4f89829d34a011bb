"""copapy-run cross-built for each Linux board, run under qemu-user with an honest CPU.

``scripts/cross_runners.sh`` builds ``target/cross/<target>/copapy-run`` (static musl) for
every target the shared table (``copapy._targets``) gives a qemu-user emulation; here
each runs, on the CPU model the table names (ARM1176 for armv6, Cortex-A9 for armv7),

- programs saved from Python with ``Target(target)`` as files (``copapy-run PROGRAM``),
- the same programs driven through ``Target(target, runner=[qemu, ..., copapy-run])``
  over the frame protocol,

and every result is compared with an independent reference (the hand-written
expectations of ``tests/runfiles``, NumPy float32/int32 for the array program) and bit
for bit with the in-process emulator and the host runner. A runner also reports the
CPU it finds (INFO, ``--info``) and refuses programs for another instruction set or
for features its CPU lacks, saying which.

The tests name their targets themselves, so they run once, in the native pass of
``scripts/test.sh``, not again for every ``COPAPY_TEST_TARGET``.
"""

from __future__ import annotations

import math
import os
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

import copapy as cp
import numpy as np
import pytest
from copapy import _targets
from copapy._remote import RemoteDevice, RunnerError
from helpers import F32, ROOT, pairwise
from test_runfiles import FILES, RunFile, _matches

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("COPAPY_TEST_TARGET")),
    reason="names its targets itself: runs once, in the native pass",
)

HOST = cp.Target().arch if not os.environ.get("COPAPY_TEST_TARGET") else "x86_64"
BOARDS = [t for t in _targets.targets() if t.qemu_user is not None and t.name != HOST]

#: What each runner must report on its table CPU: written from the CPUs' manuals
#: (ARM1176JZF-S: ARMv6, VFPv2; Cortex-A9: ARMv7-A, VFPv3; rv64gc: M, F, C), not from copapy.
EXPECTED_INFO = {
    "aarch64": "aarch64 neon",
    "armv7": "armv7 armv6,armv7,vfp2,vfp3",
    "armv6": "armv6 armv6,vfp2",
    "riscv64": "riscv64 rv-m,rv-f,rv-c",
}


def runner_path(target: str) -> Path:
    path = ROOT / "target" / "cross" / target / "copapy-run"
    assert path.is_file(), f"{path} is missing: build it with scripts/cross_runners.sh"
    return path


def command(target: str, cpu: str | None = None, runner: str | None = None) -> list[str]:
    """qemu-user running the cross-built runner of ``runner`` (default: ``target``) on
    ``cpu`` (default: the table's CPU for ``target``)."""
    info = _targets.find(target)
    assert info.qemu_user is not None
    binary, table_cpu = info.qemu_user
    assert shutil.which(binary), f"{binary} is missing: install qemu-user (scripts/setup.sh does)"
    return [binary, "-cpu", cpu or table_cpu, str(runner_path(runner or target))]


def board_ids() -> list[str]:
    return [b.name for b in BOARDS]


def test_every_board_has_a_runner_build() -> None:
    assert sorted(board_ids()) == sorted(EXPECTED_INFO), "scripts/cross_runners.sh and the table differ"


@pytest.mark.parametrize("target", board_ids())
def test_runner_reports_the_cpu_it_finds(target: str) -> None:
    out = subprocess.run([*command(target), "--info"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == EXPECTED_INFO[target]
    with RemoteDevice.spawn(command(target)) as dev:  # INFO over the frame protocol
        assert f"{dev.arch} {dev.features}" == EXPECTED_INFO[target]
    assert cp.Target(runner=command(target)).arch == target


def test_an_armv6_build_on_an_armv7_cpu_reports_armv7() -> None:
    """The CPU decides, not the build: an ARMv6 runner on a Cortex-A7 runs armv7 code."""
    out = subprocess.run([*command("armv6", cpu="cortex-a7"), "--info"], capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == EXPECTED_INFO["armv7"]
    tg = cp.Target(runner=command("armv6", cpu="cortex-a7"))
    assert tg.arch == "armv7"
    tg = cp.Target("armv6", runner=command("armv7", cpu="cortex-a7"))  # older code, newer CPU
    assert tg.arch == "armv6"


def _file_values(out: str, variables: list[tuple[str, str, str, list[int]]]) -> dict[str, Any]:
    """``name=v,v`` lines of ``copapy-run PROGRAM`` as Python values (floats rounded
    through float32 text exactly as printed)."""
    types = {name: dtype for name, _, dtype, _ in variables}
    values: dict[str, Any] = {}
    for line in out.split():
        name, _, text = line.partition("=")
        parse = {"float": lambda s: float(F32(s)), "int": int, "byte": int,
                 "bool": lambda s: s == "true"}[types[name]]
        items = [parse(v) for v in text.split(",")]
        values[name] = items[0] if len(items) == 1 else items
    return values


def _same_bits(a: Any, b: Any) -> bool:
    """Equal, floats bit for bit, any NaN equal to any NaN (the NaN rule)."""
    if isinstance(a, list | tuple):
        return isinstance(b, list | tuple) and len(a) == len(b) and all(map(_same_bits, a, b))
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return struct.pack("<f", a) == struct.pack("<f", b)
    return type(a) is type(b) and a == b


def _compile(runfile: RunFile, tg: Any) -> list[Any]:
    scope: dict[str, Any] = {"cp": cp}
    exec("\n".join(runfile.body), scope)  # noqa: S102 - the test's own program text
    outputs = [eval(expr, scope) for _, expr, _ in runfile.runs]  # noqa: S307
    tg.compile(outputs)
    return outputs


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
@pytest.mark.parametrize("target", board_ids())
def test_run_files_on_each_board(target: str, path: Path, tmp_path: Path) -> None:
    runfile = RunFile(path)
    if target not in runfile.targets:
        pytest.skip(f"{path.name} names its targets")
    # the in-process emulator and the host runner: the same program, the same bits
    emulated, host = cp.Target(target), cp.Target(HOST)
    outs = _compile(runfile, emulated)
    host_outs = _compile(runfile, host)
    emulated.run()
    host.run()
    want_emulated = emulated.read_value(outs)
    want_host = host.read_value(host_outs)
    # (a) the saved file, run by the cross-built runner
    file = tmp_path / f"{path.stem}.{target}.cpy"
    emulated.save(file)
    run = subprocess.run([*command(target), str(file)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    by_name = _file_values(run.stdout, emulated.variables())
    from_file = by_name["out0"] if len(outs) > 1 else [by_name["out0"]]  # one list: out0
    # (b) the frame protocol: Target(target, runner=...) compiles, installs, runs, reads
    remote = cp.Target(target, runner=command(target))
    assert remote.arch == target
    remote_outs = _compile(runfile, remote)
    remote.run()
    from_frames = remote.read_value(remote_outs)
    failures = []
    for k, (no, expr, want) in enumerate(runfile.runs):
        for how, got in (("file", from_file[k]), ("frames", from_frames[k])):
            if not _matches(got, want):
                failures.append(f"{path.name}:{no} ({how}): {expr} gave {got!r}, expected {want}")
            for ref_name, ref in (("emulator", want_emulated[k]), ("host", want_host[k])):
                if not _same_bits(got, ref):
                    failures.append(f"{path.name}:{no} ({how}): {got!r} differs from {ref_name}: {ref!r}")
    assert not failures, "\n".join(failures)


def _array_program(tg: Any) -> tuple[list[Any], dict[str, Any]]:
    """Float and int arrays through element-wise operators, math, a reduction and a
    sort, with their NumPy float32/int32 references."""
    x = np.linspace(-3.0, 3.0, 37, dtype=F32)
    n = (np.arange(37, dtype=np.int32) * 7919) % 201 - 100
    a, b = cp.array(x), cp.array(n.astype(np.float32))
    i = cp.array(n.tolist())
    outs = [a * 2.5 - b, cp.sqrt(a * a + 1.0), (a * b).sum(), i * 3 - 7, a.sort()]
    tg.compile(*outs)  # one symbol each: out0..out4
    xb = x * n.astype(F32)
    want = {
        "out0": (x * F32(2.5) - n.astype(F32)).tolist(),
        "out1": np.sqrt(x * x + F32(1.0)).tolist(),
        "out2": float(pairwise(xb)),
        "out3": (n * np.int32(3) - np.int32(7)).tolist(),
        "out4": np.sort(x).tolist(),
    }
    return outs, want


@pytest.mark.parametrize("target", board_ids())
def test_array_program_on_each_board(target: str, tmp_path: Path) -> None:
    emulated = cp.Target(target)
    outs, want = _array_program(emulated)
    emulated.run()
    from_emulator = emulated.read_value(outs)
    file = tmp_path / f"arrays.{target}.cpy"
    emulated.save(file)
    run = subprocess.run([*command(target), str(file)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    by_name = _file_values(run.stdout, emulated.variables())
    remote = cp.Target(target, runner=command(target))
    remote_outs, _ = _array_program(remote)
    remote.run()
    from_frames = remote.read_value(remote_outs)
    host = cp.Target(HOST)
    host_outs, _ = _array_program(host)
    host.run()
    from_host = host.read_value(host_outs)
    for k in range(len(outs)):
        name = f"out{k}"
        reference = want[name]
        for how, got in (("file", by_name[name]), ("frames", _plain(from_frames[k])),
                         ("emulator", _plain(from_emulator[k]))):
            assert _same_bits(got, reference), f"{target} {name} ({how}) differs from NumPy"
        assert _same_bits(_plain(from_host[k]), reference), f"host {name} differs from NumPy"


def _plain(value: Any) -> Any:
    """An array result as a list of Python numbers."""
    return value.tolist() if hasattr(value, "tolist") else value


def test_a_runner_refuses_programs_its_cpu_cannot_run(tmp_path: Path) -> None:
    """armv7 code on an ARM1176: refused with the missing features named, nothing run."""
    a = cp.value(0.25)
    tg = cp.Target("armv7")
    tg.compile(a * 2.0)
    file = tmp_path / "v7.cpy"
    tg.save(file)
    run = subprocess.run([*command("armv6"), str(file)], capture_output=True, text=True)
    assert run.returncode == 2 and run.stdout == ""
    assert "program needs CPU features armv7+vfp3 but this runner has armv6+vfp2" in run.stderr
    assert "(missing armv7+vfp3)" in run.stderr and 'cp.Target("armv6")' in run.stderr
    # the same program sent over the frame protocol
    with pytest.raises(RunnerError, match=r"missing armv7\+vfp3"):
        cp.load(file, runner=command("armv6"))
    # asking for armv7 code on that runner fails before compiling
    lacks = r"cannot run armv7 programs: its CPU \(armv6,vfp2\) lacks armv7,vfp3"
    with pytest.raises(ValueError, match=lacks):
        cp.Target("armv7", runner=command("armv6"))
    # and the armv7 program runs where the CPU has the features
    run = subprocess.run([*command("armv7"), str(file)], capture_output=True, text=True, check=True)
    assert run.stdout == "out0=0.5\n"


@pytest.mark.parametrize("target", board_ids())
def test_a_runner_refuses_other_instruction_sets(target: str, tmp_path: Path) -> None:
    other = "riscv64" if target != "riscv64" else "aarch64"
    tg = cp.Target(other)
    tg.compile(cp.value(1.0) + 1.0)
    file = tmp_path / "foreign.cpy"
    tg.save(file)
    run = subprocess.run([*command(target), str(file)], capture_output=True, text=True)
    this_arch = _targets.find(target).arch
    assert run.returncode == 2
    assert f"program is for {_targets.find(other).arch} but this runner is {this_arch}" in run.stderr
    with pytest.raises(ValueError, match=f"cannot run {other} programs: it executes {this_arch} code"):
        cp.Target(other, runner=command(target))


@pytest.mark.parametrize("target", board_ids())
def test_builtin_imports_on_each_board(target: str, tmp_path: Path) -> None:
    """The runner's built-in imports resolve on every board, calls run in trace order
    (the second clock read is never before the first), and a program importing what the
    runner lacks is refused naming the import."""
    first = cp.extern("copapy_time_us", returns=int)
    cycles = cp.extern("copapy_cycles", returns=int)
    second = cp.extern("copapy_time_us", returns=int)
    tg = cp.Target(target, imports={"copapy_time_us": lambda: 0, "copapy_cycles": lambda: 0})
    tg.compile(second - first, cycles, names={"dt": second - first, "cycles": cycles})
    prog = tmp_path / "clock.cpy"
    tg.save(str(prog))
    out = subprocess.run([*command(target), str(prog), "-n", "3", "--print", "dt"],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    steps = [int(line.split("dt=")[1]) for line in out.splitlines()]
    assert len(steps) == 3 and all(d >= 0 for d in steps), out
    lacking = cp.Target(target, imports={"board_adc": lambda: 0.0})
    lacking.compile(cp.extern("board_adc", returns=float))
    prog2 = tmp_path / "adc.cpy"
    lacking.save(str(prog2))
    done = subprocess.run([*command(target), str(prog2)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "board_adc" in done.stderr, done.stderr


@pytest.mark.parametrize("target", board_ids())
def test_array_imports_are_named_with_their_signature_on_each_board(target: str, tmp_path: Path) -> None:
    """Each board's runner reads array signatures (F, I) and refuses a program whose array
    import it lacks, naming the import and its signature, before anything runs."""
    tg = cp.Target(target, imports={"adc_scan": lambda buf: 0})
    count, samples = cp.extern("adc_scan", cp.array([0.0] * 4), returns=int, fills=0)
    tg.compile(count, samples)
    prog = tmp_path / "scan.cpy"
    tg.save(str(prog))
    done = subprocess.run([*command(target), str(prog)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "import adc_scan (signature i(F))" in done.stderr, done.stderr
    assert "does not provide" in done.stderr, done.stderr
