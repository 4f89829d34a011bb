"""Remote devices: a ``copapy-run`` over TCP, or one started as a child process.

``cp.Target(runner="tcp://127.0.0.1:5000")`` compiles for the runner's architecture and
sends each compiled program file to it; ``run``, ``read_value`` and ``write_value`` then
act on the runner's memory. ``runner="process"`` starts a private ``copapy-run`` (the one
built into this package's extension module, see :func:`runner_command`) and talks to it
over its stdin/stdout. Both speak the frame protocol of ``docs/copapy-run.md``:
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
import select
import shutil
import site
import socket
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

LOAD, WRITE, READ, RUN, SET, GET, STREAM, INFO, VARS, STOP, AUTH, PERIODIC = range(1, 13)
OK, DATA, CHALLENGE, ERR = 0x80, 0x81, 0x82, 0xEE
CLIENT_LABEL = b"copapy-run auth v1 client"
SERVER_LABEL = b"copapy-run auth v1 server"
NONCE_BYTES = 32
MIN_TOKEN_BYTES = 16
TOKEN_FILE_ENV = "COPAPY_RUN_TOKEN_FILE"
_WHITESPACE = b" \t\n\r\x0c"  # what the runner trims (Rust's ASCII whitespace: no vertical tab)


@dataclass(frozen=True)
class PeriodicReport:
    """What :meth:`RemoteDevice.run_periodic` measured on the runner's clock (a board's timer)."""

    steps: int
    #: steps that ended after the next deadline (that deadline was then skipped)
    overruns: int
    #: deadlines skipped for overruns
    skipped: int
    #: largest and mean lateness of a step's start after its deadline, in seconds
    late_max: float
    late_mean: float


class RunnerError(RuntimeError):
    """The runner refused a request (the message is the runner's), or what was started as
    a runner is not a usable copapy runner (the message names it and says what to do)."""


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


# How long a runner that was just started may take to answer INFO (a Python-hosted runner
# imports copapy first; under emulation or on a loaded machine that takes a while).
HANDSHAKE_SECONDS = 30.0


def own_runner_command() -> list[str]:
    """The runner that belongs to this installed copapy: the extension module's
    ``copapy-run`` (``copapy._core.run_cli``), started by this interpreter. Every kind of
    install has it, and its version always matches. ``-P`` keeps a ``copapy`` directory in
    the current directory from shadowing the package; :func:`_own_runner_env` makes the
    child import the very package this process imported."""
    if not sys.executable:
        raise RunnerError("cannot start copapy's own runner: this interpreter has no sys.executable; "
                          "use runner='process:/path/to/copapy-run' or runner='tcp://HOST:PORT'")
    return [sys.executable, "-P", "-m", "copapy._runner_cli"]


def _own_runner_env() -> dict[str, str]:
    """The environment for :func:`own_runner_command`: unchanged when this copapy lives in
    site-packages (the same interpreter finds it there), else ``PYTHONPATH`` led by the
    directory that holds it (a checkout's ``python/``, a path added at run time). Never
    site-packages itself, which would then come before the standard library."""
    home = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ)
    sites = {os.path.abspath(p) for p in (*site.getsitepackages(), site.getusersitepackages())}
    if home not in sites:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (home, env.get("PYTHONPATH")) if p)
    return env


def check_runner(path: str, origin: str) -> str:
    """``path`` resolved, after checking that it is a ``copapy-run`` of this copapy's
    version (its ``--version`` line equals ``copapy._core.runner_version()``); otherwise an
    error naming the file, what it did, and what to do. ``origin`` says where ``path``
    came from (``$COPAPY_RUN``, ``runner='process:...'``)."""
    from . import _core

    expected = _core.runner_version()
    fix = ("use runner='process' for the runner built into this copapy"
           + (" (unset COPAPY_RUN)" if origin == "$COPAPY_RUN" else "")
           + ", or give the path of a copapy-run built from the same version "
           "(cargo build --release -p copapy-run)")
    resolved = shutil.which(path) if os.sep not in path else path
    if not resolved or not os.path.isfile(resolved):
        raise FileNotFoundError(f"{origin} {path}: no such file; {fix}")
    if not os.access(resolved, os.X_OK):
        raise RunnerError(f"{origin} {resolved} is not executable; {fix}")
    try:
        done = subprocess.run([resolved, "--version"], stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=HANDSHAKE_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        raise RunnerError(f"{origin} {resolved} is not a copapy runner: `{resolved} --version` did not "
                          f"finish within {HANDSHAKE_SECONDS:.0f} s; {fix}") from None
    except OSError as e:
        raise RunnerError(f"{origin} {resolved} cannot be started ({e.strerror}); {fix}") from None
    said = done.stdout.decode(errors="replace").strip()
    if done.returncode != 0 or said != expected:
        what = (f"exited with status {done.returncode}" if done.returncode != 0 else "printed")
        detail = (said or done.stderr.decode(errors="replace").strip())[:200]
        raise RunnerError(f"{origin} {resolved} is not this copapy's runner: `{resolved} --version` "
                          f"{what} {detail!r}, expected {expected!r}; {fix}")
    return resolved


def runner_command(executable: str | None = None) -> list[str]:
    """The command that starts a ``copapy-run`` (add its arguments): ``executable`` if
    given, else ``$COPAPY_RUN`` if set, both checked with :func:`check_runner`; else this
    package's own runner (:func:`own_runner_command`). ``PATH`` is never searched for a
    bare ``copapy-run``: another install's runner there may be of another version."""
    if executable:
        return [check_runner(executable, "runner='process:...'")]
    env = os.environ.get("COPAPY_RUN")
    if env:
        return [check_runner(env, "$COPAPY_RUN")]
    return own_runner_command()


def _read_frame(fd: int, deadline: float) -> tuple[int, bytes]:
    """One reply frame read straight from ``fd`` by the deadline, byte-exact, so the
    buffered reader used afterwards starts at the next frame."""
    buf = b""
    need = 5
    while len(buf) < need:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise TimeoutError(f"no reply within {HANDSHAKE_SECONDS:.0f} s")
        chunk = os.read(fd, need - len(buf))
        if not chunk:
            raise EOFError("it exited" if len(buf) == 0 else "it closed its output mid-reply")
        buf += chunk
        if need == 5 and len(buf) == 5:
            length = struct.unpack("<I", buf[:4])[0]
            if not 1 <= length <= 4096:
                raise ValueError(f"its output {buf!r} is not a reply frame")
            need = 4 + length
    return buf[4], buf[5:]


def _check_started_runner(proc: subprocess.Popen[bytes], command: list[str], stderr: IO[bytes]) -> None:
    """Sends INFO to a runner just started and checks that the reply is a copapy runner's
    (an OK frame holding an architecture name); otherwise ends the process and raises an
    error with the command, what it did and what it printed on stderr."""
    assert proc.stdin is not None and proc.stdout is not None
    try:
        try:
            proc.stdin.write(struct.pack("<IB", 1, INFO))
            proc.stdin.flush()
        except BrokenPipeError:
            pass  # it exited already; what it wrote before says what it is
        kind, body = _read_frame(proc.stdout.fileno(), time.monotonic() + HANDSHAKE_SECONDS)
        if kind != OK or not body or not body.isascii() or not body.decode().isprintable():
            raise ValueError(f"it answered INFO with kind {kind:#04x} {body[:40]!r}, "
                             "not an architecture name")
    except (OSError, EOFError, TimeoutError, ValueError) as e:
        reason = str(e)
        if isinstance(e, EOFError):
            try:
                reason += f" (exit status {proc.wait(timeout=5)})"
            except subprocess.TimeoutExpired:
                pass
        proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()
            except BrokenPipeError:  # INFO still buffered for a runner that is gone
                pass
        stderr.seek(0)
        said = stderr.read().decode(errors="replace").strip()[-400:]
        raise RunnerError(
            f"{' '.join(command)} --serve-stdio is not a working copapy runner: {reason}"
            + (f"; its stderr: {said}" if said else "")
            + "; use runner='process' for the runner built into this copapy"
        ) from None


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
            _authenticate(reader, writer, f"{host}:{port}", token, token_file, insecure_no_auth)
        except BaseException:
            sock.close()
            raise
        return cls(reader, writer, [sock])

    @classmethod
    def spawn(cls, executable: str | Sequence[str] | None = None) -> RemoteDevice:
        """Starts a private ``copapy-run --serve-stdio``, checks that it answers as a copapy
        runner, and talks to it over pipes.

        ``executable`` is the path of a runner (checked by :func:`runner_command`; None for
        this package's own), or the whole command that starts one as a list (e.g.
        ``["qemu-arm", "-cpu", "arm1176", "copapy-run"]``); ``--serve-stdio`` is appended."""
        if executable is None or isinstance(executable, str):
            command = runner_command(executable)
        else:
            command = list(executable)
        # stderr to a file, not a pipe: nobody reads it while the runner works, and a full
        # pipe would stall the runner; it is read back when the handshake fails
        stderr = tempfile.TemporaryFile()
        try:
            proc = subprocess.Popen([*command, "--serve-stdio"], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=stderr, env=_own_runner_env())
        except OSError as e:
            stderr.close()
            raise RunnerError(f"cannot start {command[0]} ({e.strerror}); use runner='process' for the "
                              "runner built into this copapy") from None
        with stderr:
            _check_started_runner(proc, command, stderr)
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

    def run_periodic(self, steps: int, period: float) -> PeriodicReport:
        """Runs ``steps`` steps, one every ``period`` seconds with absolute deadlines (the
        first one period from now), in the runner: ``copapy-run --period`` for a client,
        or a board's timer over the serial link; returns the lateness the runner measured.
        The reply comes after the whole run."""
        period_us = round(period * 1e6)
        if not 0 <= steps < 1 << 32 or not 1 <= period_us < 1 << 32:
            raise ValueError("steps is 0 to 2**32-1 and period at least 1 microsecond")
        body = self._call(PERIODIC, struct.pack("<II", steps, period_us))
        done, overruns, skipped, late_max, late_mean = struct.unpack("<5I", body)
        return PeriodicReport(done, overruns, skipped, late_max * 1e-9, late_mean * 1e-9)

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


def _authenticate(reader: IO[bytes], writer: IO[bytes], where: str, token: str | bytes | None,
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
