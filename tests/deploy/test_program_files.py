"""Program files from Python: names, the symbol table, save / load, and refusals."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import copapy as cp
import program_layout
import pytest
from helpers import F32

HEADER = 44


def test_names_generated_names_and_shapes() -> None:
    speed = cp.value(2.5, name="speed")
    gain = cp.value(3)
    w = cp.vector([cp.value(1.0), cp.value(2.0), cp.value(4.0)])
    m = cp.tensor([[speed, 1.0], [2.0, speed * 2.0]])
    total = speed * gain
    tg = cp.Target()
    tg.compile(total, m, w.dot(w), names={"w": w})
    got = {name: (role, dtype, shape) for name, role, dtype, shape in tg.variables()}
    assert got["speed"] == ("input", "float", [])
    assert got["w"] == ("input", "float", [3])
    assert got["out0"] == ("output", "float", [])
    assert got["out1"] == ("output", "float", [2, 2])
    assert got["out2"] == ("output", "float", [])
    assert got["in0"] == ("input", "int", [])  # gain: unnamed, so generated
    tg.run()
    assert tg.read_value("out0") == float(F32(2.5) * F32(3))
    assert tg.read_value("out1") == [[2.5, 1.0], [2.0, 5.0]]
    tg.write_value("w", [1.0, -1.0, 0.5])
    tg.write_value("speed", 1.25)
    tg.run()
    assert tg.read_value("w") == [1.0, -1.0, 0.5]
    assert tg.read_value("out2") == 2.25
    assert tg.read_value("out1") == [[1.25, 1.0], [2.0, 2.5]]
    assert speed.name == "speed" and gain.name is None


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    a = cp.value(0.25, name="a")
    b = cp.value(0.87, name="b")
    c = a + b * 2.0
    tg = cp.Target()
    tg.compile(c, names={"c": c})
    path = tmp_path / "prog.cpy"
    tg.save(path)
    data = path.read_bytes()
    assert data == tg.program_bytes()
    # version 10: compact patches (pair records), and its instruction bounds in the
    # header (fewest, then most - fewest)
    assert data[:4] == b"CPPY" and struct.unpack_from("<H", data, 4)[0] == 10
    h = program_layout.header9(data)
    assert (h["fewest"], h["most - fewest"]) == (
        tg.min_instructions(), tg.max_instructions() - tg.min_instructions())
    # the checksum is zlib's CRC-32 over the six bytes before its field, then the rest
    assert struct.unpack_from("<I", data, 6)[0] == zlib.crc32(data[:6] + data[10:])

    loaded = cp.load(path)
    assert sorted(v[0] for v in loaded.variables()) == ["a", "b", "c"]
    with pytest.raises(RuntimeError, match="has not run yet"):
        loaded.read_value("c")
    loaded.run()
    assert loaded.read_value("c") == float(F32(0.25) + F32(0.87) * F32(2.0))
    loaded.write_value("a", 1.0)
    loaded.write_value("b", -3.0)
    loaded.run()
    assert loaded.read_value("c") == -5.0
    with pytest.raises(ValueError, match="output of the program"):
        loaded.write_value("c", 1.0)
    with pytest.raises(ValueError, match='no variable named "d"; its variables are: a, b, c'):
        loaded.read_value("d")
    with pytest.raises(ValueError, match="was not compiled"):
        loaded.read_value(a)


def reseal(data: bytearray) -> None:
    program_layout.reseal(data)


def edited(data: bytearray, **fields: int) -> None:
    """Replaces the file's header numbers (tests/program_layout.py's edit9)."""
    data[:] = program_layout.edit9(bytes(data), **fields)


def features(data: bytearray) -> int:
    """The feature bits the file asks for (the target's own, on every target's pass)."""
    return int(program_layout.header9(bytes(data))["features"])  # type: ignore[call-overload]


def code_start(data: bytearray) -> int:
    return int(program_layout.header9(bytes(data))["code at"][0])  # type: ignore[index]


def saved_program() -> bytes:
    x = cp.value(1.0, name="x")
    tg = cp.Target()
    tg.compile(x * 2.0)
    return tg.program_bytes()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d.__setitem__(slice(0, 4), b"ELF\x7f"), "not a copapy program"),
        (lambda d: (d.__setitem__(4, 11), reseal(d)), "format version 11 is not supported"),
        # version 10: the architecture in the low 3 bits of byte 10, the flags above
        (lambda d: (d.__setitem__(10, d[10] | 7), reseal(d)), "unknown architecture number 7"),
        (lambda d: edited(d, features=features(d) | 0x400000), r"missing 0x400000\)"),
        (lambda d: (d.__setitem__(11, d[11] | 0xD), reseal(d)), "code alignment 8192"),
        (lambda d: d.__setitem__(code_start(d) + 1, d[code_start(d) + 1] ^ 0x40),
         "checksum mismatch: file corrupted"),
        (lambda d: d.__delitem__(slice(len(d) - 3, None)), "file truncated"),
        (lambda d: d.extend(b"\0"), "bytes after the end"),
        (lambda d: edited(d, entry=1 << 20), "entry point"),
        (lambda d: edited(d, fewest=2**64 - 1, most_fewest=1),
         "instruction bounds say more instructions at fewest than at most"),
    ],
)
def test_malformed_files_are_refused_with_their_own_message(edit: object, message: str) -> None:
    data = bytearray(saved_program())
    edit(data)  # type: ignore[operator]
    with pytest.raises((ValueError, RuntimeError), match=message):
        cp.loads(bytes(data))


def test_bad_names_are_refused() -> None:
    with pytest.raises(ValueError, match="invalid variable name"):
        cp.value(1.0, name="has space")
    with pytest.raises(ValueError, match="invalid variable name"):
        cp.value(1.0, name="")
    x, y = cp.value(1.0), cp.value(2.0)
    tg = cp.Target()
    with pytest.raises(TypeError, match="str names"):
        tg.compile(x, names={1: x})  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="rectangular"):
        tg.compile(x, names={"r": [[x, y], [x]]})
    p, q = cp.value(1.0, name="same"), cp.value(2.0, name="same")
    with pytest.raises(ValueError, match="two different variables"):
        tg.compile(p + q)
    with pytest.raises(RuntimeError, match="nothing compiled yet"):
        tg.save("/nonexistent/x.cpy")


def test_a_failed_compile_keeps_the_previous_program() -> None:
    x = cp.value(1.0, name="keep")
    tg = cp.Target()
    tg.compile(x + 1.0)
    before = tg.program_bytes()
    with pytest.raises(ValueError):
        tg.compile(x, names={"bad name": x})
    assert tg.program_bytes() == before
