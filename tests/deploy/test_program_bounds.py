"""Program files carry their instruction bounds (format version 4 on, docs/program-format.md).

The files are edited here with the layout the format document gives (tests/program_layout.py:
version 9's header numbers; in the version 4 form of the same program the 20-byte bounds
section last, flags u32, fewest u64, most u64), using zlib's CRC, so the reader is checked
against the document rather than against itself.
"""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import copapy as cp
import numpy as np
import program_layout
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from standalone import standalone_runner

BOUNDS = 20
U64 = st.integers(0, 2**64 - 1)


def reseal(b: bytearray) -> bytes:
    return program_layout.reseal(b)


def with_bounds(file: bytes, flags: int, fewest: int, most: int) -> bytes:
    """The program as a version 4 file (whose bounds section has room for anything) with
    these bounds."""
    b = bytearray(program_layout.as_version(file, 4))
    b[-BOUNDS:] = struct.pack("<IQQ", flags, fewest, most)
    return reseal(b)


def without_bounds(file: bytes, version: int) -> bytes:
    """The same program as a runner before version 4 wrote it."""
    return program_layout.as_version(file, version)


def compiled(dtype: str | None = None) -> tuple[cp.Target, bytes]:
    x = cp.value(1.25, name="x")
    outs = {"y": x * 2.0 + 1.0}
    if dtype == "byte":
        outs["b"] = cp.array([1, 2, 3], dtype="byte")
    tg = cp.Target()
    tg.compile(*outs.values(), names=outs)
    return tg, bytes(tg.program_bytes())


def test_saved_bounds_load_back(tmp_path: Path) -> None:
    tg, file = compiled()
    assert struct.unpack_from("<H", file, 4)[0] == 10
    h = program_layout.header9(file)
    fewest, most = int(h["fewest"]), int(h["fewest"]) + int(h["most - fewest"])  # type: ignore[call-overload]
    assert (int(h["flags"]) & 2, fewest, most) == (0, tg.min_instructions(), tg.max_instructions())  # type: ignore[call-overload]
    path = tmp_path / "p.cpy"
    tg.save(str(path))
    loaded = cp.load(str(path))
    assert (loaded.min_instructions(), loaded.max_instructions()) == (fewest, most)
    assert bytes(loaded.program_bytes(initial=True)) == path.read_bytes()


@pytest.mark.parametrize("dtype,version", [(None, 2), ("byte", 3)])
def test_files_from_before_version_4_still_load_and_run(dtype: str | None, version: int,
                                                        tmp_path: Path) -> None:
    _, file = compiled(dtype)
    old = without_bounds(file, version)
    loaded = cp.loads(old)
    assert any(v[2] == "byte" for v in loaded.variables()) == (dtype == "byte")
    loaded.write_value("x", 3.5)
    loaded.run()
    assert np.float32(loaded.read_value("y")) == np.float32(3.5) * np.float32(2.0) + np.float32(1.0)
    with pytest.raises(ValueError, match="does not record its instruction bounds"):
        loaded.max_instructions()
    path = tmp_path / "old.cpy"
    path.write_bytes(old)
    done = subprocess.run([standalone_runner(), str(path), "--info"], capture_output=True,
                          text=True, check=True)
    assert "instructions per run not recorded (the file does not carry them)" in done.stdout


@pytest.mark.parametrize("dtype", [None, "byte"])
def test_version_4_files_still_load_and_run(dtype: str | None) -> None:
    """Version 4: bounds, and 16-byte patch records instead of the compact section."""
    tg, file = compiled(dtype)
    old = program_layout.as_version(file, 4)
    assert len(old) > len(file)
    loaded = cp.loads(old)
    assert (loaded.min_instructions(), loaded.max_instructions()) == (tg.min_instructions(),
                                                                       tg.max_instructions())
    loaded.write_value("x", 3.5)
    loaded.run()
    assert np.float32(loaded.read_value("y")) == np.float32(3.5) * np.float32(2.0) + np.float32(1.0)


def test_relabelled_versions_are_refused() -> None:
    _, file = compiled()
    b = bytearray(program_layout.as_version(file, 4))
    b[4:6] = struct.pack("<H", 2)  # bounds present, version says they are not
    with pytest.raises(ValueError, match="bytes after the end"):
        cp.loads(reseal(b))
    with pytest.raises(ValueError, match="checksum"):
        cp.loads(file[:-1] + bytes([file[-1] ^ 1]))  # a flipped count bit, not resealed


@settings(max_examples=60, deadline=None)
@given(flags=st.sampled_from([0, 0, 0, 1, 2, 0x80000000]), fewest=U64, most=U64)
def test_only_well_formed_bounds_load(flags: int, fewest: int, most: int) -> None:
    _, file = compiled()
    edited = with_bounds(file, flags, fewest, most)
    well_formed = (flags == 0 and fewest <= most) or (flags == 1 and fewest == most == 0)
    if not well_formed:
        with pytest.raises(ValueError, match="instruction bounds"):
            cp.loads(edited)
        return
    loaded = cp.loads(edited)
    if flags == 0:
        assert (loaded.min_instructions(), loaded.max_instructions()) == (fewest, most)
    else:
        with pytest.raises(ValueError, match="loop kernels without a static bound"):
            loaded.max_instructions()


def test_version_9_bounds_past_u64_are_refused() -> None:
    """Version 9 stores the most as fewest + a difference: one past 2^64 - 1 is refused."""
    _, file = compiled()
    top = cp.loads(program_layout.edit9(file, fewest=2**64 - 1, most_fewest=0))
    assert top.max_instructions() == 2**64 - 1
    with pytest.raises(ValueError, match="more instructions at fewest than at most"):
        cp.loads(program_layout.edit9(file, fewest=2**64 - 1, most_fewest=1))


def test_fewest_above_most_is_named_by_the_runner(tmp_path: Path) -> None:
    _, file = compiled()
    path = tmp_path / "bad.cpy"
    path.write_bytes(with_bounds(file, 0, 41, 40))
    with pytest.raises(ValueError, match="say more instructions at fewest than at most"):
        cp.load(str(path))
    done = subprocess.run([standalone_runner(), str(path), "--info"], capture_output=True, text=True)
    assert done.returncode != 0 and "more instructions at fewest than at most" in done.stderr
