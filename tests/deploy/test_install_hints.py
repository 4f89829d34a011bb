"""No install hint can fetch another project.

On PyPI the name ``copapy`` is the original Copapy, a different project; this one is
distributed as ``copapy-rs`` (imported as ``copapy``) and installed from a checkout or a
wheel. Every ``pip install`` written in the README, the docs, the scripts and the
package's own messages is checked: none may install a requirement named ``copapy`` from an
index. (tests/once/test_installs.py installs the wheel's ``[emulate]`` extra as the
emulator's message says and runs an emulated program with it.)
"""

from __future__ import annotations

import re
import shlex
import tomllib
from pathlib import Path

from copapy._emulator import INSTALL_HINT
from helpers import ROOT

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
DIST = PYPROJECT["project"]["name"]
# the one place that installs the original Copapy on purpose, into its own venv
ORIGINAL_ON_PURPOSE = ROOT / "benches" / "setup_reference.sh"


def texts() -> dict[Path, str]:
    files = [ROOT / "README.md", ROOT / "pyproject.toml", *ROOT.glob("docs/*.md"), *ROOT.glob("*/README.md"),
             *ROOT.glob("scripts/*"), *ROOT.glob("benches/*"), *ROOT.glob("python/copapy/*.py"),
             *ROOT.glob("examples/*.py"), *ROOT.glob("crates/*/src/*.rs")]
    return {f: f.read_text(encoding="utf-8") for f in files if f.is_file() and f != ORIGINAL_ON_PURPOSE}


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def index_requirements(command: str) -> list[str]:
    """The names a ``pip install ...`` command line would look up on an index (local paths,
    wheels and options left out)."""
    try:
        words = shlex.split(command)
    except ValueError:  # an unbalanced quote in prose: take the words as they are
        words = command.split()
    names, skip = [], False
    for w in words:
        if skip:
            skip = False
        elif w.startswith("-"):
            skip = w in ("-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-d", "--python")
        elif w.startswith((".", "/", "$", "~")) or "/" in w or ".whl" in w or "<" in w:
            continue
        else:
            m = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", w)
            if m:
                names.append(normalized(m.group(0)))
    return names


def test_the_distribution_is_not_the_name_of_the_original_copapy() -> None:
    assert normalized(DIST) == "copapy-rs"
    assert PYPROJECT["tool"]["maturin"]["module-name"] == "copapy._core"  # imported as copapy
    emulate = PYPROJECT["project"]["optional-dependencies"]["emulate"]
    assert {re.match(r"[a-z]+", r).group(0) for r in emulate} == {"unicorn", "capstone"}  # type: ignore[union-attr]


def test_no_pip_install_written_anywhere_fetches_copapy_from_an_index() -> None:
    found = 0
    for path, text in texts().items():
        assert not re.search(r"\bcopapy\[", text), f"{path} names the extra of the PyPI project copapy"
        for m in re.finditer(r"pip install ([^\n`#|;&)]*)", text):
            found += 1
            assert "copapy" not in index_requirements(m.group(1)), f"{path}: {m.group(0)!r}"
    assert found >= 10


def test_the_checker_itself_catches_an_install_by_the_name_copapy() -> None:
    assert index_requirements("copapy") == ["copapy"]
    assert index_requirements("-q 'Copapy[emulate]>=0.1'") == ["copapy"]
    assert index_requirements("unicorn capstone") == ["unicorn", "capstone"]
    assert index_requirements("'.[emulate]' -e . dist/copapy_rs-0.1.0-cp311-abi3-linux_x86_64.whl") == []


def test_the_emulators_message_says_what_works() -> None:
    hint = INSTALL_HINT.format(target="riscv32")
    assert "pip install unicorn capstone" in hint
    assert "pip install '.[emulate]'" in hint
    wheel = re.search(r"pip install '(dist/(\S+?)-<version>-<tags>\.whl)\[emulate\]'", hint)
    assert wheel is not None and wheel.group(2) == DIST.replace("-", "_")  # the wheel's file name
    for m in re.finditer(r"pip install ([^,()]*)", hint):
        assert "copapy" not in index_requirements(m.group(1)), m.group(0)


def test_the_wheel_scripts_look_for_the_distributions_wheel() -> None:
    prefix = DIST.replace("-", "_") + "-"
    for script in ("build_wheel.sh", "check_wheel.sh"):
        text = (ROOT / "scripts" / script).read_text(encoding="utf-8")
        assert f"dist/{prefix}*.whl" in text, script
