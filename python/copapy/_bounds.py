"""Instruction bounds of a compiled program, from the stencil build's table.

``stencils/bounds.py`` computes, per target, the fewest and the most instructions one
call of each stencil executes (helpers it calls included; a dropped tail jump not
counted) and writes ``_instruction_bounds.json`` next to this module: [fewest, most],
or [fewest, a, b] for a 1-D array step, at most a + b * n instructions for n
elements. A program's run is its steps in order plus the final ``st_return`` the linker
appends, so its bounds are the sums (``Target.max_instructions()`` / ``min_instructions()``).
"""

from __future__ import annotations

import functools
import json
import os

_TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_instruction_bounds.json")
_CYCLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_cycle_bounds.json")
_RETURN = "st_return"


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


class UnboundedStepError(ValueError):
    """A step whose stencil the build's analysis leaves without a bound."""


def file_bounds(arch: str, steps: list[tuple[str, int]]) -> tuple[int, int] | str | None:
    """What a program file records (format version 4): (fewest, most), ``"unbounded"``
    when a step has no static bound, or None when the table does not cover the program
    (the file is then written without bounds, as version 2 or 3)."""
    try:
        return program_bounds(arch, steps)
    except UnboundedStepError:
        return "unbounded"
    except (ValueError, OSError):
        return None


def program_bounds(arch: str, steps: list[tuple[str, int]]) -> tuple[int, int]:
    """(fewest, most) instructions of one run of `steps` on `arch`: (stencil name,
    element count) pairs; an array step's entry [fewest, a, b] allows a + b * n."""
    per_target = _table().get(arch)
    if per_target is None:
        raise ValueError(f"no instruction bounds for target {arch!r}")
    lo = hi = 0
    for step, (name, n) in enumerate([*steps, (_RETURN, 0)]):
        if name not in per_target:
            raise ValueError(f"no instruction bounds for stencil {name} on {arch}")
        b = per_target[name]
        if b is None:
            raise UnboundedStepError(
                f"step {step} ({name}) runs nested loops over its array's shape, which the "
                "stencil build does not bound yet (see docs/determinism.md): "
                "max_instructions() covers scalar operations and element-wise array "
                "operations"
            )
        lo += b[0]
        hi += b[1] + (b[2] * n if len(b) == 3 else 0)
    return lo, hi


def program_cycles(arch: str, steps: list[tuple[str, int]]) -> tuple[int, int]:
    """(fewest, most) cycles of one run of `steps` (stencil name, element count) on
    `arch`, from the core's documented instruction timings (``stencils/cycles.py``:
    zero-wait-state memory, no interrupt); Cortex-M4 only, scalar steps only."""
    per_target = _cycles().get(arch)
    if per_target is None:
        raise ValueError(f"cycle bounds are computed for cortex-m4 only, not {arch!r} "
                         "(max_instructions() covers every target)")
    lo = hi = 0
    for step, (name, _) in enumerate([*steps, (_RETURN, 0)]):
        b = per_target.get(name)
        if b is None:
            raise UnboundedStepError(
                f"step {step} ({name}) has no cycle bound: max_cycles() covers scalar "
                "operations (array steps are bounded in instructions only)")
        lo += b[0]
        hi += b[1]
    return lo, hi
