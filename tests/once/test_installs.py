"""Every kind of install has a working runner, and the build scripts stand alone.

In fresh venvs: ``pip install .`` of this checkout, ``pip install -e .`` of a copy of it
(an editable install writes the extension into its source tree, which must not be the
tree the rest of the suite imports), and the wheel that ``scripts/build_wheel.sh`` builds
in that copy (no ``.venv`` there: the script must stand alone). Each install saves a
program, runs it with its ``copapy-run`` console script and through
``Target(runner="process")``; every result is compared with a NumPy float32/int32
reference. The builds reuse this checkout's compiled artefacts (``CARGO_TARGET_DIR``), so
they only link; pip installs offline from a wheelhouse under ``target/``.

Slow (tens of seconds): tests/conftest.py collects this directory only with
``COPAPY_TEST_ONCE=1``; scripts/test.sh runs it once.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_runner_cli import STEPS, reference

ROOT = Path(__file__).resolve().parents[2]
WHEELHOUSE = ROOT / "target" / "install-check" / "wheelhouse"
DRIVER = Path(__file__).with_name("driver.py")
F32 = np.float32


def maturin_pin() -> str:
    lines = (ROOT / "scripts" / "requirements-dev.txt").read_text().splitlines()
    return next(line for line in lines if line.startswith("maturin=="))


def build_env(tmp: Path, path: str | None = None) -> dict[str, str]:
    """Builds reuse target/ and install offline; TMPDIR is `tmp`, so leftovers show."""
    env = dict(os.environ, CARGO_TARGET_DIR=str(ROOT / "target"), PIP_NO_INDEX="1",
               PIP_FIND_LINKS=str(WHEELHOUSE), PIP_DISABLE_PIP_VERSION_CHECK="1", TMPDIR=str(tmp))
    env.pop("COPAPY_RUN", None)
    env.pop("VIRTUAL_ENV", None)
    if path is not None:
        env["PATH"] = path
    return env


def run(cmd: list[Any], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kwargs)
    assert done.returncode == 0, f"{cmd}: {done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def wheelhouse() -> Path:
    """maturin's wheel, downloaded once (the only network access) and kept in target/."""
    pin = maturin_pin()
    version = pin.split("==")[1]
    if not list(WHEELHOUSE.glob(f"maturin-{version}-*.whl")):
        run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "-d",
             WHEELHOUSE, pin])
    return WHEELHOUSE


def fresh_venv(where: Path) -> Path:
    """A venv without pip of its own (bootstrapping pip takes seconds; this suite's pip
    installs into it with --python)."""
    run([sys.executable, "-m", "venv", "--without-pip", where])
    return where / "bin"


def pip_install(bin_dir: Path, *args: object, env: dict[str, str]) -> None:
    run([sys.executable, "-m", "pip", "--python", bin_dir / "python", "install", "-q", *args], env=env)


def copy_checkout(dest: Path) -> None:
    """The files git would see (tracked and new, not ignored), with their times kept so
    cargo finds its artefacts in target/ up to date."""
    listing = run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT).stdout
    for name in filter(None, listing.split("\0")):
        src = ROOT / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)


def tree(path: Path) -> set[str]:
    return {str(p.relative_to(path)) for p in path.rglob("*")}


def check_install(bin_dir: Path, work: Path, clean_path: str, env: dict[str, str]) -> str:
    """Runs the driver and the console script of one install; compares every result with
    the NumPy reference; returns the path copapy was imported from."""
    env = dict(env, PATH=clean_path)
    prog = work / "state.cpy"
    out = json.loads(run([bin_dir / "python", DRIVER, prog], cwd=work, env=env).stdout)
    want = reference(STEPS)
    for way in ("direct", "loaded"):
        got = [(F32(y), F32(x), int(n)) for y, x, n in out[way]]
        assert got == [(y, x, int(n)) for y, x, n in want], way
    version = run([bin_dir / "copapy-run", "--version"], env=env).stdout
    assert version.startswith("copapy-run 0.") and "program formats" in version
    printed = run([bin_dir / "copapy-run", prog, "-n", STEPS, "--print", "y,x,n"], cwd=work, env=env).stdout
    rows = [dict(kv.split("=") for kv in line.split()[1:]) for line in printed.splitlines()]
    assert [(F32(r["y"]), F32(r["x"]), int(r["n"])) for r in rows] == [(y, x, int(n)) for y, x, n in want]
    return str(out["copapy"])


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("checkout")
    copy_checkout(dest)
    assert not (dest / ".venv").exists()
    return dest


def test_pip_install_dot(wheelhouse: Path, tmp_path: Path) -> None:
    bin_dir = fresh_venv(tmp_path / "venv")
    (tmp_path / "tmp").mkdir()
    env = build_env(tmp_path / "tmp")
    pip_install(bin_dir, ROOT, env=env)
    assert not (ROOT / "python" / "copapy" / "_bin").exists()
    (tmp_path / "work").mkdir()
    where = check_install(bin_dir, tmp_path / "work", f"{bin_dir}:/usr/bin:/bin", env)
    assert where.startswith(str(tmp_path / "venv")), where


def test_pip_install_editable(wheelhouse: Path, copy: Path, tmp_path: Path) -> None:
    bin_dir = fresh_venv(tmp_path / "venv")
    (tmp_path / "tmp").mkdir()
    env = build_env(tmp_path / "tmp")
    pip_install(bin_dir, "-e", copy, env=env)
    (tmp_path / "work").mkdir()
    where = check_install(bin_dir, tmp_path / "work", f"{bin_dir}:/usr/bin:/bin", env)
    assert where == str(copy / "python" / "copapy" / "__init__.py"), where
    # editable: a change in the source tree shows without reinstalling
    init = copy / "python" / "copapy" / "__init__.py"
    init.write_text(init.read_text() + "\nEDITED_IN_PLACE = 7\n")
    said = run([bin_dir / "python", "-c", "import copapy; print(copapy.EDITED_IN_PLACE)"], env=env).stdout
    assert said.strip() == "7"
    init.write_text(init.read_text().replace("\nEDITED_IN_PLACE = 7\n", ""))


@pytest.fixture(scope="module")
def wheel(wheelhouse: Path, copy: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """scripts/build_wheel.sh run in the copy (no .venv): only dist/*.whl appears, and
    nothing is left in its temporary directory."""
    tmp = tmp_path_factory.mktemp("build-tmp")
    before = tree(copy)
    run([copy / "scripts" / "build_wheel.sh"], env=build_env(tmp))
    wheels = list((copy / "dist").glob("copapy_rs-*.whl"))
    assert len(wheels) == 1
    assert tree(copy) - before == {"dist", f"dist/{wheels[0].name}"} | (
        {"python/copapy/_core.abi3.so"} - before)
    assert tree(tmp) == set()
    return wheels[0]


def test_wheel_without_a_rust_toolchain(wheel: Path, tmp_path: Path) -> None:
    bin_dir = fresh_venv(tmp_path / "venv")
    clean_path = f"{bin_dir}:/usr/bin:/bin"
    assert shutil.which("cargo", path=clean_path) is None, "cargo on the clean PATH would prove nothing"
    (tmp_path / "tmp").mkdir()
    env = build_env(tmp_path / "tmp", clean_path)
    pip_install(bin_dir, "--no-index", wheel, env=env)
    (tmp_path / "work").mkdir()
    where = check_install(bin_dir, tmp_path / "work", clean_path, env)
    assert where.startswith(str(tmp_path / "venv")), where


@pytest.fixture(scope="module")
def emulator_wheels(wheelhouse: Path) -> Path:
    """unicorn and capstone at the versions scripts/requirements-dev.txt pins, downloaded
    once into the wheelhouse, so the emulate extra installs offline."""
    lines = (ROOT / "scripts" / "requirements-dev.txt").read_text().splitlines()
    for package in ("unicorn", "capstone"):
        pin = next(line for line in lines if line.startswith(f"{package}=="))
        if not list(WHEELHOUSE.glob(f"{package}-{pin.split('==')[1]}-*.whl")):
            run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "-d",
                 WHEELHOUSE, pin])
    return WHEELHOUSE


EMULATED = """
import json, sys
from importlib.metadata import distribution
import copapy as cp
a = cp.value(0.75, name="a")
tg = cp.Target("riscv32")
y = (a * 3.0 + 1.0) / (a * a + 0.5)
tg.compile(y, names={"y": y})
tg.write_value("a", 1.25)
tg.run()
print(json.dumps({"name": distribution("copapy-rs").metadata["Name"], "y": tg.read_value("y")}))
"""


def test_the_wheels_emulate_extra_installs_the_emulator(wheel: Path, emulator_wheels: Path,
                                                        tmp_path: Path) -> None:
    """What the emulator's missing-unicorn message says for a wheel works: the extra on
    the wheel's path installs unicorn and capstone, and a riscv32 program then runs
    (the result compared with NumPy float32); the distribution is copapy-rs."""
    from copapy._emulator import INSTALL_HINT

    assert "pip install 'dist/copapy_rs-<version>-<tags>.whl[emulate]'" in INSTALL_HINT
    assert wheel.parent.name == "dist" and wheel.name.startswith("copapy_rs-")
    bin_dir = fresh_venv(tmp_path / "venv")
    (tmp_path / "tmp").mkdir()
    env = build_env(tmp_path / "tmp", f"{bin_dir}:/usr/bin:/bin")
    pip_install(bin_dir, f"{wheel}[emulate]", env=env)
    out = json.loads(run([bin_dir / "python", "-c", EMULATED], cwd=tmp_path, env=env).stdout)
    assert out["name"] == "copapy-rs"
    a = F32(1.25)
    assert F32(out["y"]) == (a * F32(3.0) + F32(1.0)) / (a * a + F32(0.5))


def test_build_wheel_leaves_nothing_when_it_fails(copy: Path, wheel: Path, tmp_path: Path) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "cargo").write_text("#!/bin/sh\necho 'cargo: simulated failure' >&2\nexit 1\n")
    (fake / "cargo").chmod(0o755)
    (tmp_path / "tmp").mkdir()
    before = tree(copy)
    done = subprocess.run([copy / "scripts" / "build_wheel.sh"], capture_output=True, text=True,
                          env=build_env(tmp_path / "tmp", f"{fake}:{os.environ['PATH']}"))
    assert done.returncode != 0 and "simulated failure" in done.stderr
    assert tree(copy) == before  # the wheel built before is still there, nothing else
    assert tree(tmp_path / "tmp") == set()


def test_check_wheel_removes_its_venvs(copy: Path, wheel: Path, tmp_path: Path) -> None:
    (tmp_path / "tmp").mkdir()
    done = run([copy / "scripts" / "check_wheel.sh"], env=build_env(tmp_path / "tmp"))
    assert "wheel ok" in done.stdout
    assert tree(tmp_path / "tmp") == set()


@pytest.fixture(autouse=True)
def _no_stray_runner(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("COPAPY_RUN", raising=False)
    yield


def test_the_standalone_binary_is_accepted_as_a_runner(tmp_path: Path) -> None:
    """copapy-run built by cargo (no Python) prints the same --version line as the module's
    runner, so runner='process:PATH' uses it; results as the NumPy reference."""
    run(["cargo", "build", "--release", "-q", "-p", "copapy-run"], cwd=ROOT)
    binary = ROOT / "target" / "release" / "copapy-run"
    code = ("import json, sys, copapy as cp; x = cp.value(0.5, name='x'); u = cp.value(2.0, name='u'); "
            "y = (x * 3.0 + u) / (x * x + 1.0); tg = cp.Target(runner='process:' + sys.argv[1]); "
            "tg.compile(y, names={'y': y}, updates={x: x * 0.75 + u * 0.25}); "
            "print(json.dumps([tg.run() or tg.read_value('y') for _ in range(4)]))")
    got = json.loads(run([sys.executable, "-c", code, binary], cwd=tmp_path).stdout)
    assert [F32(v) for v in got] == [y for y, _, _ in reference(4)]
