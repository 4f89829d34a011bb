"""The serial link: a microcontroller running copapy's reference firmware (or any firmware
that speaks the same frames), driven over a UART with ``cp.Target(runner="serial:URL")``.

The messages are the runner's (``docs/copapy-run.md``: a kind byte and its payload), so
:class:`SerialDevice` is a :class:`~copapy._remote.RemoteDevice` with another envelope. A
UART loses and flips bytes and has no message boundaries, so each message travels as::

    COBS( seq:u8 | kind:u8 | payload | crc32(seq | kind | payload):u32 LE ) 0x00

A 0x00 ends every frame and occurs nowhere else, so the receiver resynchronises at the
next one after noise; the firmware acts only on a whole frame whose CRC-32 matches and
answers any other with an ERR of seq 0 (``docs/firmware.md``, "The serial link").
Requests carry seq 1..255 and the reply repeats it, so a late reply to an earlier request
is never taken for the current one.

``URL`` is a pyserial URL (``serial.serial_for_url``): a device (``/dev/ttyACM0``), or
``socket://HOST:PORT`` (a board's UART on a TCP socket, as QEMU's ``-serial tcp:``
gives), and so on. Options after ``?`` that this module takes itself: ``baudrate=``
(default 115200) and ``timeout=`` (seconds to wait for a reply once the request is on the
line, default 10; the time a request takes to go out at ``baudrate``, doubled, is added).
"""

from __future__ import annotations

import re
import struct
import time
import zlib
from typing import Any, NoReturn
from urllib.parse import parse_qsl, urlencode

from ._remote import ERR, INFO, OK, PeriodicReport, RemoteDevice, RunnerError

#: The seq of the firmware's reply to a frame that did not arrive intact.
SEQ_REJECTED = 0
DEFAULT_BAUDRATE = 115200
DEFAULT_TIMEOUT = 10.0
READ_SLICE = 0.1
_OWN_OPTIONS = ("baudrate", "timeout")


class LinkError(ConnectionError):
    """A frame was lost or corrupted on the serial line (by the board or on its way back).
    The session goes on: the next request resynchronises the stream first."""


class FirmwareError(RunnerError):
    """The firmware refused a request. ``code`` is the copapy library's error code
    (``copapy_runner.h``: -9 checksum mismatch, -5 another architecture, ...) when the
    refusal came from it, else None."""

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.code = code


def cobs_encode(data: bytes) -> bytes:
    """Consistent overhead byte stuffing: ``data`` without any 0x00 (the frame delimiter
    is added by the caller)."""
    out = bytearray()
    start = 0
    while True:
        end = start
        while end < len(data) and data[end] != 0 and end - start < 254:
            end += 1
        out.append(end - start + 1)
        out += data[start:end]
        if end == len(data):
            return bytes(out)
        start = end + 1 if end - start < 254 else end


def cobs_decode(data: bytes) -> bytes | None:
    """The bytes :func:`cobs_encode` encoded, or None when ``data`` is not a valid
    encoding (a 0x00 inside, a block cut short)."""
    out = bytearray()
    at = 0
    while at < len(data):
        code = data[at]
        block = data[at + 1:at + code]
        if len(block) != code - 1 or 0 in block:
            return None
        out += block
        at += code
        if code < 0xFF and at < len(data):
            out.append(0)
    return bytes(out)


def frame(seq: int, kind: int, payload: bytes) -> bytes:
    """A message as it goes on the wire, with its delimiter."""
    body = bytes((seq, kind)) + payload
    return cobs_encode(body + struct.pack("<I", zlib.crc32(body))) + b"\0"


def unframe(encoded: bytes) -> tuple[int, int, bytes] | None:
    """``(seq, kind, payload)`` of an intact frame (delimiter removed), else None."""
    body = cobs_decode(encoded)
    if body is None or len(body) < 6:
        return None
    if zlib.crc32(body[:-4]) != struct.unpack("<I", body[-4:])[0]:
        return None
    return body[0], body[1], body[2:-4]


def _open_port(url: str) -> tuple[Any, float]:
    try:
        import serial  # pyserial
    except ImportError:
        raise ImportError("runner='serial:...' needs pyserial: pip install pyserial "
                          "(or pip install 'copapy-rs[serial]')") from None
    address, _, query = url.partition("?")
    options = dict(parse_qsl(query, keep_blank_values=True))
    own = {k: options.pop(k) for k in _OWN_OPTIONS if k in options}
    try:
        baudrate = int(own.get("baudrate", DEFAULT_BAUDRATE))
        timeout = float(own.get("timeout", DEFAULT_TIMEOUT))
        if baudrate <= 0 or not timeout > 0:
            raise ValueError
    except ValueError:
        raise ValueError(f"runner 'serial:{url}': baudrate is a positive integer and timeout a "
                         "positive number of seconds") from None
    rest = address + ("?" + urlencode(options) if options else "")
    if not address:
        raise ValueError("runner 'serial:': name the port, e.g. serial:/dev/ttyACM0?baudrate=115200 "
                         "or serial:socket://127.0.0.1:4000")
    try:
        # reads return at least this often, so each reply has its own deadline
        port = serial.serial_for_url(rest, baudrate=baudrate, timeout=READ_SLICE)
    except serial.SerialException as e:
        raise ConnectionError(f"runner 'serial:{url}': cannot open the port: {e}") from None
    except ValueError as e:  # an unknown URL option
        raise ValueError(f"runner 'serial:{url}': {e}; this module's own options are baudrate= "
                         "and timeout=") from None
    return port, timeout


class SerialDevice(RemoteDevice):
    """A board that speaks the runner's frames over a serial line (see the module doc)."""

    def __init__(self, port: Any, where: str, timeout: float = DEFAULT_TIMEOUT) -> None:
        self._port = port
        self._where = where
        self._timeout = timeout
        self._deadline = 0.0  # for the reply awaited
        self._seq = 0
        self._pending = 0  # the seq of the request whose reply is awaited
        self._dirty = True  # garbage may sit in the board's receive buffer: resync first
        # a LOAD whose reply was lost may or may not have replaced the program: until the
        # next LOAD succeeds, the variables' places are unknown
        self._program_unknown = False
        self._pending_buf = bytearray()
        super().__init__(port, port, [port])

    @classmethod
    def open(cls, url: str) -> SerialDevice:
        """Opens a pyserial URL (see the module doc) and asks the board what it runs."""
        port, timeout = _open_port(url)
        try:
            return cls(port, f"serial:{url}", timeout)
        except BaseException:
            port.close()
            raise

    # -- framing: the same messages as RemoteDevice, in the serial envelope ----------------

    def _next_seq(self) -> int:
        self._seq = self._seq % 255 + 1
        return self._seq

    def _send(self, kind: int, payload: bytes = b"") -> None:
        if self._closed:
            raise ConnectionError("the serial connection is closed")
        if self._dirty:
            self._resync()
        self._pending = self._next_seq()
        self._port.reset_input_buffer()
        self._pending_buf.clear()
        wire = b"\0" + frame(self._pending, kind, payload)
        self._port.write(wire)
        self._port.flush()
        self._start_waiting(len(wire))

    def _start_waiting(self, sent: int) -> None:
        """The reply is due ``timeout`` after the request's bytes went out: 10 bits a byte
        at the port's baud rate, doubled (a socket's rate depends on its other end: QEMU's
        one-byte UARTs take about that)."""
        self._deadline = time.monotonic() + self._timeout + 20 * sent / self._port.baudrate

    def _read_frame(self) -> bytes:
        """The next delimited frame's bytes, within the timeout."""
        while True:
            end = self._pending_buf.find(b"\0")
            if end >= 0:
                encoded = bytes(self._pending_buf[:end])
                del self._pending_buf[:end + 1]
                if encoded:
                    return encoded
                continue
            chunk = self._port.read(max(1, self._port.in_waiting))
            if not chunk and time.monotonic() > self._deadline:
                self._dirty = True
                raise TimeoutError(
                    f"{self._where}: no reply within {self._timeout:g} s: is the board running the "
                    "copapy firmware on this port, at this baud rate? (a request or reply lost on the "
                    "line also ends here; the next request resynchronises; a longer run needs "
                    "?timeout=SECONDS)")
            self._pending_buf += chunk

    def _receive(self) -> tuple[int, bytes]:
        """The reply to the pending request. A rejection (an ERR of seq 0) may be for this
        request or for noise the board took for a frame before it, and bytes that are no
        intact frame may be noise on the way back or the reply damaged; either way it sends
        a probe: the board answers in order, so if the probe's reply comes first, the
        request (or its reply) was the frame lost."""
        rejections: list[str] = []
        damaged = False
        probe = 0
        while True:
            got = unframe(self._read_frame())
            if got is None or (got[0] == SEQ_REJECTED and got[1] == ERR):
                if got is None:
                    damaged = True
                else:
                    rejections.append(got[2].decode(errors="replace"))
                probe = probe or self._send_probe()
                continue
            seq, kind, payload = got
            if seq == self._pending:
                # the probe's reply and the rejection of its spoiler are still to come
                self._dirty = self._dirty or probe != 0
                return kind, payload
            if probe and seq == probe:
                self._lost(rejections, damaged)
            # a late reply to an earlier request: not ours

    def _lost(self, rejections: list[str], damaged: bool) -> NoReturn:
        """Raises what became of a request whose reply never came intact."""
        too_large = [r for r in rejections if "larger than" in r]
        if too_large:  # intact perhaps, but no room for it
            raise FirmwareError(f"{self._where}: {too_large[0]}; nothing was carried out")
        if damaged or not rejections:
            raise LinkError(f"{self._where}: a reply arrived corrupted (CRC mismatch or cut short); "
                            "the request may or may not have been carried out")
        raise LinkError(f"{self._where}: the board rejected a corrupted frame ({rejections[0]}); "
                        "nothing was carried out")

    def _send_probe(self) -> int:
        """Spoils and ends whatever partial frame the board holds, then sends an INFO; its
        seq. (A frame whose 0x00 was lost on the line would otherwise be completed, intact,
        by the next 0x00 and carried out late: the 0x01 0x01 make its CRC check fail.)"""
        seq = self._next_seq()
        wire = b"\1\1\0" + frame(seq, INFO, b"")  # one write: one TCP segment
        self._port.write(wire)
        self._port.flush()
        deadline = self._deadline
        self._start_waiting(len(wire))
        self._deadline = max(deadline, self._deadline)  # a long run's reply may still be due
        return seq

    def _resync(self) -> None:
        """Exchanges probes until one's reply comes back intact, dropping everything before
        it."""
        self._dirty = False
        for _ in range(2):
            self._pending = self._send_probe()
            try:
                while True:
                    got = unframe(self._read_frame())
                    if got is not None and got[0] == self._pending and got[1] == OK:
                        self._dirty = False
                        return
            except TimeoutError:
                continue
        self._dirty = True
        raise TimeoutError(f"{self._where}: the board did not answer after resynchronising twice")

    def _expect_ok(self) -> bytes:
        kind, body = self._receive()
        if kind == ERR:
            message = body.decode(errors="replace")
            library = re.match(r"\w+ error (-\d+): ", message)  # "load error -9: checksum mismatch"
            raise FirmwareError(f"{self._where}: {message}", int(library[1]) if library else None)
        if kind != OK:
            raise ConnectionError(f"{self._where}: unexpected reply kind {kind:#04x}")
        return body

    def close(self) -> None:
        """Closes the port. No STOP: the firmware keeps serving (and keeps its program),
        and a board that stopped answering would hold this up for the reply timeouts."""
        if not self._closed:
            self._closed = True
            self._port.close()

    # -- the device interface: a lost LOAD reply leaves the program unknown ---------------

    def install(self, program: bytes) -> None:
        try:
            super().install(program)
        except (LinkError, TimeoutError):
            self._program_unknown = True
            raise
        self._program_unknown = False

    def _check_program(self) -> None:
        if self._program_unknown:
            raise LinkError(f"{self._where}: the reply to the last program load was lost, so the board "
                            "may run the old program or the new one: compile (load) again")

    def run(self) -> None:
        self._check_program()
        super().run()

    def run_steps(self, n: int) -> None:
        self._check_program()
        super().run_steps(n)

    def read(self, offset: int, size: int) -> bytes:
        self._check_program()
        return super().read(offset, size)

    def write(self, offset: int, data: bytes) -> None:
        self._check_program()
        super().write(offset, data)

    # -- what the firmware leaves to the Target: names live on the Python side -----------

    def variables(self) -> list[str]:
        raise NotImplementedError(f"{self._where}: the firmware keeps no variable names (it serves LOAD, "
                                  "WRITE, READ, RUN, PERIODIC, INFO and STOP); use Target.variables() "
                                  "on the Target this device runs")

    def stream(self, n: int, names: list[str]) -> list[bytes]:
        raise NotImplementedError(f"{self._where}: the firmware does not stream variables by name; run "
                                  "steps with Target.run() or run_periodic() and read with "
                                  "Target.read_value()")

    # -- what only the firmware does ---------------------------------------------------------

    def run_periodic(self, steps: int, period: float) -> PeriodicReport:
        """Runs ``steps`` steps, one every ``period`` seconds on the board's timer (see
        :meth:`RemoteDevice.run_periodic`). Waits for the whole run: give ``?timeout=`` in
        the URL for runs longer than it."""
        self._check_program()
        return super().run_periodic(steps, period)
