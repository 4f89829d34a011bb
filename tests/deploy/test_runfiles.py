"""Run filetests: small programs with their expected results, run on the targets they name.

Each ``tests/runfiles/*.cpt`` file is a program and its expectations side by side, in
the spirit of cranelift's ``; run:`` filetests::

    ; targets: all                (or a list: x86_64 riscv32)
    a = cp.value(0.25)            (Python statements; `cp` is copapy)
    ; run: a * 2.0 == 0.5         (compiled, run, read back, compared bit for bit)
    ; run: cp.sqrt(-a) is nan     (any NaN: the NaN rule of docs/architecture.md)

The expected values are written by hand from an independent source (NumPy float32 /
int32, C99), never produced by copapy. Every ``run:`` line of a file is one output of one
program, so a file is one compile and one run per target.
"""

from __future__ import annotations

import math
import struct
from pathlib import Path
from typing import Any

import copapy as cp
import pytest
from copapy import _targets
from helpers import ROOT

FILES = sorted((ROOT / "tests" / "runfiles").glob("*.cpt"))
ALL = _targets.names()  # the shared table (crates/copapy-program/src/targets.rs)


class RunFile:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.targets = ALL
        self.body: list[str] = []
        self.runs: list[tuple[int, str, str]] = []  # (line, expression, expectation)
        for no, line in enumerate(path.read_text().splitlines(), 1):
            if line.startswith("; targets:"):
                names = line.split(":", 1)[1].split()
                self.targets = ALL if names == ["all"] else names
            elif line.startswith("; run:"):
                spec = line.split(":", 1)[1].strip()
                if spec.endswith(" is nan"):
                    self.runs.append((no, spec[: -len(" is nan")], "nan"))
                else:
                    expr, _, want = spec.rpartition("==")
                    self.runs.append((no, expr.strip(), want.strip()))
            elif not line.startswith(";"):
                self.body.append(line)
        assert self.runs, f"{path.name} has no '; run:' line"

    def run(self, target: str) -> list[str]:
        scope: dict[str, Any] = {"cp": cp}
        exec("\n".join(self.body), scope)  # noqa: S102 - the test's own program text
        outputs = [eval(expr, scope) for _, expr, _ in self.runs]  # noqa: S307
        tg = cp.Target(target)
        tg.compile(outputs)
        tg.run()
        got = tg.read_value(outputs)
        failures = []
        for (no, expr, want), value in zip(self.runs, got, strict=True):
            if not _matches(value, want):
                failures.append(f"{self.path.name}:{no}: {expr} gave {value!r}, expected {want}")
        return failures


def _matches(value: Any, want: str) -> bool:
    if want == "nan":
        return isinstance(value, float) and math.isnan(value)
    expected = eval(want, {"inf": math.inf})  # noqa: S307 - a literal
    if isinstance(value, bool) or isinstance(expected, bool):
        return value is expected
    if isinstance(expected, int) and not isinstance(value, float):
        return bool(value == expected)
    if not isinstance(value, float):
        return False
    f32 = struct.unpack("<f", struct.pack("<f", float(expected)))[0]
    return struct.pack("<f", value) == struct.pack("<f", f32)


def _cases() -> list[Any]:
    out = []
    for path in FILES:
        rf = RunFile(path)
        out += [pytest.param(rf, t, id=f"{path.stem}-{t}") for t in rf.targets]
    return out


def test_there_are_run_files() -> None:
    assert len(FILES) >= 5


@pytest.mark.parametrize("runfile,target", _cases())
def test_run_file(runfile: RunFile, target: str) -> None:
    failures = runfile.run(target)
    assert not failures, "\n".join(failures)
