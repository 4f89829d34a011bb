"""Byte arrays in program files: named, listed, saved, loaded and driven through
``copapy-run`` (command line, line protocol, frame protocol on loopback), against NumPy
uint8 references. Format version 3 is written only for programs with a byte variable and
no instruction bounds; copapy's own files carry bounds, so they are version 4
(docs/program-format.md), which holds byte variables too.

The runner executes this machine's code, so the copapy-run tests use the native
``Target`` even when the suite runs for a foreign target (tests/conftest.py).
"""

from __future__ import annotations

import struct
import subprocess
from collections.abc import Iterator
from pathlib import Path

import copapy as cp
import numpy as np
import program_layout
import pytest
from copapy._core import Target
from copapy._remote import ERR, GET, LOAD, OK, RUN, SET, VARS, runner_command
from test_remote import authenticated_socket, frame, read_frame, start_runner

BYTES = [0, 1, 2, 127, 128, 200, 254, 255, 17]


def reference(pix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``to_bytes(pix * 2)`` and ``to_bytes(pix - 100)`` in NumPy: int32 arithmetic,
    then saturated to uint8."""
    wide = pix.astype(np.int32)
    return np.clip(wide * 2, 0, 255).astype(np.uint8), np.clip(wide - 100, 0, 255).astype(np.uint8)


def byte_program(tg: cp.Target | Target) -> None:
    pix = cp.array(BYTES, "byte")
    grid = cp.array([BYTES[:3], BYTES[3:6]], "byte")
    tg.compile(
        cp.to_bytes(pix * 2),
        names={"pix": pix, "grid": grid, "down": cp.to_bytes(pix - 100), "total": pix.sum()},
    )


def saved(tmp_path: Path) -> Path:
    tg = Target()
    byte_program(tg)
    path = tmp_path / "bytes.cpy"
    tg.save(path)
    return path


def reseal(data: bytearray) -> None:
    program_layout.reseal(data)


def test_byte_arrays_are_named_with_the_byte_dtype() -> None:
    tg = cp.Target()
    byte_program(tg)
    got = {name: (role, dtype, shape) for name, role, dtype, shape in tg.variables()}
    assert got["pix"] == ("input", "byte", [9])
    assert got["grid"] == ("input", "byte", [2, 3])
    assert got["down"] == ("output", "byte", [9])
    assert got["out0"] == ("output", "byte", [9])
    assert got["total"] == ("output", "int", [])
    tg.run()
    x = np.array(BYTES, dtype=np.uint8)
    twice, down = reference(x)
    assert tg.read_value("pix") == BYTES
    assert tg.read_value("grid") == [BYTES[:3], BYTES[3:6]]
    assert tg.read_value("out0") == twice.tolist()
    assert tg.read_value("down") == down.tolist()
    assert tg.read_value("total") == int(x.astype(np.int64).sum())


def test_writing_a_byte_variable_by_name_checks_the_range_and_changes_nothing_on_error() -> None:
    tg = cp.Target()
    byte_program(tg)
    new = np.array([255, 3, 100, 101, 99, 0, 128, 129, 64], dtype=np.uint8)
    tg.write_value("pix", new)
    tg.write_value("grid", [[9, 8, 7], [6, 5, 4]])
    tg.run()
    twice, down = reference(new)
    assert tg.read_value("out0") == twice.tolist()
    assert tg.read_value("down") == down.tolist()
    assert tg.read_value("grid") == [[9, 8, 7], [6, 5, 4]]
    for bad in ([0] * 8 + [256], [-1] + [0] * 8):
        with pytest.raises(ValueError, match=r'-?\d+ does not fit the byte variable "pix" \(from 0 to 255\)'):
            tg.write_value("pix", bad)
    with pytest.raises(ValueError, match="has shape"):
        tg.write_value("pix", [1, 2])
    with pytest.raises(TypeError, match="cannot write float"):
        tg.write_value("pix", [1.5] * 9)
    with pytest.raises(ValueError, match="output of the program"):
        tg.write_value("down", [0] * 9)
    assert tg.read_value("pix") == new.tolist()


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    path = saved(tmp_path)
    data = path.read_bytes()
    assert struct.unpack_from("<H", data, 4)[0] == 10
    loaded = cp.load(path)
    assert ("pix", "input", "byte", [9]) in loaded.variables()
    assert loaded.read_value("pix") == BYTES
    rng = np.random.default_rng(11)
    for _ in range(3):
        x = rng.integers(0, 256, size=9).astype(np.uint8)
        loaded.write_value("pix", x)
        loaded.run()
        twice, down = reference(x)
        assert loaded.read_value("out0") == twice.tolist()
        assert loaded.read_value("down") == down.tolist()
        assert loaded.read_value("total") == int(x.astype(np.int64).sum())
    # without its 20 bytes of bounds, the same program is the version 3 file older
    # runners read
    old = program_layout.as_version(data, 3)
    assert cp.loads(old).read_value("pix") == BYTES


def symbol_record(data: bytes, name: bytes) -> int:
    """Offset of the byte holding the dtype of the symbol record named ``name``."""
    for sym in program_layout.symbols(data):
        if sym["name"] == name:
            return int(sym["dtype at"])  # type: ignore[call-overload]
    raise AssertionError(f"no symbol {name!r}")


def test_damaged_byte_files_are_refused_with_their_own_message(tmp_path: Path) -> None:
    good = saved(tmp_path).read_bytes()
    cases: list[tuple[bytearray, str]] = []
    as_v2 = bytearray(program_layout.as_version(good, 3))  # records, no bounds, as versions 2 and 3
    as_v2[4] = 2
    reseal(as_v2)
    cases.append((as_v2, "has a byte variable, which needs version 3"))
    # version 9 has two bits for the dtype, all four known; a version 4 file has a byte
    v4 = program_layout.as_version(good, 4)
    unknown = bytearray(v4)
    unknown[symbol_record(v4, b"pix")] = 4
    reseal(unknown)
    cases.append((unknown, "unknown type 4"))
    cases.append((bytearray(good[:-2]), "file truncated"))
    flipped = bytearray(good)
    flipped[symbol_record(good, b"pix")] ^= 0x04
    cases.append((flipped, "checksum mismatch"))
    for data, message in cases:
        with pytest.raises(ValueError, match=message):
            cp.loads(bytes(data))


@pytest.fixture(scope="module")
def runner_port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """A TCP runner with its own token, which clients find through the environment."""
    token = tmp_path_factory.mktemp("token") / "run.token"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("COPAPY_RUN_TOKEN_FILE", str(token))
        proc, port = start_runner("--token-file", str(token))
        yield port
        proc.kill()
        proc.wait()


def named(name: str) -> bytes:
    return struct.pack("<H", len(name)) + name.encode()


def test_copapy_run_frames_set_and_get_bytes_as_int32(tmp_path: Path, runner_port: int) -> None:
    program = saved(tmp_path).read_bytes()
    x = np.array([250, 0, 1, 60, 99, 100, 101, 128, 7], dtype=np.uint8)
    twice, down = reference(x)
    with authenticated_socket(runner_port) as s:

        def call(kind: int, payload: bytes = b"") -> tuple[int, bytes]:
            s.sendall(frame(kind, payload))
            return read_frame(s)

        assert call(LOAD, program) == (OK, b"")
        kind, listing = call(VARS)
        assert kind == OK and "pix input byte 9" in listing.decode().splitlines()
        assert call(SET, named("pix") + x.astype("<i4").tobytes()) == (OK, b"")
        assert call(RUN, struct.pack("<I", 1)) == (OK, b"")
        for name, want in (("out0", twice), ("down", down), ("pix", x)):
            kind, body = call(GET, named(name))
            assert kind == OK and np.frombuffer(body, "<i4").tolist() == want.tolist()
        kind, body = call(SET, named("pix") + np.array([1] * 8 + [256], "<i4").tobytes())
        assert kind == ERR and b"element 8 is 256, outside 0 to 255" in body
        kind, body = call(SET, named("pix") + np.array([-3] + [1] * 8, "<i4").tobytes())
        assert kind == ERR and b"element 0 is -3" in body
        kind, body = call(GET, named("pix"))
        assert kind == OK and np.frombuffer(body, "<i4").tolist() == x.tolist()


def test_copapy_run_command_line_and_line_protocol(tmp_path: Path) -> None:
    path = saved(tmp_path)
    x = np.array([10, 20, 30, 140, 150, 160, 200, 255, 0], dtype=np.uint8)
    twice, down = reference(x)
    values = ",".join(str(v) for v in x.tolist())
    out = subprocess.run(
        [*runner_command(), str(path), "--set", f"pix={values}", "--print", "out0,down,grid"],
        capture_output=True, text=True, check=True,
    ).stdout
    want = ",".join(map(str, twice.tolist()))
    want_down = ",".join(map(str, down.tolist()))
    grid = ",".join(map(str, BYTES[:6]))
    assert out.strip() == f"step=0 out0={want} down={want_down} grid={grid}"
    bad = subprocess.run([*runner_command(), str(path), "--set", "pix=" + ",".join(["300"] * 9)],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "element 0 is 300, outside 0 to 255" in bad.stderr
    lines = "\n".join([f"set pix {values.replace(',', ' ')}", "run", "get out0", "set grid 1 2 3 4 5 256",
                       "get grid", "vars", "quit"]) + "\n"
    replies = subprocess.run([*runner_command(), str(path), "--stdio"], input=lines, capture_output=True,
                             text=True, check=True).stdout.splitlines()
    assert replies[:3] == ["ok", "ok", "ok " + " ".join(map(str, twice.tolist()))]
    assert replies[3].startswith("err ") and "element 5 is 256" in replies[3]
    assert replies[4] == "ok " + " ".join(map(str, BYTES[:6]))
    assert "pix:input:byte:9" in replies[5].split() and "grid:input:byte:2x3" in replies[5].split()


def test_a_target_on_a_tcp_runner_reads_and_writes_byte_arrays(runner_port: int) -> None:
    pix = cp.array(BYTES, "byte")
    out = cp.to_bytes(pix * 2)
    tg = Target(runner=f"tcp://127.0.0.1:{runner_port}")
    tg.compile(out, names={"pix": pix})
    tg.run()
    x = np.array(BYTES, dtype=np.uint8)
    assert tg.read_value(out) == reference(x)[0].tolist()
    new = x[::-1].copy()
    tg.write_value("pix", new)
    tg.run()
    assert tg.read_value("out0") == reference(new)[0].tolist()
    assert out.to_numpy(tg).tolist() == reference(new)[0].tolist()
    tg.write_value(pix, x)
    with pytest.raises(ValueError, match="does not fit the byte variable"):
        tg.write_value("pix", [256] * 9)
    tg.run()
    assert tg.read_value("out0") == reference(x)[0].tolist()
