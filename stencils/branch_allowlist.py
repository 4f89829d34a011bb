"""The conditional branches the stencil build accepts, each with its reason.

``build.py --check`` decodes every target's code (``cfg.py``) and fails on a
conditional branch in any function not matched here. Stencils (``st_*``) are never
matched, except the loop back-edge (``BACKEDGES``): every other stencil is straight-line
code on every target, so its instruction count is one number. Within an allowed loop
kernel, a short forward branch over at most
``SKIP_LIMIT`` instructions is still rejected: that is the shape of a select that the
compiler turned into a branch on the data (the RISC-V ``min``/``max`` and the x86_64
``je`` that this check was written for), never of loop control.

Each entry: (function name or ``prefix*``, targets or ``"*"``, kind, reason). The
kinds: ``loop`` — branches on element counts and shape words only (fixed when the
program is compiled), so the instruction count is a function of the shape;
``math`` — data-dependent paths, bounded (fewest and most instructions per call in
``docs/determinism.md``, from ``bounds.py``).

The static rule inside loop kernels is a shape test, not a data-flow analysis: a select
that the compiler turns into a longer branch (RISC-V once loaded one operand of the
array select under a backward branch) passes it. ``tests/targets/test_determinism.py`` is the
second line: it runs every element-wise and shaped array kernel on every target with
varying element values and requires the same instruction count.
"""

from __future__ import annotations

import fnmatch

SKIP_LIMIT = 3

ALLOWED = [
    ("cpm_arr_*", "*", "loop",
     "array loop kernel: the trip counts come from cp_n and the kernel's int parameter "
     "array (fixed at compile time); element values only feed masks"),
    ("cpm_div_s32", ("armv7", "armv6"), "loop",
     "32 fixed steps of restoring division (the loop's back-edge)"),
]

# Loops whose every iteration count is fixed in the source, the body's count of runs
# (bounds.py walks them exactly that many times; tests/targets/test_determinism.py measures)
FIXED_TRIPS = {
    "cpm_div_s32": 32,  # for (int k = 31; k >= 0; k--): one quotient bit per step
}


# The only stencils with a conditional branch: the back-edge of a loop whose trip count
# is fixed when the program is compiled (cp.fori_loop / cp.scan), so every run takes it
# the same number of times. Its bounds count the exit path (`fewest`) once and the
# path back to the head (`most`) trips - 1 times (python/copapy/_bounds.py).
BACKEDGES = {
    "st_loop_i_mm": "loop back-edge: counter slot += 1, back to the loop head until it "
                    "reaches the end slot, both fixed at compile time",
}


def allowed(name, target):
    """The matching entry (pattern, targets, kind, reason), or None."""
    if name in BACKEDGES:
        return (name, "*", "backedge", BACKEDGES[name])
    if name.startswith("st_"):
        return None
    for entry in ALLOWED:
        pattern, targets, _, _ = entry
        if fnmatch.fnmatchcase(name, pattern) and (targets == "*" or target in targets):
            return entry
    return None
