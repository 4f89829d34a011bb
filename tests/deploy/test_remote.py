"""Remote devices against a real copapy-run on loopback (and as a child process).

The runner executes this machine's code, so these tests use the native ``Target`` even
when the suite runs for a foreign target (tests/conftest.py). The TCP runner requires
its token (created by the runner in a temporary directory); the clients here find it
through ``COPAPY_RUN_TOKEN_FILE``, and raw-socket tests answer the challenge with
:func:`authenticated_socket`, written from the protocol description in
docs/copapy-run.md (not with the client under test).
"""

from __future__ import annotations

import hashlib
import hmac
import math
import os
import socket
import struct
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import copapy as cp
import numpy as np
import program_layout
import pytest
from copapy._core import Target
from copapy._remote import ERR, GET, INFO, LOAD, OK, PERIODIC, RUN, RemoteDevice, RunnerError
from helpers import F32, pairwise
from standalone import standalone_runner

AUTH, CHALLENGE = 0x0B, 0x82


def start_runner(*args: str) -> tuple[subprocess.Popen[str], int]:
    """A ``copapy-run --listen 127.0.0.1:0 ARGS`` and the port it listens on."""
    proc = subprocess.Popen([standalone_runner(), "--listen", "127.0.0.1:0", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("listening on "):
        proc.kill()
        _, err = proc.communicate()
        raise AssertionError(f"copapy-run did not start: {line!r} {err!r}")
    return proc, int(line.rsplit(":", 1)[1])


@pytest.fixture(scope="module")
def token_file(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Where the module's runner keeps its token; clients find it through the environment."""
    path = tmp_path_factory.mktemp("token") / "run.token"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("COPAPY_RUN_TOKEN_FILE", str(path))
        yield path


@pytest.fixture(scope="module")
def runner_port(token_file: Path) -> Iterator[int]:
    proc, port = start_runner("--token-file", str(token_file))
    yield port
    proc.kill()
    proc.wait()


def frame(kind: int, payload: bytes = b"") -> bytes:
    return struct.pack("<IB", len(payload) + 1, kind) + payload


def read_frame(sock: socket.socket) -> tuple[int, bytes]:
    f = sock.makefile("rb")
    length, kind = struct.unpack("<IB", f.read(5))
    return kind, f.read(length - 1)


def auth_frame(token: bytes, server_nonce: bytes, client_nonce: bytes) -> bytes:
    mac = hmac.new(token, b"copapy-run auth v1 client" + server_nonce + client_nonce, hashlib.sha256).digest()
    return frame(AUTH, client_nonce + mac)


def authenticated_socket(port: int, token: bytes | None = None) -> socket.socket:
    """A raw connection that has answered the runner's challenge (and checked its proof)."""
    if token is None:
        token = Path(os.environ["COPAPY_RUN_TOKEN_FILE"]).read_bytes().strip()
    s = socket.create_connection(("127.0.0.1", port), timeout=60)
    kind, body = read_frame(s)
    assert kind == CHALLENGE and len(body) == 33 and body[0] == 1
    client_nonce = os.urandom(32)
    s.sendall(auth_frame(token, body[1:], client_nonce))
    kind, proof = read_frame(s)
    assert kind == OK
    want = hmac.new(token, b"copapy-run auth v1 server" + body[1:] + client_nonce, hashlib.sha256).digest()
    assert proof == want
    return s


def test_target_api_on_a_tcp_runner(runner_port: int) -> None:
    a = cp.value(0.25, name="a")
    b = cp.value(0.87)
    c = a + b * 2.0
    d = cp.sqrt(c) * cp.sin(a)
    tg = Target(runner=f"tcp://127.0.0.1:{runner_port}")
    assert tg.arch == "x86_64"
    tg.compile(c, d)
    tg.run()
    want_c = F32(0.25) + F32(0.87) * F32(2.0)
    assert tg.read_value(c) == float(want_c)
    assert tg.read_value("out0") == float(want_c)
    tg.write_value(a, 1.0)
    tg.write_value([b], [-0.25])
    tg.run()
    assert tg.read_value(c) == 0.5
    assert tg.read_value(d) == pytest.approx(math.sqrt(0.5) * math.sin(1.0), rel=1e-6)
    w = cp.vector([a, b]) * 2.0
    tg.compile(w)  # a new program starts from the variables' initial values
    tg.run()
    assert list(tg.read_value(w).values) == [0.5, float(F32(0.87) * F32(2.0))]


def test_state_loop_runs_remotely_like_locally(runner_port: int) -> None:
    x = cp.value(0.0, name="x")
    u = cp.value(1.0, name="u")
    local, remote = Target(), Target(runner=f"tcp://127.0.0.1:{runner_port}")
    for tg in (local, remote):
        tg.compile(x * 2.0, updates={x: x * 0.9 + u * 0.1})
    for k in range(50):
        if k == 20:
            for tg in (local, remote):
                tg.write_value("u", -2.0)
        local.run()
        remote.run()
        assert remote.read_value("x") == local.read_value("x")
        assert remote.read_value("out0") == local.read_value("out0")


def test_child_process_runner_and_loading_a_file(tmp_path: Path) -> None:
    p = cp.value(3, name="p")
    q = p * p - 1
    tg = Target(runner="process")
    tg.compile(q, names={"q": q})
    tg.run()
    assert tg.read_value("q") == 8
    tg.write_value("p", -7)
    tg.run()
    assert tg.read_value(q) == 48
    path = tmp_path / "q.cpy"
    tg.save(path)
    loaded = cp.load(path, runner="process")
    loaded.write_value("p", 5)
    loaded.run()
    assert loaded.read_value("q") == 24


def test_streaming_and_names_on_the_device(runner_port: int) -> None:
    n = cp.value(0, name="n")
    tg = Target()
    tg.compile(n * 10, names={"tens": n * 10}, updates={n: n + 1})
    with RemoteDevice.tcp("127.0.0.1", runner_port) as dev:
        dev.install(tg.program_bytes())
        rows = dev.stream(4, ["n", "tens"])
        assert [struct.unpack("<ii", r) for r in rows] == [(1, 0), (2, 10), (3, 20), (4, 30)]
        dev.run_steps(6)
        assert [struct.unpack("<i", r) for r in dev.stream(1, ["n"])] == [(11,)]
        assert "n state int -" in dev.variables()
        with pytest.raises(RunnerError, match='no variable named "zz"'):
            dev.stream(1, ["zz"])


def test_periodic_runs_on_a_tcp_runner(runner_port: int) -> None:
    """PERIODIC, the serial firmware's fixed-period run, is served by copapy-run too: the
    same frame and report (docs/copapy-run.md)."""
    n = cp.value(0, name="n")
    with RemoteDevice.tcp("127.0.0.1", runner_port) as dev:
        tg = Target(runner=dev)
        tg.compile(n, updates={n: n + 3})
        report = dev.run_periodic(20, 0.0005)
        assert tg.read_value(n) == 60
        assert report.steps == 20
        assert 0 <= report.overruns <= report.skipped
        assert 0 <= report.late_mean <= report.late_max
        with pytest.raises(ValueError, match="period"):
            dev.run_periodic(1, 0.0)
        with pytest.raises(RunnerError, match="period must be at least 1 us"):
            dev._call(PERIODIC, struct.pack("<II", 1, 0))
        assert tg.read_value(n) == 60, "the refused run ran nothing"


def test_bad_requests_get_error_replies_and_the_runner_survives(runner_port: int) -> None:
    with authenticated_socket(runner_port) as s:
        s.sendall(frame(0x42))
        kind, body = read_frame(s)
        assert kind == ERR and b"unknown request kind 0x42" in body
        s.sendall(frame(RUN, b"\x01"))
        kind, body = read_frame(s)
        assert kind == ERR and b"missing step count" in body
        s.sendall(frame(RUN, struct.pack("<I", 1)))
        kind, body = read_frame(s)
        assert kind == ERR and b"no program loaded" in body
        s.sendall(frame(1, b"CPPY" + b"\0" * 10))
        kind, body = read_frame(s)
        assert kind == ERR and b"bad program file" in body
        s.sendall(frame(GET, b"\x05\x00ab"))
        kind, body = read_frame(s)
        assert kind == ERR and b"name runs past the end" in body
        s.sendall(frame(INFO))
        assert read_frame(s) == (OK, b"x86_64 sse2")
        foreign = program_layout.with_arch(make_program(), 2)  # aarch64
        s.sendall(frame(LOAD, bytes(foreign)))
        kind, body = read_frame(s)
        assert kind == ERR and b"program is for aarch64 but this runner is x86_64" in body
    with authenticated_socket(runner_port) as s:
        s.sendall(struct.pack("<I", 0))  # an unframeable length: error, then the runner hangs up
        kind, body = read_frame(s)
        assert kind == ERR and b"bad frame length 0" in body
        assert s.recv(1) == b""
    with RemoteDevice.tcp("127.0.0.1", runner_port) as dev:  # still serving
        assert dev.arch == "x86_64"


def test_a_client_vanishing_mid_frame_does_not_hurt_others(runner_port: int) -> None:
    program = make_program()
    with RemoteDevice.tcp("127.0.0.1", runner_port) as steady:
        steady.install(program)
        for cut in (2, 5, 40):
            with authenticated_socket(runner_port) as s:
                whole = frame(1, program)
                s.sendall(whole[:cut])  # header or body cut short, then gone
        steady.run()
        assert struct.unpack("<f", steady.read(0, 4))[0] == 2.0


def make_program() -> bytes:
    x = cp.value(2.0)
    tg = Target()
    tg.compile(x + 1.0)
    return tg.program_bytes()


def test_two_clients_at_once_have_their_own_programs(runner_port: int) -> None:
    errors: list[BaseException] = []

    def client(k: int) -> None:
        try:
            x = cp.value(float(k), name="x")
            tg = Target(runner=f"tcp://127.0.0.1:{runner_port}")
            tg.compile(updates={x: x + float(k)})
            for _ in range(200):
                tg.run()
            assert tg.read_value("x") == float(k) * 201
        except BaseException as e:  # noqa: BLE001 - reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=client, args=(k,)) for k in (1, 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors


def test_runner_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="tcp://HOST:PORT"):
        Target(runner="tcp://nowhere")
    with pytest.raises(ValueError, match="use 'tcp://HOST:PORT', 'process' or 'serial:"):
        Target(runner="serial")
    with pytest.raises(TypeError, match="is not a device"):
        Target(runner=object())
    with pytest.raises(ConnectionRefusedError):
        Target(runner="tcp://127.0.0.1:1")


def test_jit_on_a_tcp_runner(runner_port: int) -> None:
    """@cp.jit(runner=...) compiles each signature for the runner's architecture and
    calls it there; results are NumPy float32's."""

    @cp.jit(runner=f"tcp://127.0.0.1:{runner_port}")
    def f(a: Any, b: Any) -> Any:
        return [a * b + a, cp.sqrt(b)]

    for a, b in [(2.0, 3.0), (0.1, 7.5), (-1.5, 0.25)]:
        fa, fb = np.float32(a), np.float32(b)
        got = f(a, b)
        assert got == [float(fa * fb + fa), float(np.sqrt(fb))]
    assert f(2, 3) == [8, float(np.sqrt(np.float32(3)))]  # an int signature: a second program
    assert f.specialisations == 2


def test_jit_on_an_emulated_target() -> None:
    @cp.jit(arch="cortex-m4")
    def g(v: Any) -> Any:
        return sum(x * x for x in v)

    xs = [0.5, -1.25, 3.0]
    want = np.float32(0.0)
    for x in xs:
        want = want + np.float32(x) * np.float32(x)
    assert g(xs) == float(want)


def test_jit_packs_large_numpy_arguments_on_devices(runner_port: int) -> None:
    """A NumPy argument of more than 64 elements arrives as one cp.array on an emulated
    target and on a runner too: bound into the device's data copy, run there, and an
    array result comes back as a NumPy array (float32 NumPy references, the documented
    summation order)."""
    y = (np.arange(100) % 7 - 3).astype(">i8")  # another dtype and byte order

    def f(a: Any, b: Any) -> Any:
        return a * 2.0 + b, (a * b).sum()

    for placement in ({"arch": "riscv32"}, {"runner": f"tcp://127.0.0.1:{runner_port}"}):
        g = cp.jit(f, **placement)  # type: ignore[call-overload]
        for scale in (1.0, -3.5):
            x = np.linspace(-2.0, 2.0, 100, dtype=F32) * F32(scale)
            arr, total = g(x, y)
            assert isinstance(arr, np.ndarray) and arr.dtype == F32 and arr.shape == (100,)
            assert arr.tolist() == (x * F32(2) + y.astype(F32)).tolist()
            assert total == float(pairwise(x * y.astype(F32)))
        assert g.specialisations == 1


def test_jit_placement_errors() -> None:
    with pytest.raises(ValueError, match="unknown target 'x86'"):
        cp.jit(lambda a: a, arch="x86")
    with pytest.raises(TypeError, match="runner is an address"):
        cp.jit(lambda a: a, runner=object())  # type: ignore[arg-type]
