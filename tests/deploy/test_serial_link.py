"""The serial link (docs/firmware.md, "The serial link"): both reference firmwares under
qemu-system with their UART on a TCP socket, driven from Python with
``cp.Target(arch, runner="serial:socket://127.0.0.1:PORT")`` as a board on a real serial
port is driven with ``serial:/dev/ttyACM0``.

Programs' results are compared with NumPy float32 / int32 (refsem) and with the same
program compiled for this machine or run in its emulator. A fault-injecting TCP proxy
between the client and QEMU flips bits, drops bytes, inserts noise and cuts frames in
either direction: each fault is a clear error, nothing of a damaged frame is carried out
(a program received in part never runs), noise between frames is skipped, and the
session goes on. The firmware's actuator UART goes to a file (examples/serial_board.py's
QEMU command), so what the board's actuator sent is checked on the wire's far side.

Like test_firmware_boards.py it names its targets itself, so it runs in the main pass
only (scripts/test.sh repeats the suite under COPAPY_TEST_TARGET). Each firmware boots
once for the module (the jit test boots its own: a specialisation opens its own port).
"""

from __future__ import annotations

import math
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import copapy as cp
import numpy as np
import pytest
import refsem as R
from conftest import TARGET
from copapy._serial import FirmwareError, LinkError, SerialDevice, cobs_decode, cobs_encode, frame, unframe
from helpers import F32, ROOT
from hypothesis import given, settings
from hypothesis import strategies as st
from test_firmware_boards import firmwares  # noqa: F401 - the fixture that builds them

sys.path.insert(0, str(ROOT / "examples"))
import serial_board as example  # noqa: E402 - the plant, the loop and the QEMU command

if TARGET:
    pytest.skip("independent of COPAPY_TEST_TARGET: boots both firmwares in the main pass",
                allow_module_level=True)


@dataclass(frozen=True)
class Board:
    arch: str


BOARDS = [Board("cortex-m4"), Board("riscv32")]


# ------------------------------------------------------------------ QEMU and the fault proxy

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Qemu:
    """One firmware under qemu-system (examples/serial_board.py's command): its link UART on
    a TCP server socket (one client at a time), its actuator UART into a file."""

    def __init__(self, board: Board) -> None:
        self.port = _free_port()
        self.actuator = Path(tempfile.mkdtemp()) / "actuator.bin"
        command = example.qemu_command(board.arch, self.port, self.actuator)
        assert shutil.which(command[0]), f"{command[0]} not found: scripts/setup.sh installs QEMU"
        self.proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while True:  # QEMU listens once it has started
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=5).close()
                return
            except OSError:
                assert self.proc.poll() is None, f"QEMU exited: {self.proc.stderr.read()!r}"  # type: ignore[union-attr]
                assert time.monotonic() < deadline, "QEMU did not open its serial socket"
                time.sleep(0.05)

    def url(self, port: int | None = None, timeout: float = 10) -> str:
        return f"serial:socket://127.0.0.1:{port or self.port}?timeout={timeout:g}"

    def actuator_values(self) -> list[int]:
        """Every value the firmware's actuator UART carried so far."""
        return example.actuator_values(self.actuator)

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()
        assert self.proc.stderr is not None
        self.proc.stderr.close()
        shutil.rmtree(self.actuator.parent)


class FaultyLine:
    """A TCP proxy for one client: bytes pass frame by frame (a frame ends with 0x00), and
    the next frame in a direction ("up": to the board, "down": back) gets the fault queued
    for it: ("flip", i, bit), ("drop", i), ("cut", i) (only bytes before i pass, without
    the delimiter: the line went silent mid-frame), ("insert", i, noise) (bytes inserted
    at i) or ("between", noise) (noise and a 0x00 go first: noise between two frames, ended
    by the next frame's leading 0x00). i counts from the frame's first byte;
    i == len(frame) is its delimiter. Empty frames (a lone 0x00) pass untouched."""

    def __init__(self, board_port: int) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.faults: dict[str, deque[tuple[Any, ...]]] = {"up": deque(), "down": deque()}
        self.frames = {"up": 0, "down": 0}
        self.board_port = board_port
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        client, _ = self.listener.accept()
        board = socket.create_connection(("127.0.0.1", self.board_port))
        for s in (client, board):  # frames pass as they come, not held back by Nagle
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for a, b, way in ((client, board, "up"), (board, client, "down")):
            threading.Thread(target=self._pump, args=(a, b, way), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, way: str) -> None:
        pending = bytearray()
        try:
            while chunk := src.recv(65536):
                pending += chunk
                while (end := pending.find(b"\0")) >= 0:
                    wire = bytes(pending[:end + 1])
                    del pending[:end + 1]
                    if end > 0:
                        self.frames[way] += 1
                        if self.faults[way]:
                            wire = self._damage(wire, self.faults[way].popleft())
                    dst.sendall(wire)
        except OSError:
            pass
        finally:
            for s in (src, dst):  # shutdown wakes the other pump and lets QEMU take a new client
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()

    @staticmethod
    def _damage(wire: bytes, fault: tuple[Any, ...]) -> bytes:
        if fault[0] == "between":
            return fault[1] + b"\0" + wire
        kind, at = fault[0], min(fault[1], len(wire) - 1)
        if kind == "insert":
            return wire[:at] + fault[2] + wire[at:]
        if kind == "flip":
            return wire[:at] + bytes([wire[at] ^ (1 << fault[2])]) + wire[at + 1:]
        if kind == "drop":
            return wire[:at] + wire[at + 1:]
        return wire[:at]  # cut

    def add(self, way: str, *fault: Any) -> None:
        self.faults[way].append(fault)


@pytest.fixture(scope="module", params=BOARDS, ids=[b.arch for b in BOARDS])
def qemu(request: pytest.FixtureRequest) -> Iterator[tuple[Board, Qemu]]:
    request.getfixturevalue("firmwares")
    q = Qemu(request.param)
    yield request.param, q
    q.close()


@pytest.fixture
def line(qemu: tuple[Board, Qemu]) -> Iterator[tuple[Board, FaultyLine, SerialDevice]]:
    """A connection through the fault proxy (short timeout: a cut frame is a timeout; the
    board answers a small request within milliseconds)."""
    board, q = qemu
    proxy = FaultyLine(q.port)
    device = SerialDevice.open(q.url(proxy.port, timeout=1.5)[len("serial:"):])
    yield board, proxy, device
    device.close()
    proxy.listener.close()


# ------------------------------------------------------------------ programs and references

FLOATS = [0.0, -0.0, 1.0, -7.5, 0.5, 3.0, math.inf, -math.inf, math.nan, float(F32(1e30))]
INTS = [0, 1, -1, 7, -7, 33, R.INT_MAX, R.INT_MIN]


def _operators() -> tuple[list[Any], list[tuple[str, Any, str]]]:
    """Every float and int operator over all pairs of edge values (as arrays: one kernel
    per operator keeps the program small enough for a UART); the traced results and the
    NumPy references ``(label, value, dtype)``, flattened in the same order."""
    results = []
    want = []
    for ta, ea, ops in (("float", FLOATS, R.ARITH + R.COMPARE), ("int", INTS, R.BINARY_OPS)):
        pairs = [(a, b) for a in ea for b in ea]
        xs, ys = cp.array([a for a, _ in pairs]), cp.array([b for _, b in pairs])
        for op in ops:
            results.append(R.PY_OP[op](xs, ys))
            want += [(f"{a!r} {R.SYMBOL[op]} {b!r} ({ta})", *R.binop(op, a, ta, b, ta)) for a, b in pairs]
    return results, want


def _bits(x: Any) -> Any:
    if isinstance(x, float):
        return "nan" if math.isnan(x) else struct.pack("<f", x)
    return x


def test_operators_over_the_link_match_numpy_and_this_machine(qemu: tuple[Board, Qemu]) -> None:
    board, q = qemu
    got = []
    for target in (cp.Target(board.arch, runner=q.url()), cp.Target("native")):
        results, want = _operators()
        target.compile(*results)
        target.run()
        got.append([x for r in results for x in target.read_value(r)])
    fw, host = got
    bad = [f"{label} = {g!r}, NumPy {w!r}" for g, (label, w, rt) in zip(fw, want, strict=True)
           if not R.matches(g, w, rt)]
    assert not bad, R.describe_failures(bad)
    assert [_bits(x) for x in fw] == [_bits(x) for x in host]


def test_math_arrays_and_state_over_the_link(qemu: tuple[Board, Qemu]) -> None:
    board, q = qemu
    xs = [0.0, 0.5, 1.0, 2.0, 3.14159, -10.5, 100.0, 1e-20]
    tg = cp.Target(board.arch, runner=q.url())
    host = cp.Target("native")
    got = []
    for target in (tg, host):
        vals = [cp.value(v) for v in xs]
        x = cp.array(vals)
        acc = cp.value(0.0, name="acc")
        k = cp.value(0, name="k")
        y = cp.sqrt(x * x + 1.0)
        s = cp.sin(vals[3]) + cp.cos(vals[4])
        target.compile(y, s, names={"y": y}, updates={acc: acc + vals[1] * 3.0, k: k + 7})
        for _ in range(5):
            target.run()
        target.write_value(vals[1], 0.25)
        for _ in range(10):
            target.run()
        got.append((list(target.read_value(y)), target.read_value(s), target.read_value(acc),
                    target.read_value(k)))
    assert got[0][:2] == got[1][:2]
    xf = np.array(xs, dtype=F32)
    xf[1] = F32(0.25)
    assert got[0][0] == list(np.sqrt(xf * xf + F32(1.0)))
    acc_ref = F32(0.0)
    for step in range(15):
        acc_ref = F32(acc_ref + (F32(0.5) if step < 5 else F32(0.25)) * F32(3.0))
    assert got[0][2] == acc_ref == got[1][2]
    assert got[0][3] == 15 * 7 == got[1][3]
    assert abs(got[0][1] - (math.sin(2.0) + math.cos(3.14159))) < 1e-5


def _api_session(tg: cp.Target, load: Any) -> list[Any]:
    """Every part of the Target API a program on a device uses, in one session: compile
    with names and updates, run, read and write by value, by name, in containers and
    arrays, variables(), imports(), the instruction bounds, and the saved file loaded
    again (``load(bytes)``) and run by name."""
    a = cp.value(1.5, name="a")
    k = cp.value(3, name="k")
    xs = cp.array([1.0, 2.0, 3.0, 4.0])
    v = cp.vector([cp.value(0.5), cp.value(-1.0), cp.value(2.0)])
    acc = cp.value(0.0, name="acc")
    y = xs * a + 1.0
    m = v.magnitude() * a
    big = k > 4
    tg.compile(y, m, big, names={"y": y, "m": m, "big": big}, updates={acc: acc + a, k: k + 1})
    seen: list[Any] = [tg.variables(), tg.imports(), tg.max_instructions(), tg.program_bytes()]
    for step in range(3):
        tg.run()
        seen.append(tg.read_value({"y": y, "m": m, "big": big, "acc": acc, "k": k}))
        tg.write_value(a, 0.25 * step - 1.0)
    tg.write_value("a", 2.0)
    tg.write_value(xs, np.array([-1.0, 0.5, 8.0, 1e30], dtype=F32))
    tg.write_value([v], [[3.0, 4.0, 12.0]])
    tg.run()
    seen += [tg.read_value([y, m, big, acc, k]), tg.read_value("y"), tg.read_value(("acc", "k")),
             list(tg.read_value(v)), tg.read_value(xs)]
    again = load(tg.program_bytes())
    again.write_value("a", -3.0)
    again.run()
    seen += [again.read_value("y"), again.read_value("acc"), again.read_value("k"), again.variables()]
    return seen


def test_the_target_api_over_the_link_matches_the_host(qemu: tuple[Board, Qemu]) -> None:
    """The same session over the link and in this board's emulator (cp.Target(arch)): the
    same results, and the same program files; the values checked against NumPy."""
    board, q = qemu
    device = SerialDevice.open(q.url()[len("serial:"):])  # QEMU's socket takes one client
    try:
        over_link = _api_session(cp.Target(board.arch, runner=device), lambda b: cp.loads(b, runner=device))
    finally:
        device.close()
    emulated = _api_session(cp.Target(board.arch), cp.loads)
    assert [_bits_tree(x) for x in over_link] == [_bits_tree(x) for x in emulated]
    y1, m1, big1, acc1, k1 = over_link[4]  # read by name
    assert y1 == list(np.array([1.0, 2.0, 3.0, 4.0], dtype=F32) * F32(1.5) + F32(1.0))
    assert m1 == np.sqrt(F32(5.25)) * F32(1.5)
    assert (big1, acc1, k1) == (False, 1.5, 4)
    xs = np.array([-1.0, 0.5, 8.0, 1e30], dtype=F32)
    assert over_link[7] == [list(xs * F32(2.0) + F32(1.0)), F32(13.0) * F32(2.0), True, 1.75, 7]
    assert over_link[12:15] == [list(xs * F32(-3.0) + F32(1.0)), 1.75 - 3.0, 8]


def _bits_tree(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _bits_tree(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_bits_tree(v) for v in x]
    return _bits(x)


def test_jit_over_the_link(qemu: tuple[Board, Qemu]) -> None:
    board, _ = qemu
    own = Qemu(board)  # a jit specialisation opens its own connection: a board of its own
    try:
        @cp.jit(runner=own.url())
        def scaled(x: Any, y: Any) -> Any:
            return x * 2.5 - y / 3.0

        for x, y in ((1.0, 2.0), (-7.25, 0.5), (1e30, -3.0)):
            assert scaled(x, y) == F32(F32(x) * F32(2.5)) - F32(F32(y) / F32(3.0))
    finally:
        own.close()


def test_periodic_run_reports_its_lateness(qemu: tuple[Board, Qemu]) -> None:
    board, q = qemu
    device = SerialDevice.open(q.url()[len("serial:"):])
    try:
        tg = cp.Target(board.arch, runner=device)
        acc = cp.value(0, name="acc")
        tg.compile(acc, updates={acc: acc + 3})
        report = device.run_periodic(40, 0.0005)
        assert tg.read_value(acc) == 40 * 3
        assert report.steps == 40
        device.run_steps(1000)  # RUN N: one request, N steps on the board
        assert tg.read_value(acc) == 1040 * 3
        assert 0 <= report.overruns <= report.skipped
        assert 0 <= report.late_mean <= report.late_max
        with pytest.raises(ValueError, match="period"):
            device.run_periodic(1, 0.0)
    finally:
        device.close()


# ------------------------------------------------------------------ the wire under faults

def _load_counter(device: SerialDevice, arch: str, step: int) -> tuple[cp.Target, Any]:
    tg = cp.Target(arch, runner=device)
    n = cp.value(0, name="n")
    tg.compile(n, updates={n: n + step})
    return tg, n


def test_a_corrupted_request_is_refused_and_the_session_goes_on(
        line: tuple[Board, FaultyLine, SerialDevice]) -> None:
    board, proxy, device = line
    tg, n = _load_counter(device, board.arch, 1)
    tg.run()
    for fault in (("flip", 5, 3), ("drop", 4), ("flip", 2, 0)):
        proxy.add("up", *fault)
        with pytest.raises(LinkError, match="rejected a corrupted frame.*nothing was carried out"):
            tg.write_value(n, 1000)
        assert tg.read_value(n) == 1, "nothing of the damaged write was carried out"
    proxy.add("up", "flip", 1, 6)
    with pytest.raises(LinkError):
        tg.run()
    tg.run()
    assert tg.read_value(n) == 2, "the damaged RUN did not run"


def test_a_program_received_in_part_never_runs(line: tuple[Board, FaultyLine, SerialDevice]) -> None:
    board, proxy, device = line
    tg, n = _load_counter(device, board.arch, 1)
    tg.run()
    # a new program (adds 100 per step) cut, damaged or shortened on the way: refused
    # (the program file is about 110 bytes: every fault falls inside its frame)
    for fault, error in ((("cut", 90), TimeoutError), (("flip", 60, 5), LinkError),
                         (("drop", 45), LinkError), (("cut", 20), TimeoutError)):
        proxy.add("up", *fault)
        other = cp.Target(board.arch, runner=device)
        m = cp.value(0, name="m")
        with pytest.raises(error):
            other.compile(m, updates={m: m + 100})
        # the board does not know whether the load happened only when the reply was lost;
        # here the request itself was damaged: compile again on the old target to go on
        tg2, n2 = _load_counter(device, board.arch, 1)
        tg2.run()
        tg2.run()
        assert tg2.read_value(n2) == 2, f"{fault}: the program that runs is the one loaded intact"


def test_a_damaged_reply_is_an_error_and_the_session_goes_on(
        line: tuple[Board, FaultyLine, SerialDevice]) -> None:
    board, proxy, device = line
    tg, n = _load_counter(device, board.arch, 5)
    tg.run()
    proxy.add("down", "flip", 3, 1)
    with pytest.raises(LinkError, match="reply arrived corrupted"):
        tg.read_value(n)
    assert tg.read_value(n) == 5
    proxy.add("down", "cut", 2)
    with pytest.raises(TimeoutError, match="no reply"):
        tg.read_value(n)
    assert tg.read_value(n) == 5
    # a lost reply to a LOAD leaves the program unknown: said, until the next load
    proxy.add("down", "flip", 1, 0)
    other = cp.Target(board.arch, runner=device)
    m = cp.value(0, name="m")
    with pytest.raises(LinkError, match="reply arrived corrupted"):
        other.compile(m, updates={m: m + 100})
    with pytest.raises(LinkError, match="compile .load. again"):
        tg.run()
    tg, n = _load_counter(device, board.arch, 5)
    tg.run()
    assert tg.read_value(n) == 5


def test_any_fault_on_a_write_leaves_the_old_or_the_new_value(
        line: tuple[Board, FaultyLine, SerialDevice]) -> None:
    """One session through every example: whatever the fault, it goes on."""
    board, proxy, device = line
    tg, n = _load_counter(device, board.arch, 1)

    @settings(max_examples=12, deadline=None)
    @given(way=st.sampled_from(["up", "down"]), kind=st.sampled_from(["flip", "drop", "cut", "insert"]),
           at=st.integers(0, 40), bit=st.integers(0, 7), noise=st.binary(min_size=1, max_size=8),
           new=st.integers(-1000, 1000))
    def one_fault(way: str, kind: str, at: int, bit: int, noise: bytes, new: int) -> None:
        old = tg.read_value(n)
        proxy.add(way, kind, at, noise if kind == "insert" else bit)
        try:
            tg.write_value(n, new)
            failed = False
        except (LinkError, TimeoutError):
            failed = True
        proxy.faults[way].clear()
        after = tg.read_value(n)
        if not failed:
            assert after == new
        elif way == "up":
            assert after == old, "a write damaged on its way was not carried out"
        else:
            assert after == new, "the write arrived intact; only its reply was damaged"

    one_fault()


def test_noise_between_frames_is_skipped(line: tuple[Board, FaultyLine, SerialDevice]) -> None:
    """Noise on the line between frames, either way, costs a probe, never a request: the
    board rejects the noise as a frame of its own, and both ends go on at the next 0x00."""
    board, proxy, device = line
    tg, n = _load_counter(device, board.arch, 1)

    @settings(max_examples=16, deadline=None)
    @given(way=st.sampled_from(["up", "down"]), noise=st.binary(min_size=1, max_size=64),
           new=st.integers(-1000, 1000))
    def noisy_write(way: str, noise: bytes, new: int) -> None:
        proxy.add(way, "between", noise)
        tg.write_value(n, new)
        assert not proxy.faults[way], "the noise went out"
        assert tg.read_value(n) == new
        tg.run()
        assert tg.read_value(n) == new + 1

    noisy_write()


@pytest.mark.parametrize("qemu", BOARDS[:1], ids=[BOARDS[0].arch], indirect=True)
def test_an_oversize_program_is_refused_and_the_old_one_goes_on(qemu: tuple[Board, Qemu]) -> None:
    """A program file larger than the firmware's 64 KiB receive buffer: a clear error, and
    the program loaded before runs on; so does a program for another architecture. (One
    board: the receive path is link.c's on both, and the 66 KB take QEMU's UART seconds.)"""
    board, q = qemu
    device = SerialDevice.open(q.url(timeout=20)[len("serial:"):])
    try:
        tg, n = _load_counter(device, board.arch, 3)
        tg.run()
        table = cp.array(np.arange(10_600, dtype=F32))  # about 6 bytes of file per element
        here = cp.Target(board.arch)
        here.compile(table + 1.0)
        assert 64 * 1024 < len(here.program_bytes()) < 70 * 1024
        with pytest.raises(FirmwareError, match="larger than the firmware's buffer.*nothing was carried out"):
            cp.Target(board.arch, runner=device).compile(table + 1.0)
        with pytest.raises(FirmwareError) as e:
            device.install(_other_arch_program(board))
        assert e.value.code == -5
        tg.run()
        assert tg.read_value(n) == 6
    finally:
        device.close()


# ------------------------------------------------------------------ the board's imports

KP, KI, DT = F32(1.5), F32(4.0), F32(0.05)


def _pi_reference(steps: int) -> tuple[list[tuple[float, float]], list[int]]:
    """The PI loop of examples/serial_board.py in NumPy float32, with the plant of
    firmware/common/io.c (integer millivolts, C's truncating division): (measured, duty)
    after each step, and the value the actuator sends in each."""
    register, y_mv, integral, rows, sent = 0, 0, F32(0.0), [], []
    for _ in range(steps):
        y_mv += int((register - y_mv) / 8)
        measured = F32(y_mv) / F32(1000.0)
        error = F32(1.0) - measured
        integral = integral + error * DT
        duty = np.minimum(np.maximum(KP * error + KI * integral, F32(0.0)), F32(5.0))
        scaled = duty * F32(1000.0)
        register = 0 if not scaled > 0 else min(int(scaled), 1_000_000)
        rows.append((float(measured), float(duty)))
        sent.append(register)
    return rows, sent


def test_pi_loop_with_the_boards_sensor_and_actuator_matches_the_host(qemu: tuple[Board, Qemu]) -> None:
    """The firmware's actuator sends on a UART of its own (QEMU writes its bytes into a
    file read here); the same loop on this machine with Python imports
    (examples/serial_board.py's Plant) and NumPy agree with what the board computed and
    with what its actuator UART carried."""
    board, q = qemu
    already = len(q.actuator_values())
    on_board = example.closed_loop(cp.Target(board.arch, runner=q.url()))
    sent = q.actuator_values()[already:]
    plant = example.Plant()
    on_host = example.closed_loop(cp.Target("native", imports={"adc_read": plant.adc_read,
                                                               "pwm_write": plant.pwm_write}))
    reference, reference_sent = _pi_reference(example.STEPS)
    assert on_board == reference == on_host
    assert sent == reference_sent == plant.written
    assert on_board[-1][0] != 0.0, "the actuator drove the plant"
    # a periodic run drives the actuator from the board's timer: one value per step
    device = SerialDevice.open(q.url()[len("serial:"):])
    try:
        example.closed_loop(cp.Target(board.arch, runner=device), steps=0)
        already = len(q.actuator_values())
        device.run_periodic(example.STEPS, 0.0005)
        assert q.actuator_values()[already:] == reference_sent
    finally:
        device.close()


def test_the_board_timer_import_counts_up_and_missing_imports_are_named(qemu: tuple[Board, Qemu]) -> None:
    board, q = qemu
    device = SerialDevice.open(q.url()[len("serial:"):])
    try:
        tg = cp.Target(board.arch, runner=device)
        ticks = cp.extern("timer_ticks", returns=int)
        tg.compile(ticks)
        seen = []
        for _ in range(5):
            tg.run()
            seen.append(tg.read_value(ticks))
        assert all(b - a > 0 for a, b in zip(seen, seen[1:], strict=False)), seen
        for call, code in ((lambda: cp.extern("no_such_sensor", 1, returns=float), -20),
                           (lambda: cp.extern("adc_read", 1.5, returns=float), -21)):
            with pytest.raises(FirmwareError) as e:
                cp.Target(board.arch, runner=device).compile(call())
            assert e.value.code == code
            assert str(e.value).endswith(": no_such_sensor" if code == -20 else ": adc_read"), e.value
        tg.run()  # the refused loads left the timer program in place
        assert tg.read_value(ticks) > seen[-1]
    finally:
        device.close()


@pytest.mark.usefixtures("firmwares")
def test_the_serial_board_example() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "serial_board.py"), "riscv32"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    reference, sent = _pi_reference(60)
    assert lines[-2:] == [f"the actuator UART carried the host's 60 values, last {sent[-1]}",
                          "board and host agree bit for bit"]
    for line, step in zip(lines[:-2], range(9, 60, 10), strict=True):
        assert line == f"step {step + 1}: measured {reference[step][0]!r} duty {reference[step][1]!r}"


# ------------------------------------------------------------------ refusals and bad input

def test_the_firmware_refuses_bad_requests_with_clear_errors(qemu: tuple[Board, Qemu]) -> None:
    board, q = qemu
    device = SerialDevice.open(q.url()[len("serial:"):])
    try:
        assert device.arch == board.arch
        good = cp.Target(board.arch)
        v = cp.value(1.0)
        good.compile(v * 2.0)
        program = good.program_bytes()
        with pytest.raises(FirmwareError) as e:
            device.install(_other_arch_program(board))
        assert e.value.code == -5 and "another architecture" in str(e.value)
        corrupted = bytearray(program)
        corrupted[len(corrupted) // 2] ^= 0x10
        with pytest.raises(FirmwareError) as e:
            device.install(bytes(corrupted))
        assert e.value.code == -9 and "checksum" in str(e.value)
        device.install(program)
        with pytest.raises(FirmwareError, match="outside the program's data memory"):
            device.read(0, 1 << 20)
        with pytest.raises(FirmwareError, match="unknown request kind"):
            device._call(0x09)  # VARS: names live with the Target
        with pytest.raises(NotImplementedError, match="Target.variables"):
            device.variables()
        with pytest.raises(NotImplementedError, match="read_value"):
            device.stream(1, ["a"])
        device.run()
    finally:
        device.close()


def _other_arch_program(board: Board) -> bytes:
    other = cp.Target("riscv32" if board.arch == "cortex-m4" else "cortex-m4")
    other.compile(cp.value(1.0) + 1.0)
    return other.program_bytes()


def test_bad_urls_and_silent_ports_are_clear_errors() -> None:
    with pytest.raises(ConnectionError, match="cannot open the port"):
        cp.Target("cortex-m4", runner="serial:/dev/no-such-tty-for-copapy")
    with pytest.raises(ValueError, match="baudrate"):
        cp.Target("cortex-m4", runner="serial:socket://127.0.0.1:9?baudrate=fast")
    with pytest.raises(ValueError, match="name the port"):
        cp.Target("cortex-m4", runner="serial:")
    with socket.create_server(("127.0.0.1", 0)) as silent:  # accepts, never answers
        port = silent.getsockname()[1]
        with pytest.raises(TimeoutError, match="no reply within 0.5 s|did not answer"):
            cp.Target("cortex-m4", runner=f"serial:socket://127.0.0.1:{port}?timeout=0.5")


@given(st.binary(max_size=600))
def test_cobs_round_trips_and_never_holds_a_zero(data: bytes) -> None:
    encoded = cobs_encode(data)
    assert 0 not in encoded
    assert cobs_decode(encoded) == data
    wire = frame(7, 0x80, data)
    assert unframe(wire[:-1]) == (7, 0x80, data)
    damaged = bytearray(wire[:-1])
    damaged[len(damaged) // 2] ^= 0x04
    assert unframe(bytes(damaged)) is None
