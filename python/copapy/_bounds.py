"""Instruction bounds of a compiled program, from the stencil build's table.

``stencils/bounds.py`` computes, per target, the fewest and the most instructions one
call of each stencil executes (helpers it calls included; a dropped tail jump not
counted) and writes ``_instruction_bounds.json`` next to this module. A program's run
is its steps in order plus the final ``st_return`` the linker appends, so its bounds
are the sums (``Target.max_instructions()`` / ``min_instructions()``).
"""

from __future__ import annotations

import functools
import json
import os

_TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_instruction_bounds.json")
_RETURN = "st_return"


@functools.cache
def _table() -> dict[str, dict[str, list[int] | None]]:
    with open(_TABLE, encoding="utf-8") as f:
        table: dict[str, dict[str, list[int] | None]] = json.load(f)
    return table


def program_bounds(arch: str, stencils: list[str]) -> tuple[int, int]:
    """(fewest, most) instructions of one run of the steps `stencils` on `arch`."""
    per_target = _table().get(arch)
    if per_target is None:
        raise ValueError(f"no instruction bounds for target {arch!r}")
    lo = hi = 0
    for step, name in enumerate([*stencils, _RETURN]):
        if name not in per_target:
            raise ValueError(f"no instruction bounds for stencil {name} on {arch}")
        b = per_target[name]
        if b is None:
            raise ValueError(
                f"step {step} ({name}) runs a loop whose count depends on its array length, "
                "which the stencil build does not bound yet (see docs/determinism.md): "
                "max_instructions() covers programs without array operations"
            )
        lo += b[0]
        hi += b[1]
    return lo, hi
