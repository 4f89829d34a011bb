"""Cortex-M4 cycles per call of every stencil and helper, from its control-flow graph.

The same longest/shortest path walk as ``bounds.py`` (``cfg.path_bounds``), each
instruction weighted by its cycle count from the Cortex-M4 Technical Reference Manual:
the rules and their assumptions (zero-wait-state memory, no interrupt, no DMA
contention) live in ``python/copapy/_m4_cycles.py``, which ``tg.max_cycles()`` also uses
for array steps (``_step_count.py``), so both count cycles the same way.

A conditional branch is charged its taken cost on every path (an upper bound). The
1-D array kernels get a + b·n cycles as they get a + b·n instructions (the bound of
sin/cos/tan over arrays); the kernels with nested loops stay ``null`` here: every array
step but those is counted by running it (``_step_count.py``).
"""

from __future__ import annotations

import importlib.util
import os

TARGET = "cortex-m4"
_RULES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                      "python", "copapy", "_m4_cycles.py")
# loaded by path: the build runs without the copapy extension
_spec = importlib.util.spec_from_file_location("_m4_cycles", _RULES)
_m4 = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_m4)


def weight(i):
    """(fewest, most) cycles of one classified instruction (cfg.Insn)."""
    parts = i.text.split(None, 1)
    mnem, ops = parts[0], (parts[1] if len(parts) > 1 else "")
    return _m4.weight(mnem, ops, branch=i.kind in ("cond", "jump", "call", "tail", "tailcall"),
                      ret=i.kind == "ret")


def table(funcs):
    """{name: [fewest, most] cycles or None} for the Cortex-M4 object's functions
    (build.parse_functions output)."""
    import bounds

    return {n: (list(b) if b else None)
            for n, b in sorted(bounds.target_bounds(TARGET, funcs, weight).items())}
