"""Pre-linked images (`Target.save(path, code_base=, data_base=)`, format version 6) the
way a user deploys them: saved from Python, loaded by `cp.load` (the emulator places a
foreign image at its own addresses; this machine maps a native one there with
MAP_FIXED_NOREPLACE) and by `copapy-run`, compared bit for bit with the relocatable file
and with NumPy float32. Images for addresses a runner cannot give are refused with a
message saying what to do. The firmware boards run them under QEMU in
test_firmware_boards.py.

The module names its targets itself, so it runs in the main pass only.
"""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import copapy as cp
import program_layout
import pytest
from conftest import TARGET
from copapy._core import Target
from helpers import F32
from hypothesis import given, settings
from hypothesis import strategies as st
from standalone import standalone_runner

if TARGET:
    pytest.skip("independent of COPAPY_TEST_TARGET: names its targets itself", allow_module_level=True)

PAGE = 4096
# a free stretch of x86_64 Linux user space, far from the heap, the libraries and the stack
HOST_CODE = 0x5A5A_0000_0000
# the reference boards' program buffers (firmware/*/link.ld)
BOARDS = {"cortex-m4": (0x2030_0000, 0x2032_0000), "riscv32": (0x8080_0000, 0x8082_0000)}
A, B = 1.5, -2.25


def compiled(arch: str) -> Target:
    a, b = cp.value(A, name="a"), cp.value(B, name="b")
    tg = Target(arch)
    tg.compile(names={"y": a * b + a / b, "z": (a - b) * 3.0})
    return tg


def reference() -> dict[str, float]:
    a, b = F32(A), F32(B)
    return {"y": float(F32(a * b) + F32(a / b)), "z": float(F32(a - b) * F32(3.0))}


def bits(x: float) -> int:
    return int(struct.unpack("<I", struct.pack("<f", x))[0])


def results(tg: Target) -> dict[str, int]:
    tg.run()
    return {name: bits(tg.read_value(name)) for name in ("y", "z")}


def host_placement(tg: Target) -> tuple[int, int]:
    """Code at HOST_CODE, data at the page after the code: the layout the host maps."""
    code_len = int(program_layout.header9(tg.program_bytes())["code"])  # type: ignore[call-overload]
    return HOST_CODE, HOST_CODE + -(-code_len // PAGE) * PAGE


@pytest.mark.parametrize("arch", list(BOARDS))
def test_cp_load_runs_a_board_image_in_the_emulator_at_its_addresses(arch: str, tmp_path: Path) -> None:
    tg = compiled(arch)
    code_base, data_base = BOARDS[arch]
    tg.save(tmp_path / "board.cpy", code_base=code_base, data_base=data_base)
    tg.save(tmp_path / "any.cpy")
    want = {name: bits(v) for name, v in reference().items()}
    assert results(cp.load(tmp_path / "board.cpy")) == results(cp.load(tmp_path / "any.cpy")) == want


def test_a_native_image_runs_at_its_address_in_python_and_in_copapy_run(tmp_path: Path) -> None:
    tg = compiled("native")
    code_base, data_base = host_placement(tg)
    path = tmp_path / "native.cpy"
    tg.save(path, code_base=code_base, data_base=data_base)
    want = {name: bits(v) for name, v in reference().items()}
    assert results(cp.load(path)) == want
    done = subprocess.run([standalone_runner(), str(path), "--print", "y,z"], capture_output=True,
                          text=True, check=True)
    got = dict(item.split("=") for item in done.stdout.split())
    assert {k: bits(float(got[k])) for k in want} == want
    info = subprocess.run([standalone_runner(), str(path), "--info"], capture_output=True, text=True,
                          check=True).stdout
    assert f"placement pre-linked: code at {code_base:#x}, data at {data_base:#x}" in info


def test_an_image_whose_layout_this_machine_cannot_map_is_refused_saying_what_to_do(tmp_path: Path) -> None:
    tg = compiled("native")
    code_base, data_base = host_placement(tg)
    path = tmp_path / "apart.cpy"
    tg.save(path, code_base=code_base, data_base=data_base + PAGE)  # a page between code and data
    with pytest.raises(RuntimeError, match="save it without code_base=/data_base="):
        cp.load(path)
    done = subprocess.run([standalone_runner(), str(path)], capture_output=True, text=True)
    assert done.returncode != 0
    assert "pre-linked program needs its code at" in done.stderr
    assert "save it without code_base=/data_base=" in done.stderr


def test_bad_addresses_are_refused_when_saving() -> None:
    tg = compiled("cortex-m4")
    with pytest.raises(ValueError, match="needs both code_base= .* and data_base="):
        tg.program_bytes(code_base=0x2000_0000)
    with pytest.raises(ValueError, match="code address not aligned"):
        tg.program_bytes(code_base=0x2000_0002, data_base=0x2010_0000)
    with pytest.raises(ValueError, match="same bytes"):
        tg.program_bytes(code_base=0x2000_0000, data_base=0x2000_0010)
    with pytest.raises(ValueError, match="past the end of the address space"):
        tg.program_bytes(code_base=0xFFFF_FFF0, data_base=0x2000_0000)
    with pytest.raises(OverflowError):
        tg.program_bytes(code_base=-1, data_base=0)


def test_a_prelinked_image_is_code_data_and_a_small_header() -> None:
    tg = compiled("riscv32")
    relocatable = tg.program_bytes()
    image = tg.program_bytes(code_base=BOARDS["riscv32"][0], data_base=BOARDS["riscv32"][1])
    h, hi = program_layout.header9(relocatable), program_layout.header9(image)
    assert int(h["patches"]) > 0 and hi["patches"] == 0  # type: ignore[call-overload]
    # flag bit 0: pre-linked (bit 4, half words, is the data image's, as in the relocatable file)
    assert (int(hi["flags"]) & ~16, hi["code base"], hi["data base"]) == (1, *BOARDS["riscv32"])  # type: ignore[call-overload]
    assert int(hi["flags"]) & 16 == int(h["flags"]) & 16  # type: ignore[call-overload]
    # the header's numbers, code, data, symbols: no patch section
    (code_at, code_end), (data_at, data_end) = hi["code at"], hi["data at"]  # type: ignore[misc]
    assert len(image) == data_end + len(relocatable) - h["patches at"][1]  # type: ignore[index]
    # the data image and symbols are the relocatable file's; only patched code differs
    r_code, r_data = h["code at"], h["data at"]  # type: ignore[misc]
    assert image[data_at:data_end] == relocatable[r_data[0]:r_data[1]]
    assert image[data_end:] == relocatable[h["patches at"][1]:]  # type: ignore[index]
    assert image[code_at:code_end] != relocatable[r_code[0]:r_code[1]]


OPS = ("add", "sub", "mul", "div")


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(OPS), st.integers(0, 3), st.integers(0, 3)), min_size=1,
                max_size=12),
       st.lists(st.floats(-100, 100, width=32), min_size=4, max_size=4))
def test_random_programs_prelinked_run_as_relocatable_and_round_trip(
        steps: list[tuple[str, int, int]], inputs: list[float]) -> None:
    """Random arithmetic on cortex-m4: the image loaded by cp.load (the emulator, at the
    board's addresses) computes the relocatable file's bits, saves back to the same bytes,
    and cannot be moved elsewhere."""
    xs = [cp.value(v, name=f"x{i}") for i, v in enumerate(inputs)]
    vals = list(xs)
    for op, a, b in steps:
        x, y = vals[-1 - a % len(vals)], vals[-1 - b % len(vals)]
        vals.append({"add": x + y, "sub": x - y, "mul": x * y, "div": x / (y * y + 1.0)}[op])
    tg = Target("cortex-m4")
    tg.compile(names={"out": vals[-1]})
    image = tg.program_bytes(code_base=BOARDS["cortex-m4"][0], data_base=BOARDS["cortex-m4"][1])
    relocatable = cp.loads(tg.program_bytes())
    linked = cp.loads(image)
    relocatable.run()
    linked.run()
    assert bits(linked.read_value("out")) == bits(relocatable.read_value("out"))
    assert bytes(cp.loads(image).program_bytes(initial=True)) == image
    with pytest.raises(ValueError, match="pre-link the relocatable program"):
        cp.loads(image).program_bytes(code_base=0x2000_0000, data_base=0x2010_0000)
