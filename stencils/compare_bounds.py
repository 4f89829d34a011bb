"""Instruction counts per call of the math operations, at an older commit and now.

    python3 stencils/compare_bounds.py REV [--ops sin,cos,floordiv_i,...]
    python3 stencils/compare_bounds.py REV --packs [sin,pow,...]

Reads the golden disassembly of every target at git revision REV and in the working
tree, runs today's control-flow analysis (bounds.py) over both, and prints, per scalar
math operation and target, the fewest–most instructions one step executes (over every
operand place): "loop" where the old code had a data-dependent loop that the analysis
cannot bound. The figures for issue 19's "before and after" come from here.

--packs: per packed stencil (st_pack4_<op>_f<form>, gen_packs.py) on the targets that have
them, the instructions of one step and of its wrapper (the step less its helper
cpm_pack4_<op>_f: the lanes' loads, the call, the results' store, the saves), at REV and
now: what issue 23's packed call costs beyond the math.
"""

from __future__ import annotations

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bounds  # noqa: E402
import build  # noqa: E402

MATH = "sin cos tan asin acos atan atan2 exp log pow tanh sqrt floordiv mod".split()


def tables(rev):
    """{target: {stencil: bounds}} from the disassembly at `rev` (None: working tree)."""
    out = {}
    for t in build.TARGETS:
        path = build.paths(t)[1]
        if rev is None:
            text = open(path).read()
        else:
            rel = os.path.relpath(path, os.path.dirname(HERE))
            text = subprocess.run(["git", "show", f"{rev}:{rel}"], capture_output=True,
                                  text=True, check=True, cwd=os.path.dirname(HERE)).stdout
        out[t] = bounds.target_bounds(t, build.parse_functions(text))
    return out


def cell(tab, fam):
    names = bounds._families(tab).get(fam, [])
    if not names:
        return "—"
    return bounds._family_cell(tab, names).replace("**", "")


def _pack_cells(tab, name, helper):
    """The step's and its wrapper's most instructions in `tab` ("—" where missing)."""
    step, inner = (tab[n][1] if n in tab else None for n in (name, helper))
    return ("—" if step is None else str(step),
            "—" if step is None or inner is None else str(step - inner))


def packs(before, after, ops):
    print("| stencil | target | step then → now | wrapper then → now |")
    print("| --- | --- | --- | --- |")
    for t in build.TARGETS:
        names = sorted({n for tab in (before[t], after[t]) for n in tab if n.startswith("st_pack4_")})
        for name in names:
            op = name[len("st_pack4_"):].split("_f")[0]
            if ops and op not in ops:
                continue
            helper = f"cpm_pack4_{op}_f"
            (s0, w0), (s1, w1) = _pack_cells(before[t], name, helper), _pack_cells(after[t], name, helper)
            print(f"| `{name}` | {t} | {s0} → {s1} | {w0} → {w1} |")


def main(argv):
    if not argv or argv[0].startswith("-"):
        sys.exit(__doc__)
    if "--packs" in argv:
        rest = argv[argv.index("--packs") + 1:]
        packs(tables(argv[0]), tables(None), rest[0].split(",") if rest else [])
        return
    ops = MATH
    if "--ops" in argv:
        ops = argv[argv.index("--ops") + 1].split(",")
    before, after = tables(argv[0]), tables(None)
    targets = list(build.TARGETS)
    print("| operation | " + " | ".join(targets) + " |")
    print("| --- |" + " --- |" * len(targets))
    for op in ops:
        fam = op if op.endswith(("_f", "_i")) else f"{op}_f"
        cells = [f"{cell(before[t], fam)} → {cell(after[t], fam)}" for t in targets]
        print(f"| `{op}` | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
