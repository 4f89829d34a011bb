"""Which device a ``runner=`` argument names: a TCP runner, a child ``copapy-run``, a board
on a serial line, or an object that already is a device. ``Target(runner=...)`` and
``cp.load(..., runner=...)`` both come here (the Rust binding calls :func:`connect`)."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

from ._remote import RemoteDevice
from ._serial import SerialDevice

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
    child ``copapy-run``), ``"process:/path/to/copapy-run"``, ``"serial:URL"`` (a board
    running copapy's firmware on a serial port or pyserial URL: ``copapy._serial``), a list: the command that
    starts a child ``copapy-run`` (``["qemu-arm", "-cpu", "arm1176", "./copapy-run"]``;
    ``--serve-stdio`` is appended), or any object that already implements the device
    interface (``arch``, ``install``, ``run``, ``read``, ``write``)."""
    if isinstance(runner, str):
        if runner.startswith("tcp://"):
            return _tcp(runner)
        if runner == "process" or runner.startswith("process:"):
            return RemoteDevice.spawn(runner.partition(":")[2] or None)
        if runner.startswith("serial:"):
            return SerialDevice.open(runner[len("serial:"):])
        raise ValueError(f"runner {runner!r}: use 'tcp://HOST:PORT', 'process' or 'serial:PYSERIAL_URL'")
    if isinstance(runner, (list, tuple)):
        if not runner or not all(isinstance(a, str) for a in runner):
            raise ValueError(f"runner {runner!r}: a command is a non-empty list of strings")
        return RemoteDevice.spawn(runner)
    missing = [m for m in ("arch", "install", "run", "read", "write") if not hasattr(runner, m)]
    if missing:
        raise TypeError(f"runner {runner!r} is not a device: it lacks {', '.join(missing)}")
    return runner
