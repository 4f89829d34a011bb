"""The runner every install carries (``copapy._core.run_cli`` behind the ``copapy-run``
console script), and how ``Target(runner="process")`` picks and checks a runner.

The runner executes this machine's code, so these tests use the native ``Target`` even
when the suite runs for a foreign target (tests/conftest.py). Results are compared with
NumPy float32/int32 references computed here.
"""

from __future__ import annotations

import os
import signal
import stat
import struct
import subprocess
import sys
import time
from pathlib import Path

import copapy as cp
import numpy as np
import pytest
from copapy import _core, _remote
from copapy._core import Target
from copapy._remote import RunnerError, own_runner_command, runner_command
from hypothesis import given, settings
from hypothesis import strategies as st

F32, I32 = np.float32, np.int32
STEPS = 7


def state_program(path: Path) -> None:
    """x advances as x*0.75 + u*0.25, n counts steps; y and m are outputs of x and n."""
    x = cp.value(0.5, name="x")
    u = cp.value(2.0, name="u")
    n = cp.value(1, name="n")
    y = (x * 3.0 + u) / (x * x + 1.0)
    tg = Target()
    tg.compile(y, n * 3 - 1, names={"y": y, "m": n * 3 - 1},
               updates={x: x * 0.75 + u * 0.25, n: n + 1})
    tg.save(path)


def reference(steps: int, u: float = 2.0) -> list[tuple[np.float32, np.float32, np.int32]]:
    """(y, x after the step, n after the step) per step, in float32/int32."""
    x, uu, n = F32(0.5), F32(u), I32(1)
    rows = []
    for _ in range(steps):
        y = (x * F32(3.0) + uu) / (x * x + F32(1.0))
        x = x * F32(0.75) + uu * F32(0.25)
        n = I32(n + 1)
        rows.append((y, x, n))
    return rows


def script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_own_runner_runs_a_saved_program_step_by_step(tmp_path: Path) -> None:
    prog = tmp_path / "p.cpy"
    state_program(prog)
    out = subprocess.run([*own_runner_command(), str(prog), "-n", str(STEPS), "--set", "u=2.0",
                          "--print", "y,x,n"], capture_output=True, text=True, check=True).stdout
    rows = [dict(kv.split("=") for kv in line.split()[1:]) for line in out.splitlines()]
    assert len(rows) == STEPS
    for row, (y, x, n) in zip(rows, reference(STEPS), strict=True):
        assert F32(row["y"]) == y and F32(row["x"]) == x and int(row["n"]) == n


def test_own_runner_line_protocol_and_period_loop(tmp_path: Path) -> None:
    prog = tmp_path / "p.cpy"
    state_program(prog)
    lines = "set u -1.5\nrun 3\nget x\nget m\nquit\n"
    out = subprocess.run([*own_runner_command(), str(prog), "--stdio"], input=lines,
                         capture_output=True, text=True, check=True).stdout.splitlines()
    ref = reference(3, -1.5)
    assert out[:2] == ["ok", "ok"]
    assert F32(out[2].split()[1]) == ref[-1][1]
    assert int(out[3].split()[1]) == int(ref[-1][2]) * 3 - 4  # m of the last step: n before it
    assert out[4] == "ok"
    done = subprocess.run([*own_runner_command(), str(prog), "--period", "200us", "-n", "20", "--no-rt",
                           "--print", "n"], capture_output=True, text=True, check=True)
    assert [line.split()[1] for line in done.stdout.splitlines()] == [f"n={k}" for k in range(2, 22)]
    assert "20 steps" in done.stderr and "step time:" in done.stderr


def test_own_runner_version_errors_and_exit_codes(tmp_path: Path) -> None:
    version = subprocess.run([*own_runner_command(), "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.strip() == _core.runner_version()
    assert version.stdout.startswith(f"copapy-run {cp.__version__} (program formats ")
    bad = tmp_path / "bad.cpy"
    bad.write_bytes(b"CPY\0" + bytes(60))
    for args in (["--bogus"], [str(bad)], [str(tmp_path / "missing.cpy")], ["--period", "1h"]):
        done = subprocess.run([*own_runner_command(), *args], capture_output=True, text=True)
        assert done.returncode == 2, args
        assert done.stderr.startswith("copapy-run: "), done.stderr
        assert "Traceback" not in done.stderr


def test_ctrl_c_ends_a_period_loop_in_the_runner(tmp_path: Path) -> None:
    prog = tmp_path / "p.cpy"
    state_program(prog)
    proc = subprocess.Popen([*own_runner_command(), str(prog), "--period", "1ms", "--duration", "1000s",
                             "--no-rt", "--print", "n"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith(b"step=0 ")  # the loop in Rust is running
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == -signal.SIGINT
    assert b"Traceback" not in proc.communicate()[1]


def test_process_target_prefers_its_own_runner_over_path(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script(bin_dir, "copapy-run", "echo 'not copapy' >&2; exit 3")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("COPAPY_RUN", raising=False)
    assert runner_command() == own_runner_command()
    x = cp.value(0.5, name="x")
    u = cp.value(2.0, name="u")
    y = (x * 3.0 + u) / (x * x + 1.0)
    tg = Target(runner="process")
    tg.compile(y, names={"y": y}, updates={x: x * 0.75 + u * 0.25})
    for want, _, _ in reference(4):
        tg.run()
        assert tg.read_value("y") == float(want)


@pytest.mark.parametrize("body, said", [
    ("echo 'hello from another tool'", "printed 'hello from another tool'"),
    ("echo 'usage: something else' >&2; exit 1", "exited with status 1 'usage: something else'"),
    ("echo 'copapy-run 0.0.1 (program formats 1 to 1)'", "printed 'copapy-run 0.0.1"),
])
def test_a_foreign_runner_is_refused_naming_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       body: str, said: str) -> None:
    path = script(tmp_path, "copapy-run", body)
    monkeypatch.setenv("COPAPY_RUN", path)
    with pytest.raises(RunnerError) as env_error:
        Target(runner="process")
    text = str(env_error.value)
    assert f"$COPAPY_RUN {path} is not this copapy's runner" in text and said in text
    assert "unset COPAPY_RUN" in text and _core.runner_version() in text
    monkeypatch.delenv("COPAPY_RUN")
    with pytest.raises(RunnerError, match=f"runner='process:...' {path} is not this copapy's runner"):
        Target(runner=f"process:{path}")


def test_missing_or_unusable_runner_files(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=f"{tmp_path}/nothing: no such file; use runner='process'"):
        Target(runner=f"process:{tmp_path}/nothing")
    plain = tmp_path / "plain"
    plain.write_text("not executable")
    with pytest.raises(RunnerError, match=f"{plain} is not executable"):
        Target(runner=f"process:{plain}")
    garbage = tmp_path / "garbage"
    garbage.write_bytes(b"\x7fELF" + bytes(60))
    garbage.chmod(0o755)
    with pytest.raises(RunnerError, match=f"{garbage} cannot be started"):
        Target(runner=f"process:{garbage}")


def impostor(tmp_path: Path, serve: str) -> str:
    """A runner that answers --version like this copapy's but does `serve` when started
    with --serve-stdio."""
    return script(tmp_path, "impostor", f'if [ "$1" = --version ]; then echo "{_core.runner_version()}"; '
                  f"exit 0; fi\n{serve}")


@pytest.mark.parametrize("serve, said", [
    ("echo 'runner starting' >&2; exit 5", "it exited (exit status 5); its stderr: runner starting"),
    ("echo 'starting' >&2; sleep 0.3; exit 6", "it exited (exit status 6); its stderr: starting"),
    ("printf '\\005\\000'; exit 7", "it closed its output mid-reply (exit status 7)"),
    ("echo 'ready'", "is not a reply frame"),
    ("exec cat", "it answered INFO with kind 0x08"),
    ("printf '\\002\\000\\000\\000\\356!'", "it answered INFO with kind 0xee"),
    ("exec sleep 30", "no reply within 1 s"),
])
def test_a_runner_that_fails_the_handshake_is_ended(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     serve: str, said: str) -> None:
    if "sleep 30" in serve:  # the one case that waits for the deadline
        monkeypatch.setattr(_remote, "HANDSHAKE_SECONDS", 1.0)
    path = impostor(tmp_path, serve)
    with pytest.raises(RunnerError) as error:
        Target(runner=f"process:{path}")
    text = str(error.value)
    assert text.startswith(f"{path} --serve-stdio is not a working copapy runner: ") and said in text, text
    assert "use runner='process'" in text


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=40))
def test_any_output_of_a_runner_is_one_frame_or_a_clear_error(output: bytes) -> None:
    """Whatever bytes a started program writes, the handshake reader returns exactly one
    frame and reads nothing past it, or says why not; it never waits past its deadline."""
    r, w = os.pipe()
    try:
        os.write(w, output)
        os.close(w)
        w = -1
        try:
            kind, body = _remote._read_frame(r, deadline=time.monotonic() + 60)
        except (EOFError, ValueError) as e:
            assert str(e)
            length = struct.unpack("<I", output[:4])[0] if len(output) >= 4 else None
            assert length is None or len(output) < 4 + length or not 1 <= length <= 4096
        else:
            length = struct.unpack("<I", output[:4])[0]
            assert (kind, body) == (output[4], output[5:4 + length])
            assert os.read(r, 100) == output[4 + length:]
    finally:
        os.close(r)
        if w >= 0:
            os.close(w)


def test_a_program_for_another_architecture_is_refused_by_the_runner(tmp_path: Path) -> None:
    tg = cp._core.Target("riscv32")
    a = cp.value(1.5)
    tg.compile(a * 2.0)
    prog = tmp_path / "rv.cpy"
    tg.save(prog)
    done = subprocess.run([*own_runner_command(), str(prog)], capture_output=True, text=True)
    assert done.returncode == 2 and "riscv32" in done.stderr, done.stderr


def test_own_runner_of_a_copapy_found_only_at_run_time(tmp_path: Path) -> None:
    """A copapy imported from a directory added to sys.path at run time (not installed in
    that interpreter) still starts its own runner, not another install's."""
    home = str(Path(cp.__file__).resolve().parent.parent)
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import copapy as cp; "
            "x = cp.value(0.5, name='x'); tg = cp.Target(runner='process'); "
            "tg.compile(x * 3.0 + 1.0, names={'y': x * 3.0 + 1.0}); tg.run(); print(tg.read_value('y'))")
    base = getattr(sys, "_base_executable", sys.executable)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "COPAPY_RUN", "VIRTUAL_ENV")}
    done = subprocess.run([base, "-c", code, home], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) == float(F32(0.5) * F32(3.0) + F32(1.0))


def test_a_bare_runner_name_is_looked_up_on_path_and_checked(tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    foreign = script(tmp_path, "copapy-run", "echo 'copapy-run 9.9.9 (program formats 9 to 9)'")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(RunnerError, match=f"runner='process:...' {foreign} is not this copapy's runner: "
                                          f"`{foreign} --version` printed 'copapy-run 9.9.9"):
        Target(runner="process:copapy-run")
    with pytest.raises(FileNotFoundError, match="no-such-runner: no such file"):
        Target(runner="process:no-such-runner")


def test_a_matching_runner_given_by_path_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The console script of this install, named by $COPAPY_RUN, passes both checks."""
    console = Path(sys.executable).parent / "copapy-run"
    assert console.is_file(), "scripts/setup.sh installs copapy (and its copapy-run) into .venv"
    monkeypatch.setenv("COPAPY_RUN", str(console))
    assert runner_command() == [str(console)]
    x = cp.value(0.5, name="x")
    u = cp.value(2.0, name="u")
    y = (x * 3.0 + u) / (x * x + 1.0)
    tg = Target(runner="process")
    tg.compile(y, names={"y": y}, updates={x: x * 0.75 + u * 0.25})
    for want, _, _ in reference(3):
        tg.run()
        assert tg.read_value("y") == float(want)
