"""Instruction bounds of a compiled program, from the stencil build's table.

``stencils/bounds.py`` computes, per target, the fewest and the most instructions one
call of each stencil executes (helpers it calls included; a dropped tail jump not
counted) and writes ``_instruction_bounds.json`` next to this module: [fewest, most],
or [fewest, a, b] for a 1-D array step, at most a + b * n instructions for n
elements. A program's run is its steps in order plus the final ``st_return`` the linker
appends, so its bounds are the sums (``Target.max_instructions()`` / ``min_instructions()``).

An array step has one instruction count per compiled program (its loops run as its
shape says, fixed at compile time): ``_step_count.py`` finds it by running the step
alone, so the sum is exact for it (fewest == most), loops over a shape included. Only
the array steps on a helper with data-dependent paths (``_data_dependent_arrays.json``:
sin, cos, tan) keep the table's a + b * n.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from typing import Any

_TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_instruction_bounds.json")
_CYCLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_cycle_bounds.json")
_VARYING = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "_data_dependent_arrays.json")
_RETURN = "st_return"
_BACKEDGE = "st_loop_"


@functools.cache
def _table() -> dict[str, dict[str, list[int] | None]]:
    with open(_TABLE, encoding="utf-8") as f:
        table: dict[str, dict[str, list[int] | None]] = json.load(f)
    return table


@functools.cache
def _cycles() -> dict[str, dict[str, list[int] | None]]:
    with open(_CYCLES, encoding="utf-8") as f:
        table: dict[str, dict[str, list[int] | None]] = json.load(f)
    return table


@functools.cache
def _varying() -> dict[str, frozenset[str]]:
    with open(_VARYING, encoding="utf-8") as f:
        return {t: frozenset(names) for t, names in json.load(f).items()}


class UnboundedStepError(ValueError):
    """A step whose stencil the build's analysis leaves without a bound."""


def file_bounds(arch: str, steps: list[tuple[str, int]],
                programs: list[bytes | None] | None = None) -> tuple[int, int] | str | None:
    """What a program file records (format version 4): (fewest, most), ``"unbounded"``
    when a step has no bound, or None when the table does not cover the program or
    its array steps cannot be counted here (no emulator installed): the file is then
    written without bounds (format versions 9 and 10 say so in its flags)."""
    try:
        return program_bounds(arch, steps, programs)
    except UnboundedStepError:
        return "unbounded"
    except (ValueError, OSError, ImportError):
        return None


def _sum_steps(per_target: dict[str, Any], steps: list[tuple[str, int]],
               unbounded: Callable[[int, str], Exception],
               counted: Callable[[int, str, int], tuple[int, int] | None]) -> tuple[int, int]:
    """(fewest, most) of one run of `steps` by the per-stencil entries of `per_target`
    ([fewest, most] or [fewest, a, b] for a + b * n per array element); a missing or
    null entry raises what ``unbounded(step, name)`` makes.

    A loop's body sits between ``("@loop", trips)`` and ``("@end", trips)`` and counts
    ``trips`` times. Its back-edge (``st_loop_*``, the one stencil with a branch) takes its
    exit path (`fewest`) once and its path back to the head (`most`) ``trips - 1`` times,
    so a branch-free body gives one exact count.

    ``counted(k, name, n)`` gives the (fewest, most) of the k-th step (loop marks not
    counted) found by running it (array steps), or None to use the table."""
    # per open loop: [fewest, most] per trip, and the back-edge's exit correction, once
    frames = [[0, 0, 0]]
    k = -1
    for step, (name, n) in enumerate([*steps, (_RETURN, 0)]):
        if name == "@loop":
            frames.append([0, 0, 0])
            continue
        if name == "@end":
            body_lo, body_hi, once = frames.pop()
            frames[-1][0] += body_lo * n + once
            frames[-1][1] += body_hi * n + once
            continue
        k += 1
        ran = counted(k, name, n) if name != _RETURN else None
        if ran is not None:
            frames[-1][0] += ran[0]
            frames[-1][1] += ran[1]
            continue
        b = per_target.get(name)
        if b is None:
            raise unbounded(step, name)
        if name.startswith(_BACKEDGE):
            # back to the head on every trip but the last, which exits
            frames[-1][0] += b[1]
            frames[-1][1] += b[1]
            frames[-1][2] += b[0] - b[1]
            continue
        frames[-1][0] += b[0]
        frames[-1][1] += b[1] + (b[2] * n if len(b) == 3 else 0)
    return frames[0][0], frames[0][1]


def _run_steps(arch: str, per_target: dict[str, Any], programs: list[bytes | None] | None,
               cost: Callable[[tuple[int, int, int]], tuple[int, int]],
               ) -> Callable[[int, str, int], tuple[int, int] | None]:
    """`counted` for `_sum_steps`: array steps run alone (``_step_count.py``), but those
    whose count depends on element values; ``cost(run)`` turns a run's
    (instructions, fewest cycles, most cycles) into the step's own (fewest, most).
    Without the emulator an element-wise step falls back to `per_target`'s a + b * n."""
    varying = _varying().get(arch, frozenset())

    def counted(k: int, name: str, _n: int) -> tuple[int, int] | None:
        program = programs[k] if programs is not None and k < len(programs) else None
        if program is None or name in varying:
            return None
        from copapy import _step_count

        try:
            return cost(_step_count.step_cost(arch, bytes(program)))
        except ImportError as e:
            if per_target.get(name) is not None:
                return None  # the table's a + b * n still bounds an element-wise step
            raise ImportError(
                f"step {k} ({name}) is an array step, whose instruction count copapy finds "
                "by running it alone in the unicorn emulator: pip install unicorn capstone "
                "(the copapy-rs[emulate] extra)") from e

    return counted


def program_bounds(arch: str, steps: list[tuple[str, int]],
                   programs: list[bytes | None] | None = None) -> tuple[int, int]:
    """(fewest, most) instructions of one run of `steps` on `arch`: (stencil name,
    element count) pairs (see `_sum_steps` for loops); `programs` holds, per step, the
    one-step program of an array step (None for others), which is run to count it."""
    per_target = _table().get(arch)
    if per_target is None:
        raise ValueError(f"no instruction bounds for target {arch!r}")

    def unbounded(step: int, name: str) -> Exception:
        if name not in per_target:
            return ValueError(f"no instruction bounds for stencil {name} on {arch}")
        return UnboundedStepError(
            f"step {step} ({name}) runs loops over its array's shape and has no static "
            "bound: it is counted by running it alone, which needs the compiled program "
            "(see docs/determinism.md)")

    ret = per_target[_RETURN]
    assert ret is not None and ret[0] == ret[1]

    def instructions(run: tuple[int, int, int]) -> tuple[int, int]:
        return run[0] - ret[0], run[0] - ret[0]  # the one-step program's st_return

    run = _run_steps(arch, per_target, programs, instructions)

    def checked(k: int, name: str, n: int) -> tuple[int, int] | None:
        """A counted 1-D step within its control-flow graph's a + b * n: the two ways
        of counting agree, or the tables and the compiled program do not match."""
        got = run(k, name, n)
        b = per_target.get(name)
        if got is not None and b is not None and len(b) == 3 and not \
                b[0] <= got[0] <= b[1] + b[2] * n:
            raise RuntimeError(
                f"step {k} ({name}, n = {n}) ran {got[0]} instructions on {arch}, outside "
                f"{b[0]}..{b[1] + b[2] * n} from its control-flow graph: the stencil "
                "tables and the compiled program disagree (rebuild the extension after "
                "stencils/build.py)")
        return got

    return _sum_steps(per_target, steps, unbounded, checked)


def program_cycles(arch: str, steps: list[tuple[str, int]],
                   programs: list[bytes | None] | None = None) -> tuple[int, int]:
    """(fewest, most) cycles of one run of `steps` (stencil name, element count) on
    `arch`, from the core's documented instruction timings (``_m4_cycles.py``:
    zero-wait-state memory, no interrupt); Cortex-M4 only. Array steps are run alone
    and their instructions weighted the same way; sin/cos/tan arrays get a + b * n."""
    per_target = _cycles().get(arch)
    if per_target is None:
        raise ValueError(f"cycle bounds are computed for cortex-m4 only, not {arch!r} "
                         "(max_instructions() covers every target)")

    def unbounded(step: int, name: str) -> Exception:
        return UnboundedStepError(
            f"step {step} ({name}) has no cycle bound: it runs loops over its array's "
            "shape and is counted by running it alone, which needs the compiled program")

    ret = per_target[_RETURN]
    assert ret is not None

    def cycles(run: tuple[int, int, int]) -> tuple[int, int]:
        return run[1] - ret[0], run[2] - ret[1]  # the one-step program's st_return

    return _sum_steps(per_target, steps, unbounded, _run_steps(arch, per_target, programs, cycles))
