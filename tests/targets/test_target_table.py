"""The one target table (crates/copapy-program/src/targets.rs) as Python sees it.

Python keeps no list of its own: names, aliases, features and emulators come from
``_core.targets()``. These tests check that what Python derives from it behaves as the
table says: every name and alias compiles for its target, the emulator uses the table's
CPU, and a device naming a target the old way (an instruction set, as copapy-run
answered INFO before it reported features) still maps to a target.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from typing import Any

import copapy as cp
import pytest
from copapy import _emulator, _targets
from copapy._core import Target  # not conftest's: these name their targets themselves
from copapy._emulator import Emulator
from helpers import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.skipif(
    bool(os.environ.get("COPAPY_TEST_TARGET")),
    reason="names its targets itself: runs once, in the native pass",
)

#: Features each target's code needs, from its CPU manuals (docs/architecture.md).
DOCUMENTED = {
    "x86_64": ("sse2",),
    "aarch64": ("neon",),
    "armv7": ("armv7", "vfp3"),
    "armv6": ("armv6", "vfp2"),
    "cortex-m4": ("armv7e-m", "fpv4-sp"),
    "riscv64": ("rv-m", "rv-f", "rv-c"),
    "riscv32": ("rv-m", "rv-f", "rv-c"),
}


def test_the_table_is_what_the_docs_say() -> None:
    assert {t.name: t.features for t in _targets.targets()} == DOCUMENTED


def test_every_name_and_alias_compiles_for_its_target() -> None:
    for t in _targets.targets():
        for name in (t.name, *t.aliases):
            assert cp.Target(name).arch == t.name
    assert cp.Target("arm").arch == "armv6"  # the ARM target every ARM Linux board runs


def test_unknown_names_are_refused_with_the_list() -> None:
    with pytest.raises(ValueError, match="unknown target 'mips': copapy compiles for x86_64, aarch64"):
        _targets.find("mips")


def test_the_emulator_uses_the_table_cpu() -> None:
    for t in _targets.targets():
        if t.name != "x86_64":
            assert Emulator(t.name)._machine.cpu == t.unicorn_cpu
    assert Emulator("arm64").arch == "aarch64"


class LegacyNamed:
    """A real emulator device that reports only its instruction set, as copapy-run
    before 0.2 did (``arm``, ``riscv64``): the device interface passes through."""

    def __init__(self, target: str, arch: str) -> None:
        self._device = Emulator(target)
        self.arch = arch

    def __getattr__(self, name: str) -> Any:
        return getattr(self._device, name)


@pytest.mark.parametrize("target,arch", [("armv6", "arm"), ("riscv64", "riscv64"), ("aarch64", "aarch64")])
def test_a_device_naming_its_instruction_set_gets_its_baseline_target(target: str, arch: str) -> None:
    a = cp.value(1.5)
    tg = Target(runner=LegacyNamed(target, arch))
    assert tg.arch == target
    tg.compile(a * a - 0.25)
    tg.run()
    assert tg.read_value("out0") == 2.0


def test_a_device_with_an_unknown_name_is_refused() -> None:
    with pytest.raises(ValueError, match='the runner reports target "mips"'):
        Target(runner=LegacyNamed("armv6", "mips"))


class Reporting(LegacyNamed):
    """A real emulator device reporting any ``arch`` and ``features`` text."""

    def __init__(self, arch: str, features: str) -> None:
        super().__init__("armv6", arch)
        self.features = features


names = st.sampled_from(["arm", "armv6", "armv7", "aarch64", "riscv64", "x86_64", "amd64", "mips", ""])
feature_lists = st.lists(st.sampled_from(["armv6", "armv7", "vfp2", "vfp3", "neon", "sse2", "rv-m", "rv-f",
                                          "rv-c", "vfp9", ""]), max_size=5).map(",".join)


@settings(max_examples=300, deadline=None)
@given(arch=st.one_of(names, st.text(max_size=12)), features=st.one_of(feature_lists, st.text(max_size=20)),
       wanted=st.sampled_from(["native", "armv6", "armv7", "riscv64", "cortex-m4"]))
def test_any_info_reply_gives_a_target_or_a_clear_error(arch: str, features: str, wanted: str) -> None:
    """Whatever a runner answers, Target picks a target whose features its CPU has, or
    raises ValueError saying what was wrong (never a panic, never a silent mismatch)."""
    try:
        tg = Target(wanted, runner=Reporting(arch, features))
    except ValueError as e:
        assert str(e), "an empty message"
        return
    chosen = _targets.find(tg.arch)
    name = arch.strip()
    isa = next((t.arch for t in _targets.targets() if name in (t.name, *t.aliases)), name)
    assert chosen.arch == isa, (arch, tg.arch)
    reported = set(filter(None, features.strip().split(",")))
    has = reported if features.strip() else set(chosen.features)  # not reported: the named target's
    assert set(chosen.features) <= has, (arch, features, tg.arch)
    if wanted != "native":
        assert tg.arch == wanted


def test_every_place_that_lists_targets_follows_the_table() -> None:
    """The stencil build (its compiler flags per row), the emulator (one machine per
    instruction set) and the test matrix all follow the Rust table: a target added there
    and missing here fails this test, so the table stays the one source."""
    stencils = ROOT / "stencils"
    sys.path.insert(0, str(stencils))
    try:
        spec = importlib.util.spec_from_file_location("copapy_stencil_build", stencils / "build.py")
        assert spec is not None and spec.loader is not None
        build = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(build)
    finally:
        sys.path.remove(str(stencils))
    # build.py reads the rows from stencils/targets.json (a cargo test keeps that file
    # equal to the Rust table): names in order, and each row's compiler flags
    assert list(build.TARGETS) == _targets.names()
    assert {name: t.flags for name, t in build.TARGETS.items()} == {
        t.name: list(t.cflags) for t in _targets.targets()}
    # the emulator and the stencil build describe each instruction set from the one ISA
    # table (isas.rs; isas.json for build.py, _core.isas() for Python)
    isas = {i.arch: i for i in _targets.isas()}
    assert {t.arch for t in _targets.targets()} <= set(isas)
    for t in _targets.targets():
        machine = _emulator._machine(t.name)
        isa = isas[t.arch]
        assert (machine.uc_arch, machine.uc_mode, machine.cpu) == (
            isa.unicorn.mode.arch, isa.unicorn.mode.modes, t.unicorn_cpu)
        assert (machine.cs_arch, machine.cs_mode) == (isa.capstone.arch, isa.capstone.modes)
        assert (machine.pc, machine.sp, machine.fpu, machine.call) == (
            isa.unicorn.pc, isa.unicorn.sp, isa.unicorn.fpu, isa.unicorn.call)
        checks = build.TARGETS[t.name]
        assert (checks.objdump, checks.relocs, checks.tail_reloc, checks.call_relocs,
                checks.sqrt_insn) == ([isa.objdump], set(isa.relocs), isa.tail_reloc,
                                      set(isa.call_relocs), isa.sqrt_insn)
    isa_rows = json.loads((stencils / "isas.json").read_text(encoding="utf-8"))
    assert [(r["arch"], tuple(r["relocs"]), r["tail_reloc"], tuple(r["call_relocs"]),
             r["sqrt_insn"], r["objdump"],
             (r["unicorn"]["arch"], tuple(r["unicorn"]["modes"])),
             (r["capstone"]["arch"], tuple(r["capstone"]["modes"]))) for r in isa_rows] == [
        (i.arch, i.relocs, i.tail_reloc, i.call_relocs, i.sqrt_insn, i.objdump,
         (i.unicorn.mode.arch, i.unicorn.mode.modes), (i.capstone.arch, i.capstone.modes))
        for i in _targets.isas()]
    # the file's rows are the table's rows as _core exports them
    rows = json.loads((stencils / "targets.json").read_text(encoding="utf-8"))
    assert [(r["name"], tuple(r["aliases"]), r["arch"], tuple(r["features"]), r["machines"],
             None if r["qemu_user"] is None else tuple(r["qemu_user"]), r["unicorn_cpu"],
             tuple(r["cflags"])) for r in rows] == [
        (t.name, t.aliases, t.arch, t.features, t.machines, t.qemu_user, t.unicorn_cpu, t.cflags)
        for t in _targets.targets()]
    # the test matrix and the benchmarks take their lists from the table, not their own
    for script in (ROOT / "scripts" / "test.sh", ROOT / "benches" / "target_figures.py"):
        text = script.read_text(encoding="utf-8")
        assert "_targets.names()" in text, script
        assert not any(f'"{t.name}"' in text or f"'{t.name}'" in text
                       for t in _targets.targets()), script
