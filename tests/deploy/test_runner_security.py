"""Security and bounded resources of the network runner (issue 22), against real
``copapy-run`` processes on loopback: authentication (no token, a wrong one, a replayed
answer, the right one), the loopback-only default, ``--no-load``, the session cap,
memory under huge length prefixes and many half-open connections (measured in
/proc/PID/status), RUN stopping when its client leaves (CPU time in /proc/PID/stat), and
``--period`` in constant memory with ``--duration`` as a wall-clock bound.

Nothing here asserts on speed: the time bounds are generous limits on *termination*
(a loop that never stops fails them by hours). The runner executes this machine's code,
so programs are compiled for the native target.
"""

from __future__ import annotations

import os
import socket
import stat
import struct
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import copapy as cp
import numpy as np
import pytest
from copapy._core import Target
from copapy._remote import (
    CHALLENGE,
    ERR,
    GET,
    INFO,
    LOAD,
    OK,
    READ,
    RUN,
    SET,
    STREAM,
    WRITE,
    AuthenticationError,
    RemoteDevice,
    RunnerError,
    token_path,
)
from standalone import standalone_runner
from test_remote import auth_frame, authenticated_socket, frame, read_frame, start_runner

MiB = 1 << 20


def rss_bytes(pid: int, field: str = "VmRSS") -> int:
    """Resident memory (or its peak, VmHWM) of a process, from /proc/PID/status."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field} in /proc/{pid}/status")


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time of a process, from /proc/PID/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def counter_program() -> bytes:
    n = cp.value(0, name="n")
    tg = Target()
    tg.compile(n * 2, names={"twice": n * 2}, updates={n: n + 1})
    return tg.program_bytes()


def busy_program() -> bytes:
    """A step of microseconds (a 4096-element dot product): 2**32-1 steps take hours,
    so a run that ends soon after its client leaves was stopped, not finished."""
    x = cp.array(np.linspace(-1.0, 1.0, 4096, dtype=np.float32))
    tg = Target()
    tg.compile((x * x).sum())
    return tg.program_bytes()


@pytest.fixture
def token(tmp_path: Path) -> Path:
    return tmp_path / "tokens" / "run.token"


@pytest.fixture
def runner(token: Path) -> Iterator[tuple[subprocess.Popen[str], int]]:
    proc, port = start_runner("--token-file", str(token))
    yield proc, port
    proc.kill()
    proc.wait()


def test_the_runner_creates_a_private_token_and_the_right_token_works(
        token: Path, runner: tuple[subprocess.Popen[str], int]) -> None:
    _, port = runner
    mode = stat.S_IMODE(token.stat().st_mode)
    assert mode == 0o600, oct(mode)
    assert len(token.read_text().strip()) == 64
    with RemoteDevice.tcp("127.0.0.1", port, token_file=token) as dev:
        dev.install(counter_program())
        dev.run_steps(3)
        assert [struct.unpack("<i", r)[0] for r in dev.stream(1, ["n"])] == [4]
    with RemoteDevice.tcp("127.0.0.1", port, token=token.read_bytes()) as dev:
        assert dev.arch == "x86_64"
    tg = Target(runner=f"tcp://127.0.0.1:{port}?token_file={token}")
    x = cp.value(1.5, name="x")
    tg.compile(x * 2.0)
    tg.run()
    assert tg.read_value("out0") == 3.0


def test_runner_and_client_find_the_token_in_the_same_default_place(tmp_path: Path) -> None:
    """Without --token-file both look in $XDG_CONFIG_HOME/copapy/run.token, else
    ~/.config/copapy/run.token; the runner creates it there, private."""
    env = {k: v for k, v in os.environ.items() if k not in ("COPAPY_RUN_TOKEN_FILE", "XDG_CONFIG_HOME")}
    env["HOME"] = str(tmp_path)
    proc = subprocess.Popen([standalone_runner(), "--listen", "127.0.0.1:0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline().rsplit(":", 1)[1])
        path = tmp_path / ".config" / "copapy" / "run.token"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        with pytest.MonkeyPatch.context() as mp:
            mp.delenv("COPAPY_RUN_TOKEN_FILE", raising=False)
            mp.delenv("XDG_CONFIG_HOME", raising=False)
            mp.setenv("HOME", str(tmp_path))
            assert token_path() == path
            with RemoteDevice.tcp("127.0.0.1", port) as dev:
                assert dev.arch == "x86_64"
            mp.setenv("XDG_CONFIG_HOME", str(tmp_path / "elsewhere"))
            with pytest.raises(AuthenticationError, match="elsewhere/copapy/run.token"):
                RemoteDevice.tcp("127.0.0.1", port)
    finally:
        proc.kill()
        proc.wait()


def test_runner_addresses_are_checked() -> None:
    for bad in ("tcp://127.0.0.1:1?token=abc", "tcp://127.0.0.1:1?insecure_no_auth=yes",
                "tcp://127.0.0.1:1?token_file=a&token_file=b", "tcp://127.0.0.1:1?junk"):
        with pytest.raises(ValueError, match="tcp://"):
            Target(runner=bad)


def test_no_token_a_wrong_token_and_a_replayed_answer_are_refused(
        token: Path, runner: tuple[subprocess.Popen[str], int], tmp_path: Path) -> None:
    _, port = runner
    with pytest.raises(AuthenticationError, match="no token file at"):
        RemoteDevice.tcp("127.0.0.1", port, token_file=tmp_path / "missing")
    with pytest.raises(AuthenticationError, match="authentication failed"):
        RemoteDevice.tcp("127.0.0.1", port, token=b"0123456789abcdef0123")
    secret = token.read_bytes().strip()
    # a request instead of AUTH: one error, then the runner hangs up
    with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
        assert read_frame(s)[0] == CHALLENGE
        s.sendall(frame(INFO))
        kind, body = read_frame(s)
        assert kind == ERR and b"authenticate first" in body
        assert s.recv(1) == b""
    # a correct answer recorded on one connection does not open another
    with socket.create_connection(("127.0.0.1", port), timeout=60) as first:
        kind, challenge = read_frame(first)
        recorded = auth_frame(secret, challenge[1:], os.urandom(32))
        first.sendall(recorded)
        assert read_frame(first)[0] == OK
    with socket.create_connection(("127.0.0.1", port), timeout=60) as second:
        kind, challenge2 = read_frame(second)
        assert challenge2 != challenge, "a fresh nonce per connection"
        second.sendall(recorded)
        kind, body = read_frame(second)
        assert kind == ERR and b"authentication failed" in body
        assert second.recv(1) == b""
    # a wrong token in a well-formed AUTH
    with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
        _, challenge = read_frame(s)
        s.sendall(auth_frame(secret[::-1], challenge[1:], os.urandom(32)))
        assert read_frame(s)[0] == ERR
    with RemoteDevice.tcp("127.0.0.1", port, token_file=token) as dev:  # still serving
        assert dev.arch == "x86_64"


def test_flags_that_give_something_away_must_be_explicit(tmp_path: Path) -> None:
    runner = standalone_runner()
    tokens = tmp_path / "t"
    res = subprocess.run([runner, "--listen", "0.0.0.0:0", "--token-file", str(tokens)], capture_output=True,
                         text=True, timeout=60)
    assert res.returncode != 0 and "--allow-remote" in res.stderr
    tokens.write_text("0123456789abcdef0123456789abcdef\n")
    tokens.chmod(0o644)
    res = subprocess.run([runner, "--listen", "127.0.0.1:0", "--token-file", str(tokens)],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode != 0 and "chmod 600" in res.stderr
    proc, port = start_runner("--insecure-no-auth")
    try:
        with pytest.raises(AuthenticationError, match="insecure_no_auth=1"):
            RemoteDevice.tcp("127.0.0.1", port)
        tg = Target(runner=f"tcp://127.0.0.1:{port}?insecure_no_auth=1")
        assert tg.arch == "x86_64"
        with pytest.raises(ValueError, match="token_file=PATH and insecure_no_auth=1"):
            Target(runner=f"tcp://127.0.0.1:{port}?token=abc")
    finally:
        proc.kill()
        proc.wait()


def test_no_load_serves_a_fixed_program_by_name_only(tmp_path: Path, token: Path) -> None:
    program = tmp_path / "counter.cpy"
    program.write_bytes(counter_program())
    proc, port = start_runner("--token-file", str(token), "--no-load", str(program))
    try:
        with authenticated_socket(port, token.read_bytes().strip()) as s:
            for kind, payload in ((LOAD, counter_program()), (WRITE, b"\0" * 8), (READ, b"\0" * 8)):
                s.sendall(frame(kind, payload))
                k, body = read_frame(s)
                assert k == ERR and b"--no-load" in body, body
            s.sendall(frame(RUN, struct.pack("<I", 5)))
            assert read_frame(s) == (OK, b"")
            s.sendall(frame(SET, struct.pack("<H", 1) + b"n" + struct.pack("<i", 40)))
            assert read_frame(s) == (OK, b"")
            s.sendall(frame(RUN, struct.pack("<I", 1)))
            assert read_frame(s) == (OK, b"")
            s.sendall(frame(GET, struct.pack("<H", 5) + b"twice"))
            assert read_frame(s) == (OK, struct.pack("<i", 80))
    finally:
        proc.kill()
        proc.wait()


def test_huge_length_prefixes_and_half_open_connections_leave_memory_bounded(token: Path) -> None:
    """The issue's reproducer: `00 00 00 04` (a 64 MiB frame) costs nothing until the
    bytes arrive. 12 authenticated sessions announce 64 MiB each and send 10 bytes, 8
    more connections never authenticate; all are closed at the frame timeout (so the
    runner has read every prefix), and its peak RSS stays far below the 768 MiB that
    allocating the prefixes would take."""
    proc, port = start_runner("--token-file", str(token), "--max-sessions", "20", "--frame-timeout", "2s")
    held: list[socket.socket] = []
    try:
        secret = token.read_bytes().strip()
        for _ in range(12):
            s = authenticated_socket(port, secret)
            s.sendall(b"\x00\x00\x00\x04" + bytes([LOAD]) + b"CPPY" + b"\0" * 5)
            held.append(s)
        for _ in range(8):
            held.append(socket.create_connection(("127.0.0.1", port), timeout=60))
            assert read_frame(held[-1])[0] == CHALLENGE
        for k, s in enumerate(held):
            kind, body = read_frame(s)
            assert kind == ERR and b"--frame-timeout" in body, body
            assert (b"a frame took longer" if k < 12 else b"no AUTH within") in body, body
            assert s.recv(1) == b""
        peak = rss_bytes(proc.pid, "VmHWM")
        assert peak < 64 * MiB, f"peak RSS {peak / MiB:.1f} MiB"
        with RemoteDevice.tcp("127.0.0.1", port, token_file=token) as dev:  # still serving
            assert dev.arch == "x86_64"
    finally:
        for s in held:
            s.close()
        proc.kill()
        proc.wait()


def test_sessions_beyond_the_cap_get_an_error_and_seats_come_back(token: Path) -> None:
    proc, port = start_runner("--token-file", str(token), "--max-sessions", "2")
    try:
        a = socket.create_connection(("127.0.0.1", port), timeout=60)
        b = authenticated_socket(port, token.read_bytes().strip())
        assert read_frame(a)[0] == CHALLENGE
        with socket.create_connection(("127.0.0.1", port), timeout=60) as extra:
            kind, body = read_frame(extra)
            assert kind == ERR and b"too many sessions" in body and b"--max-sessions" in body
        with pytest.raises(RunnerError, match="too many sessions"):
            RemoteDevice.tcp("127.0.0.1", port, token_file=token)
        a.close()
        b.close()
        for _ in range(600):  # the runner notices the closes; then the seats are free again
            try:
                with RemoteDevice.tcp("127.0.0.1", port, token_file=token) as dev:
                    assert dev.arch == "x86_64"
                break
            except RunnerError:
                time.sleep(0.1)
        else:
            raise AssertionError("the closed sessions never gave their seats back")
    finally:
        proc.kill()
        proc.wait()


def test_an_idle_session_is_closed_with_a_reason(token: Path) -> None:
    proc, port = start_runner("--token-file", str(token), "--idle-timeout", "1s")
    try:
        with authenticated_socket(port, token.read_bytes().strip()) as s:
            s.sendall(frame(INFO))
            assert read_frame(s)[0] == OK
            kind, body = read_frame(s)  # then nothing: the runner gives up on us
            assert kind == ERR and b"--idle-timeout" in body
            assert s.recv(1) == b""
    finally:
        proc.kill()
        proc.wait()


def test_the_shared_buffer_budget_is_enforced(token: Path) -> None:
    proc, port = start_runner("--token-file", str(token), "--max-buffered", "1M")
    try:
        with authenticated_socket(port, token.read_bytes().strip()) as s:
            s.sendall(struct.pack("<I", 3 * MiB) + b"\x01" + b"\0" * (2 * MiB))
            kind, body = read_frame(s)
            assert kind == ERR and b"--max-buffered" in body
        with RemoteDevice.tcp("127.0.0.1", port, token_file=token) as dev:  # the budget came back
            dev.install(counter_program())
            dev.run()
    finally:
        proc.kill()
        proc.wait()


def wait_until_idle(pid: int, limit_s: float = 60.0) -> bool:
    """Whether the process's CPU time stops growing (under 20 % of a core over 0.5 s)
    within ``limit_s``."""
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        before, t0 = cpu_seconds(pid), time.monotonic()
        time.sleep(0.5)
        if cpu_seconds(pid) - before < 0.2 * (time.monotonic() - t0):
            return True
    return False


def test_run_stops_when_its_client_disconnects(token: Path) -> None:
    proc, port = start_runner("--token-file", str(token))
    try:
        s = authenticated_socket(port, token.read_bytes().strip())
        s.sendall(frame(LOAD, busy_program()))
        assert read_frame(s) == (OK, b"")
        before = cpu_seconds(proc.pid)
        s.sendall(frame(RUN, struct.pack("<I", 0xFFFFFFFF)))
        deadline = time.monotonic() + 60
        while cpu_seconds(proc.pid) - before < 0.3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert cpu_seconds(proc.pid) - before >= 0.3, "the RUN never started"
        s.close()
        assert wait_until_idle(proc.pid), "the RUN kept running after its client left"
        with RemoteDevice.tcp("127.0.0.1", port, token_file=token) as dev:
            assert dev.arch == "x86_64"
    finally:
        proc.kill()
        proc.wait()


def test_stream_and_a_piped_run_stop_when_the_client_leaves(token: Path, tmp_path: Path) -> None:
    proc, port = start_runner("--token-file", str(token))
    try:
        s = authenticated_socket(port, token.read_bytes().strip())
        s.sendall(frame(LOAD, counter_program()))
        assert read_frame(s) == (OK, b"")
        s.sendall(frame(STREAM, struct.pack("<IB", 0xFFFFFFFF, 1) + struct.pack("<H", 1) + b"n"))
        assert read_frame(s)[0] == 0x81
        s.close()
        assert wait_until_idle(proc.pid), "the STREAM kept running after its client left"
    finally:
        proc.kill()
        proc.wait()
    child = subprocess.Popen([standalone_runner(), "--serve-stdio"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE)
    assert child.stdin is not None and child.stdout is not None
    child.stdin.write(frame(LOAD, busy_program()) + frame(RUN, struct.pack("<I", 0xFFFFFFFF)))
    child.stdin.flush()
    assert child.stdout.read(5) == struct.pack("<IB", 1, OK)
    child.stdin.close()  # the parent leaves: the pipe's writer is closed
    child.stdout.close()
    try:
        assert child.wait(timeout=60) == 0
    finally:
        child.kill()
        child.wait()
    # the line protocol too: a run of 2**32-1 steps ends when stdin closes
    program = tmp_path / "busy.cpy"
    program.write_bytes(busy_program())
    lines = subprocess.Popen([standalone_runner(), str(program), "--stdio"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    assert lines.stdin is not None and lines.stdout is not None
    lines.stdin.write("run 3\nrun 4294967295\n")
    lines.stdin.flush()
    assert lines.stdout.readline() == "ok\n"
    time.sleep(0.2)  # not a timing assertion: lets the long run start before stdin closes
    lines.stdin.close()
    try:
        assert lines.wait(timeout=60) == 0
    finally:
        lines.kill()
        lines.wait()


def test_period_runs_in_constant_memory_and_duration_bounds_wall_clock(tmp_path: Path) -> None:
    program = tmp_path / "counter.cpy"
    program.write_bytes(counter_program())
    runner = standalone_runner()
    # a day at 100 kHz: preallocating 16 bytes per step would need 138 GB
    proc = subprocess.Popen([runner, str(program), "--period", "10us", "--duration", "86400s", "--no-rt",
                             "--print", "n"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1.0)
        assert proc.poll() is None, proc.communicate()[1]
        peak = rss_bytes(proc.pid, "VmHWM")
        assert peak < 32 * MiB, f"peak RSS {peak / MiB:.1f} MiB"
    finally:
        proc.kill()
        proc.wait()
    # 1 µs periods for 10 ms: the loop overruns every deadline and must still end at
    # 10 ms of wall-clock time, with at most one step per elapsed period
    res = subprocess.run([runner, str(program), "--period", "1us", "--duration", "10ms", "--no-rt"],
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    steps = int(res.stderr.split(" steps,")[0].rsplit(" ", 1)[1])
    assert 1 <= steps <= 10_000, res.stderr
    assert f"n={steps}" in res.stdout
