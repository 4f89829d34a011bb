"""Remote devices: a ``copapy-run`` over TCP, or one started as a child process.

``cp.Target(runner="tcp://127.0.0.1:5000")`` compiles for the runner's architecture and
sends each compiled program file to it; ``run``, ``read_value`` and ``write_value`` then
act on the runner's memory. ``runner="process"`` starts a private ``copapy-run`` and talks
to it over its stdin/stdout. Both speak the frame protocol of ``docs/copapy-run.md``:
``length: u32 LE`` then a kind byte and its payload.

:class:`RemoteDevice` implements the device interface every ``Target`` uses
(``arch``, ``install``, ``run``, ``read``, ``write``).
"""

from __future__ import annotations

import os
import shutil
import socket
import struct
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

LOAD, WRITE, READ, RUN, SET, GET, STREAM, INFO, VARS, STOP = range(1, 11)
OK, DATA, ERR = 0x80, 0x81, 0xEE


class RunnerError(RuntimeError):
    """The runner refused a request; the message is the runner's."""


def _is_binary(path: str) -> bool:
    """Whether ``path`` is a native executable, not the ``copapy-run`` console script
    (which would start itself again)."""
    with open(path, "rb") as f:
        return not f.read(2).startswith(b"#!")


def find_runner() -> str:
    """The ``copapy-run`` executable: ``$COPAPY_RUN``, the one installed with this
    package, one on ``PATH``, or one built in this source tree (``cargo build --release``)."""
    candidates = [os.environ.get("COPAPY_RUN"), str(Path(__file__).parent / "_bin" / "copapy-run"),
                  shutil.which("copapy-run")]
    root = Path(__file__).resolve().parent.parent.parent
    candidates += [str(root / "target" / kind / "copapy-run") for kind in ("release", "debug")]
    for c in candidates:
        if c and os.path.isfile(c) and os.access(c, os.X_OK) and _is_binary(c):
            return c
    raise FileNotFoundError(
        "copapy-run not found: set COPAPY_RUN, put copapy-run on PATH, or build it with "
        "cargo build --release -p copapy-run"
    )


class RemoteDevice:
    """A ``copapy-run`` reached over a byte stream (a socket or a child's pipes)."""

    arch: str
    #: The runner CPU's features, comma-separated (``"armv6,armv7,vfp2,vfp3"``); empty
    #: for a runner that does not report them.
    features: str

    def __init__(self, reader: IO[bytes], writer: IO[bytes], closers: list[Any] | None = None) -> None:
        self._r = reader
        self._w = writer
        self._closers = closers or []
        self._closed = False
        # INFO: "<target> <features>", e.g. "armv7 armv6,armv7,vfp2,vfp3" (older
        # runners: the instruction set alone); Target parses it with the shared table
        self.arch, _, self.features = self._call(INFO).decode().partition(" ")

    @classmethod
    def tcp(cls, host: str, port: int, timeout: float | None = 30.0) -> RemoteDevice:
        """Connects to ``copapy-run --listen host:port``."""
        sock = socket.create_connection((host, port), timeout=timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return cls(sock.makefile("rb"), sock.makefile("wb"), [sock])

    @classmethod
    def spawn(cls, executable: str | Sequence[str] | None = None) -> RemoteDevice:
        """Starts a private ``copapy-run --serve-stdio`` and talks to it over pipes.

        ``executable`` is its path, or the whole command that starts it as a list (e.g.
        ``["qemu-arm", "-cpu", "arm1176", "copapy-run"]``); ``--serve-stdio`` is appended."""
        if executable is None or isinstance(executable, str):
            command = [executable or find_runner()]
        else:
            command = list(executable)
        proc = subprocess.Popen([*command, "--serve-stdio"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE)
        assert proc.stdin is not None and proc.stdout is not None
        return cls(proc.stdout, proc.stdin, [proc])

    # -- framing ---------------------------------------------------------------------------

    def _send(self, kind: int, payload: bytes = b"") -> None:
        if self._closed:
            raise ConnectionError("the runner connection is closed")
        self._w.write(struct.pack("<IB", len(payload) + 1, kind) + payload)
        self._w.flush()

    def _receive(self) -> tuple[int, bytes]:
        head = self._r.read(5)
        if len(head) < 5:
            raise ConnectionError("the runner closed the connection")
        length, kind = struct.unpack("<IB", head)
        body = self._r.read(length - 1)
        if len(body) < length - 1:
            raise ConnectionError("the runner closed the connection mid-reply")
        return kind, body

    def _expect_ok(self) -> bytes:
        kind, body = self._receive()
        if kind == ERR:
            raise RunnerError(f"copapy-run: {body.decode(errors='replace')}")
        if kind != OK:
            raise ConnectionError(f"unexpected reply kind {kind:#04x} from the runner")
        return body

    def _call(self, kind: int, payload: bytes = b"") -> bytes:
        self._send(kind, payload)
        return self._expect_ok()

    # -- the device interface --------------------------------------------------------------

    def install(self, program: bytes) -> None:
        """Sends a whole program file; the runner validates and loads it."""
        self._call(LOAD, bytes(program))

    def run(self) -> None:
        """Runs the program once."""
        self._call(RUN, struct.pack("<I", 1))

    def read(self, offset: int, size: int) -> bytes:
        """Reads ``size`` bytes of data memory at ``offset``."""
        return self._call(READ, struct.pack("<II", offset, size))

    def write(self, offset: int, data: bytes) -> None:
        """Writes bytes into data memory at ``offset``."""
        self._call(WRITE, struct.pack("<I", offset) + bytes(data))

    # -- by name, and streaming ------------------------------------------------------------

    def run_steps(self, n: int) -> None:
        """Runs the program ``n`` times in the runner without a round trip per step."""
        self._call(RUN, struct.pack("<I", n))

    def stream(self, n: int, names: list[str]) -> list[bytes]:
        """Runs ``n`` steps; returns the raw bytes of the named variables after each."""
        payload = struct.pack("<IB", n, len(names))
        for name in names:
            b = name.encode()
            payload += struct.pack("<H", len(b)) + b
        self._send(STREAM, payload)
        rows = []
        while True:
            kind, body = self._receive()
            if kind == DATA:
                rows.append(body)
            elif kind == OK:
                return rows
            elif kind == ERR:
                raise RunnerError(f"copapy-run: {body.decode(errors='replace')}")
            else:
                raise ConnectionError(f"unexpected reply kind {kind:#04x} from the runner")

    def variables(self) -> list[str]:
        """``name role dtype shape`` of each variable of the loaded program."""
        return self._call(VARS).decode().splitlines()

    def close(self) -> None:
        """Ends the session (and the child process, for a spawned runner)."""
        if self._closed:
            return
        try:
            self._call(STOP)
        except (OSError, ConnectionError, RunnerError):
            pass
        self._closed = True
        for c in self._closers:
            if isinstance(c, subprocess.Popen):
                for stream in (c.stdin, c.stdout):
                    if stream is not None:
                        stream.close()
                c.wait(timeout=10)
            else:
                c.close()

    def __enter__(self) -> RemoteDevice:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - never raise from a finaliser
            pass


def connect(runner: Any) -> Any:
    """A device for ``Target(runner=...)``: ``"tcp://HOST:PORT"``, ``"process"`` (a private
    child ``copapy-run``), ``"process:/path/to/copapy-run"``, a list: the command that
    starts a child ``copapy-run`` (``["qemu-arm", "-cpu", "arm1176", "./copapy-run"]``;
    ``--serve-stdio`` is appended), or any object that already implements the device
    interface (``arch``, ``install``, ``run``, ``read``, ``write``)."""
    if isinstance(runner, str):
        if runner.startswith("tcp://"):
            host, sep, port = runner[len("tcp://"):].rpartition(":")
            if not sep or not port.isdigit():
                raise ValueError(f"runner {runner!r}: use tcp://HOST:PORT, e.g. tcp://127.0.0.1:5000")
            return RemoteDevice.tcp(host.strip("[]"), int(port))
        if runner == "process" or runner.startswith("process:"):
            return RemoteDevice.spawn(runner.partition(":")[2] or None)
        raise ValueError(f"runner {runner!r}: use 'tcp://HOST:PORT' or 'process'")
    if isinstance(runner, (list, tuple)):
        if not runner or not all(isinstance(a, str) for a in runner):
            raise ValueError(f"runner {runner!r}: a command is a non-empty list of strings")
        return RemoteDevice.spawn(runner)
    missing = [m for m in ("arch", "install", "run", "read", "write") if not hasattr(runner, m)]
    if missing:
        raise TypeError(f"runner {runner!r} is not a device: it lacks {', '.join(missing)}")
    return runner
