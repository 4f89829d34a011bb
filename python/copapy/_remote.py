"""Remote devices: a ``copapy-run`` over TCP, or one started as a child process.

``cp.Target(runner="tcp://127.0.0.1:5000")`` compiles for the runner's architecture and
sends each compiled program file to it; ``run``, ``read_value`` and ``write_value`` then
act on the runner's memory. ``runner="process"`` starts a private ``copapy-run`` and talks
to it over its stdin/stdout. Both speak the frame protocol of ``docs/copapy-run.md``:
``length: u32 LE`` then a kind byte and its payload.

Over TCP the runner speaks first (CHALLENGE) and the client proves it holds the shared
token: HMAC-SHA256 over a label and both sides' nonces, never the token itself; the
runner answers with its own HMAC, so the client knows it reached a holder of the token
too. The token is found as the runner finds it (:func:`token_path`): the file named in
the address (``tcp://HOST:PORT?token_file=PATH``), else ``$COPAPY_RUN_TOKEN_FILE``, else
``$XDG_CONFIG_HOME/copapy/run.token``, else ``~/.config/copapy/run.token``; or it is given
to :meth:`RemoteDevice.tcp` directly. A runner started with ``--insecure-no-auth`` is
used only when the client says so too (``?insecure_no_auth=1``).

:class:`RemoteDevice` implements the device interface every ``Target`` uses
(``arch``, ``install``, ``run``, ``read``, ``write``).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import shutil
import socket
import struct
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any
from urllib.parse import parse_qs

LOAD, WRITE, READ, RUN, SET, GET, STREAM, INFO, VARS, STOP, AUTH = range(1, 12)
OK, DATA, CHALLENGE, ERR = 0x80, 0x81, 0x82, 0xEE
CLIENT_LABEL = b"copapy-run auth v1 client"
SERVER_LABEL = b"copapy-run auth v1 server"
NONCE_BYTES = 32
MIN_TOKEN_BYTES = 16
TOKEN_FILE_ENV = "COPAPY_RUN_TOKEN_FILE"
_WHITESPACE = b" \t\n\r\x0c"  # what the runner trims (Rust's ASCII whitespace: no vertical tab)


class RunnerError(RuntimeError):
    """The runner refused a request; the message is the runner's."""


class AuthenticationError(PermissionError):
    """The runner and this client could not prove to each other that they share the token."""


def token_path() -> Path:
    """Where the token file is by default, for the runner and for clients:
    ``$COPAPY_RUN_TOKEN_FILE``, else ``$XDG_CONFIG_HOME/copapy/run.token``, else
    ``~/.config/copapy/run.token``."""
    named = os.environ.get(TOKEN_FILE_ENV)
    if named:
        return Path(named)
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "copapy" / "run.token"


def read_token(path: str | os.PathLike[str]) -> bytes:
    """The token in a file (surrounding whitespace removed, as the runner reads it)."""
    token = Path(path).read_bytes().strip(_WHITESPACE)
    if len(token) < MIN_TOKEN_BYTES:
        raise AuthenticationError(f"token file {os.fspath(path)} holds {len(token)} bytes; a token has at "
                                  f"least {MIN_TOKEN_BYTES} (copapy-run writes 64 hex digits)")
    return token


def _mac(token: bytes, label: bytes, server_nonce: bytes, client_nonce: bytes) -> bytes:
    return hmac.new(token, label + server_nonce + client_nonce, hashlib.sha256).digest()


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
    def tcp(cls, host: str, port: int, timeout: float | None = 30.0, *, token: str | bytes | None = None,
            token_file: str | os.PathLike[str] | None = None,
            insecure_no_auth: bool = False) -> RemoteDevice:
        """Connects to ``copapy-run --listen host:port`` and authenticates with ``token``,
        the token in ``token_file``, or the one at :func:`token_path`.
        ``insecure_no_auth=True`` also accepts a runner started with ``--insecure-no-auth``
        (which proves nothing: anyone could be listening there)."""
        sock = socket.create_connection((host, port), timeout=timeout)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            reader, writer = sock.makefile("rb"), sock.makefile("wb")
            _handshake(reader, writer, f"{host}:{port}", token, token_file, insecure_no_auth)
        except BaseException:
            sock.close()
            raise
        return cls(reader, writer, [sock])

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
        return _receive(self._r)

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


def _receive(reader: IO[bytes]) -> tuple[int, bytes]:
    head = reader.read(5)
    if len(head) < 5:
        raise ConnectionError("the runner closed the connection")
    length, kind = struct.unpack("<IB", head)
    body = reader.read(length - 1)
    if len(body) < length - 1:
        raise ConnectionError("the runner closed the connection mid-reply")
    return kind, body


def _handshake(reader: IO[bytes], writer: IO[bytes], where: str, token: str | bytes | None,
               token_file: str | os.PathLike[str] | None, insecure_no_auth: bool) -> None:
    """Answers the runner's CHALLENGE and checks the runner's proof (docs/copapy-run.md)."""
    kind, body = _receive(reader)
    if kind == ERR:
        raise RunnerError(f"copapy-run at {where}: {body.decode(errors='replace')}")
    if kind != CHALLENGE or len(body) != 1 + NONCE_BYTES or body[0] not in (0, 1):
        raise ConnectionError(f"{where} did not greet as a copapy-run with authentication does "
                              "(an older runner, or another service)")
    if body[0] == 0:
        if not insecure_no_auth:
            raise AuthenticationError(
                f"the runner at {where} does not authenticate (started with --insecure-no-auth), so it "
                "cannot prove it is the runner you mean; accept it with tcp://HOST:PORT?insecure_no_auth=1")
        return
    if isinstance(token, str):
        token = token.encode()
    if token is None:
        path = Path(token_file) if token_file is not None else token_path()
        if not path.is_file():
            raise AuthenticationError(
                f"the runner at {where} needs its token and there is no token file at {path}: copy the "
                "runner's token file there, set COPAPY_RUN_TOKEN_FILE, or use tcp://HOST:PORT?token_file=PATH")
        token = read_token(path)
    token = token.strip(_WHITESPACE)
    server_nonce = body[1:]
    client_nonce = secrets.token_bytes(NONCE_BYTES)
    writer.write(struct.pack("<IB", 1 + 2 * NONCE_BYTES, AUTH) + client_nonce
                 + _mac(token, CLIENT_LABEL, server_nonce, client_nonce))
    writer.flush()
    kind, body = _receive(reader)
    if kind == ERR:
        raise AuthenticationError(f"copapy-run at {where}: {body.decode(errors='replace')}")
    want = _mac(token, SERVER_LABEL, server_nonce, client_nonce)
    if kind != OK or not hmac.compare_digest(body, want):
        raise AuthenticationError(f"the runner at {where} accepted us but did not prove it holds the "
                                  "token: not the runner you mean")


_TCP_OPTIONS = {"token_file", "insecure_no_auth"}


def _tcp(runner: str) -> RemoteDevice:
    address, _, query = runner[len("tcp://"):].partition("?")
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"runner {runner!r}: use tcp://HOST:PORT, e.g. tcp://127.0.0.1:5000")
    try:
        options = parse_qs(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError:
        options = {"": []}  # reported below
    unknown = set(options) - _TCP_OPTIONS
    if unknown or any(len(v) != 1 for v in options.values()):
        raise ValueError(f"runner {runner!r}: the options after ? are token_file=PATH and "
                         "insecure_no_auth=1, each at most once")
    insecure = options.get("insecure_no_auth", ["0"])[0]
    if insecure not in ("0", "1"):
        raise ValueError(f"runner {runner!r}: insecure_no_auth is 0 or 1")
    token_file = options.get("token_file", [None])[0]
    return RemoteDevice.tcp(host.strip("[]"), int(port), token_file=token_file,
                            insecure_no_auth=insecure == "1")


def connect(runner: Any) -> Any:
    """A device for ``Target(runner=...)``: ``"tcp://HOST:PORT"`` (options
    ``?token_file=PATH``, ``?insecure_no_auth=1``, joined by ``&``), ``"process"`` (a private
    child ``copapy-run``), ``"process:/path/to/copapy-run"``, a list: the command that
    starts a child ``copapy-run`` (``["qemu-arm", "-cpu", "arm1176", "./copapy-run"]``;
    ``--serve-stdio`` is appended), or any object that already implements the device
    interface (``arch``, ``install``, ``run``, ``read``, ``write``)."""
    if isinstance(runner, str):
        if runner.startswith("tcp://"):
            return _tcp(runner)
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
