"""The firmware C ABI (copapy_runner.h) from a C program built with gcc: it loads a program
file saved from Python into its own buffers, runs it, and reads variables by name."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import program_layout
import pytest
from copapy._core import Target, value  # the C runner executes this machine's code
from helpers import F32, ROOT

FIRMWARE = ROOT / "crates" / "copapy-firmware"


@pytest.fixture(scope="module")
def c_runner(tmp_path_factory: pytest.TempPathFactory) -> Path:
    lib = ROOT / "target" / "release" / "libcopapy_firmware.a"
    if not lib.exists():
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "copapy-firmware"], cwd=ROOT, check=True)
    gcc = shutil.which("gcc")
    assert gcc, "gcc is needed to build the C test program"
    exe = tmp_path_factory.mktemp("c") / "run_program"
    flags = ["-O2", "-Wall", "-Wextra", "-Werror", "-std=c11", f"-I{FIRMWARE / 'include'}"]
    source = str(FIRMWARE / "c" / "run_program.c")
    subprocess.run([gcc, *flags, source, str(lib), "-lpthread", "-ldl", "-lm", "-o", str(exe)], check=True)
    return exe


def run_c(exe: Path, program: Path, steps: int, sets: list[str], names: list[str]) -> dict[str, str]:
    out = subprocess.run([str(exe), str(program), str(steps), *sets, "--", *names], capture_output=True,
                         text=True, timeout=60, check=False)
    lines = out.stdout.splitlines()
    if out.returncode != 0:
        return {"error": out.stdout.strip()}
    return dict(line.split("=", 1) for line in lines)


def test_a_state_loop_runs_from_c_like_numpy(c_runner: Path, tmp_path: Path) -> None:
    x0, x1 = value(0.0), value(0.0)
    u = value(0.0, name="u")
    y = 1.0 * x0 + 0.5 * x1 + 0.05 * u
    tg = Target()
    tg.compile(y, names={"y": y, "x": [x0, x1]},
               updates={x0: 0.98 * x0 + 0.03 * x1 + 0.01 * u, x1: -0.03 * x0 + 0.97 * x1 + 0.02 * u})
    path = tmp_path / "ss.cpy"
    tg.save(path)
    got = run_c(c_runner, path, 25, ["u=1.5"], ["y", "x"])
    a = np.array([[0.98, 0.03], [-0.03, 0.97]], dtype=F32)
    b, c = np.array([0.01, 0.02], dtype=F32), np.array([1.0, 0.5], dtype=F32)
    x, uk = np.zeros(2, dtype=F32), F32(1.5)
    for _ in range(25):
        ry = c[0] * x[0] + c[1] * x[1] + F32(0.05) * uk
        x = np.array([a[i, 0] * x[0] + a[i, 1] * x[1] + b[i] * uk for i in range(2)], dtype=F32)
    assert F32(float(got["y"])) == ry
    assert [F32(float(t)) for t in got["x"].split(",")] == list(x)


def test_int_program_and_errors_from_c(c_runner: Path, tmp_path: Path) -> None:
    n = value(7, name="n")
    tg = Target()
    tg.compile(n * n - 3, names={"sq": n * n - 3})
    good = tmp_path / "n.cpy"
    tg.save(good)
    assert run_c(c_runner, good, 1, ["n=-12"], ["sq"]) == {"sq": "141"}
    assert run_c(c_runner, good, 1, [], ["nope"]) == {"nope": "error -17 no such variable or element"}
    data = bytearray(good.read_bytes())
    bad = tmp_path / "bad.cpy"
    cases = []
    flipped = bytearray(data)
    code_at = int(program_layout.header9(bytes(data))["code at"][0])  # type: ignore[index]
    flipped[code_at + 1] ^= 1
    cases.append((flipped, "error -9 checksum mismatch"))
    cases.append((data[:-1], "error -7 file truncated"))
    foreign = program_layout.with_arch(data, 4)  # thumb
    cases.append((foreign, "error -5 program is for another architecture"))
    for content, message in cases:
        bad.write_bytes(bytes(content))
        assert run_c(c_runner, bad, 1, [], ["sq"])["error"].startswith(message)


def test_byte_arrays_from_c(c_runner: Path, tmp_path: Path) -> None:
    from copapy import array, to_bytes

    pix = array([1, 2, 3, 250, 7], "byte")
    tg = Target()
    tg.compile(names={"pix": pix, "twice": to_bytes(pix * 2), "total": pix.sum()})
    path = tmp_path / "bytes.cpy"
    tg.save(path)
    x = np.array([9, 0, 255, 128, 127], dtype=np.uint8)
    got = run_c(c_runner, path, 1, ["pix=" + ",".join(map(str, x.tolist()))], ["pix", "twice", "total"])
    wide = x.astype(np.int32)
    assert got == {"pix": ",".join(map(str, x.tolist())),
                   "twice": ",".join(map(str, np.clip(wide * 2, 0, 255).tolist())),
                   "total": str(int(wide.sum()))}
    refused = run_c(c_runner, path, 1, ["pix=1,256"], ["pix"])
    assert refused == {"error": "error byte 256 of pix is outside 0..255"}
