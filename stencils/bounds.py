"""Instructions per call of every stencil and helper, from its control-flow graph.

For each target, every function of the golden disassembly (``<target>.dis``) is
classified by ``cfg.py``; a function without a cycle in its control flow gets the
fewest and the most instructions on any path from its entry to its return or to its
tail jump to ``cp_next`` (which the linker drops: it counts 0, or 1 where the linker
keeps it before an ARM literal pool). A call counts the call instruction(s) plus the
callee's bounds, so a stencil's numbers include the helpers it calls.

Loops whose trip count is fixed in the source are walked that many times
(``branch_allowlist.FIXED_TRIPS``: ``cpm_div_s32``). The 1-D array kernels
(``LINEAR_KERNELS``: element-wise operations, selects, widen/narrow, sum/dot/min/max),
whose loops each
run at most n times for n elements, get [fewest, a, b]: at most a + b * n instructions
(``cfg.linear_loop_bounds``), and so do the stencils that call them. The other array
kernels (nested loops: reductions, matmul, sorting, windows, ...) are recorded without
bounds (``null``), as are their stencils.

``build.py`` writes the table to ``python/copapy/_instruction_bounds.json`` (read by
``tg.max_instructions()`` / ``tg.min_instructions()``) and ``--check`` fails when the
committed table differs from the one computed from the committed disassembly.
"""

from __future__ import annotations

import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import branch_allowlist  # noqa: E402
import cfg  # noqa: E402

TABLE = os.path.join(os.path.dirname(HERE), "python", "copapy", "_instruction_bounds.json")
# Cortex-M4 cycles per call (cycles.py), read by tg.max_cycles() / tg.min_cycles()
CYCLES = os.path.join(os.path.dirname(HERE), "python", "copapy", "_cycle_bounds.json")


def _tail_counts(insns):
    """1 when data (an ARM literal pool) follows the last instruction: the linker then
    keeps the tail jump as a jump over it; else 0 (dropped)."""
    last_code = max((k for k, i in enumerate(insns) if not i[3]), default=-1)
    return 1 if any(i[3] for i in insns[last_code + 1:]) else 0


# 1-D array kernels: element loops that each run at most n times (cfg.linear_loop_bounds)
# and the 1-D reductions (8 lanes, then a tail: every loop advances towards n)
LINEAR_KERNELS = re.compile(r"^cpm_arr_([a-z0-9]+_[fi]_(aa|as|sa|a)|select_f_a[as][as]"
                            r"|widen_b|narrow_[fi]|(sum|dot|min|max)_[fi]"
                            r"|dot_(add|sub|mul)_f_(aa|as|sa))$")


def target_bounds(target, funcs, weight=None):
    """{name: (fewest, most) or (fewest, a, b) for a + b * n, or None} for one target;
    with `weight` (an instruction's (fewest, most) cost, cycles.py) the costs."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20000))
    out = {}

    def bounds_of(name):
        if name in out:
            if out[name] is None:
                raise cfg.Loop(name)
            return out[name]
        out[name] = None  # a call cycle raises Loop instead of recursing forever
        insns = funcs[name]
        try:
            if LINEAR_KERNELS.match(name):
                out[name] = cfg.linear_loop_bounds(target, insns, callee_pair, weight)
                if out[name] is None:
                    raise cfg.Loop(name)
                return out[name]
            per_n = sum(len(b) == 3 and b[2] for b in
                        (bounds_of(c) for c in _callees(target, insns)))
            lo, hi = cfg.path_bounds(target, insns, callee_pair, _tail_counts(insns),
                                     branch_allowlist.FIXED_TRIPS.get(name), weight)
            out[name] = (lo, hi, per_n) if per_n else (lo, hi)
        except cfg.Loop:
            out[name] = None
            raise
        return out[name]

    def callee_pair(name):
        b = bounds_of(name)
        return b[0], b[1]

    for name in funcs:
        try:
            bounds_of(name)
        except cfg.Loop:
            pass
    return out


def _callees(target, insns):
    return sorted({i.callee for i in cfg.classify(target, insns)
                   if i.kind in ("call", "tailcall")})


# the array stencils whose instruction count depends on element values, per target
VARYING = os.path.join(os.path.dirname(HERE), "python", "copapy", "_data_dependent_arrays.json")


def data_dependent(target, funcs, tab):
    """The array stencils (st_arr_*) that reach, through their calls, a helper whose
    fewest and most instructions differ (a math function with paths: sin, cos, tan):
    their count depends on the element values, so copapy bounds them by the static
    a + b·n; every other array step has one count per shape (``_step_count.py``)."""
    varies = {}

    def reaches(name):
        if name not in varies:
            varies[name] = False
            b = tab.get(name)
            own = not name.startswith("cpm_arr_") and name.startswith("cpm_") and (
                b is None or b[0] != b[1])
            varies[name] = own or any(reaches(c) for c in _callees(target, funcs[name]))
        return varies[name]

    return sorted(n for n in funcs if n.startswith("st_arr_") and reaches(n))


def table(functions):
    """{target: {name: [fewest, most] or None}} from {target: its golden disassembly's
    functions, as build.parse_functions gives them}."""
    return {t: {n: (list(b) if b else None)
                for n, b in sorted(target_bounds(t, fns).items())}
            for t, fns in functions.items()}


def encode(tab):
    """One function per line, so a rebuild's diff shows which counts changed."""
    lines = ["{"]
    for k, t in enumerate(sorted(tab)):
        lines.append(f"{json.dumps(t)}: {{")
        names = sorted(tab[t])
        for j, n in enumerate(names):
            comma = "," if j + 1 < len(names) else ""
            lines.append(f"{json.dumps(n)}: {json.dumps(tab[t][n])}{comma}")
        lines.append("}" + ("," if k + 1 < len(tab) else ""))
    lines.append("}")
    return "\n".join(lines) + "\n"


DOC = os.path.join(os.path.dirname(HERE), "docs", "determinism.md")
_PLACES = re.compile(r"^st_(?P<op>[a-z0-9]+)_(?P<ty>[fi])_[rm0-9]+_(r[01])$|"
                                   r"^st_(?P<op2>[a-z0-9]+)_(?P<ty2>[fi])_[rm0-9]+$")


def _cell(b):
    if b is None:
        return "loop"
    lo, hi = b
    return f"{lo}" if lo == hi else f"{lo}–{hi}"


def _families(names):
    """{'add_f': [stencil names]} for the scalar stencils (not arrays, not selects)."""
    fams = {}
    for n in names:
        m = _PLACES.match(n)
        if not m or n.startswith("st_arr_") or n.startswith("st_loop_"):
            continue
        op, ty = (m.group("op"), m.group("ty")) if m.group("op") else (m.group("op2"),
                                                                         m.group("ty2"))
        fams.setdefault(f"{op}_{ty}", []).append(n)
    return fams


def _family_cell(tab, names):
    bs = [tab.get(n) for n in names]
    if any(b is None for b in bs):
        return "loop"
    lo, hi = min(b[0] for b in bs), max(b[1] for b in bs)
    const = all(b[0] == b[1] for b in bs)
    if const:
        return f"{lo}" if lo == hi else f"{lo}..{hi}"
    return f"**{lo}–{hi}**"


def _array_family(name):
    """st_arr_add_f_aa -> add_f: a kernel over its operand forms."""
    fam = name[len("st_arr_"):]
    return re.sub(r"_(aa|as|sa|a|aaa|aas|asa|ass|ss|a[as][as])$", "", fam)


def _array_kernels(tab, targets, varying):
    """The array section of the doc: which array steps have one count per shape on
    which target, and which are bounded (their helper has data-dependent paths)."""
    fams = {}
    for t in targets:
        for n in tab[t]:
            if n.startswith("st_arr_"):
                fams.setdefault(_array_family(n), set()).add(n)
    bounded = {f for f, names in fams.items()
               if any(n in varying.get(t, ()) for t in targets for n in names)}
    constant = sorted(set(fams) - bounded)
    out = ["\n## Array operations\n\n",
           "One count per compiled program (the shape decides it, the elements do not) on "
           "every target, counted by running the step alone: "
           + ", ".join(f"`{f}`" for f in constant) + ".\n\n"]
    if not bounded:
        return out
    out += ["Bounded on the targets marked (a helper with data-dependent paths: a + b·n "
            "from the table below), one count per shape elsewhere:\n\n",
            "| | " + " | ".join(targets) + " |\n| --- |" + " --- |" * len(targets) + "\n"]
    for f in sorted(bounded):
        cells = ["bounded" if any(n in varying.get(t, ()) for n in fams[f]) else "per shape"
                 for t in targets]
        out.append(f"| `{f}` | " + " | ".join(cells) + " |\n")
    return out


def _array_exceptions(array_varying):
    """The sentence naming the array steps whose helper has data-dependent paths."""
    names = sorted({_array_family(n) for listed in (array_varying or {}).values() for n in listed})
    if not names:
        return ("No array step calls a helper with data-dependent paths, so every array "
                "step's count is exact. ")
    return ("The exceptions are the array steps that call a helper with data-dependent "
            "paths (" + ", ".join(f"`{n}`" for n in names) + "), bounded by the static "
            "a + b·n of the last table. ")


def doc(tab, cyc=None, array_varying=None):
    """docs/determinism.md: generated from the bounds table and the allow-list."""
    import branch_allowlist
    targets = list(tab)
    head = "| | " + " | ".join(targets) + " |\n| --- |" + " --- |" * len(targets) + "\n"
    out = [
        "# Determinism: instruction counts per run\n\n",
        "<!-- generated by stencils/build.py (stencils/bounds.py) from the golden "
        "disassembly; do not edit -->\n\n",
        "Every stencil but the loop back-edge is straight-line code on every target: "
        "`stencils/build.py --check` decodes each target's code and fails on a conditional "
        "branch in another stencil, and "
        "allows one in a helper only by name, from `stencils/branch_allowlist.py` (below). "
        "From each function's control-flow graph the build computes the fewest and the most "
        "instructions one call executes (a call includes the helper it calls; a stencil's "
        "tail jump is dropped by the linker and not counted). `tg.max_instructions()` and "
        "`tg.min_instructions()` add these up over a compiled program's steps and its final "
        "`st_return`; they are equal when the program is branch-free, and "
        "`tests/targets/test_determinism.py` checks both against instructions counted in the "
        "emulator (unicorn) on every target. A saved program carries both numbers (program "
        "format version 4, `docs/program-format.md`), so a program read with `cp.load` "
        "answers the same methods and `copapy-run PROGRAM --info` prints them.\n\n",
        "Array operations branch on their shape only (element counts and shape words "
        "fixed when the program is compiled; `branch_allowlist.py` allows a conditional "
        "branch in an array kernel on nothing else, and the build rejects a short forward "
        "branch there, the shape of a select compiled to a branch), so every array step "
        "executes one number of instructions per compiled program, whatever its elements. "
        "`tg.max_instructions()` finds that number by running the step alone: the "
        "compiler links the step with the program's data (its shape words) and "
        "`st_return` into a program of its own, which runs in the emulator "
        "(`python/copapy/_step_count.py`, unicorn, the `emulate` extra), each executed "
        "block's instructions counted; the count of an element-wise step or 1-D reduction "
        "must lie within the static a + b·n of its control-flow graph (last table), or "
        "`max_instructions()` refuses it. Array steps therefore add exact counts, loops over a "
        "shape included (sorting networks, matmul, solve/det/inv, convolution, pooling, "
        "axis reductions, strided copies and gathers). " + _array_exceptions(array_varying)
        + "Without the emulator installed, element-wise steps fall back to the static "
        "a + b·n bound. "
        "`tests/targets/test_array_bounds.py` runs every array kernel on every target over "
        "adversarial elements (NaN, infinities, signed zeros, subnormals, huge values, "
        "INT_MIN, -1, 0; sorted, reverse-sorted and equal inputs) and finds that count each "
        "time, and `tests/deploy/test_qemu_counts.py` counts the same programs a second, "
        "independent way: qemu-user's execution log, one instruction per block, on "
        "x86_64, AArch64, ARMv7, ARMv6 and RV64. ARMv6/ARMv7's `cpm_div_s32` behind int `//` "
        "and `%` is a loop of 32 fixed steps, walked 32 times; the exact `fmod` behind float "
        "`//` and `%` has its two fixed loops fully unrolled.\n\n",
        "## Scalar operations\n\n",
        "Instructions per step, over every operand place and destination (`a..b`: constant "
        "for each place, `a` to `b` over places); **bold** ranges depend on the data "
        "(a math helper's paths).\n\n",
        head,
    ]
    fams = _families(tab[targets[0]])
    for fam in sorted(fams):
        cells = [_family_cell(tab[t], _families(tab[t]).get(fam, [])) for t in targets]
        out.append(f"| `{fam}` | " + " | ".join(cells) + " |\n")
    packs = sorted({n for t in targets for n in tab[t] if n.startswith("st_pack4_")})
    if packs:
        out += ["\n## Packed math\n\n",
                "Up to four independent scalar calls of one function as one step "
                "(`stencils/gen_packs.py`, `crates/copapy-compiler/src/pack.rs`; only where the "
                "object has the stencils, — elsewhere): straight-line SIMD code, one count "
                "whatever the lanes hold.\n\n", head]
        for name in packs:
            out.append(f"| `{name}` | " + " | ".join(_cell(tab[t].get(name)) if name in tab[t]
                                                     else "—" for t in targets) + " |\n")
    out += ["\n## Loop back-edge\n\n",
            "`st_loop_i_mm` ends every trip of a `cp.fori_loop` / `cp.scan` body (the one "
            "stencil with a conditional branch, `branch_allowlist.BACKEDGES`): instructions "
            "when it leaves the loop – when it jumps back to the head. A loop of T trips "
            "costs T − 1 times the second number and once the first "
            "(`python/copapy/_bounds.py`).\n\n", head]
    for name in sorted(branch_allowlist.BACKEDGES):
        out.append(f"| `{name}` | " + " | ".join(_cell(tab[t].get(name)) for t in targets)
                   + " |\n")
    helpers = sorted({n for t in targets for n in tab[t] if n.startswith("cpm_")
                      and not n.startswith("cpm_arr_")})
    varying = [n for n in helpers if any(tab[t].get(n) and tab[t][n][0] != tab[t][n][1]
                                         for t in targets)]
    constant = [n for n in helpers if n not in varying]
    out += ["\n## Math helpers\n\n",
            "Instructions per call of each helper, fewest–most over all inputs (the paths "
            "for NaN, infinities, zeros, huge and tiny arguments included). Constant on "
            "every target (branch-free, or a loop of fixed trips): "
            + ", ".join(f"`{n}`" for n in constant) + ". Bounded, depending on the "
            "argument: " + (", ".join(f"`{n}`" for n in varying) or "none") + ".\n\n", head]
    for n in helpers:
        out.append(f"| `{n}` | " + " | ".join(_cell(tab[t].get(n)) if n in tab[t] else "—"
                                               for t in targets) + " |\n")
    if cyc:
        for t, ctab in cyc.items():
            out += [f"\n## {t} cycles\n\n",
                    "Cycles per call from the core's documented instruction timings "
                    "(`stencils/cycles.py` has the table and its source), assuming code and "
                    "data in zero-wait-state memory, no interrupt and no bus contention: "
                    "`tg.max_cycles()` / `tg.min_cycles()` sum them over a program on "
                    "this target; an array step's cycles are its run's instructions "
                    "(above) weighted by the same rules (`python/copapy/_m4_cycles.py`), "
                    "and `sin`/`cos`/`tan` over arrays are bounded by a + b·n cycles from the "
                    "same walk as their instructions. A conditional branch "
                    "is charged as taken on every path, so the maximum is an upper bound "
                    "even for a branch-free program.\n\n",
                    "| helper | cycles |\n| --- | --- |\n"]
            for n in helpers:
                if n in ctab:
                    out.append(f"| `{n}` | {_cell(ctab[n])} |\n")
            fams = _families(ctab)
            out += ["\n| scalar operation | cycles per step, over operand places |\n"
                    "| --- | --- |\n"]
            for fam in sorted(fams):
                out.append(f"| `{fam}` | {_family_cell(ctab, fams[fam]).replace('**', '')} |\n")
    out += _array_kernels(tab, targets, array_varying or {})
    out += ["\n## Static bounds of element-wise steps\n\n",
            "Most instructions of one element-wise step or 1-D reduction for n elements, "
            "`a + b·n`, from the control-flow graph, over the step's forms (array–array, "
            "array–scalar, scalar–array): the bound of a `sin`/`cos`/`tan` array step, and "
            "of every element-wise step when the emulator is not installed (an upper bound, "
            "not tight: every loop, a vectorised one included, is charged up to n "
            "iterations); the fewest is a few instructions (n = 0).\n\n", head]
    arr = {}
    for t in targets:
        for n, b in tab[t].items():
            m = re.match(r"^st_arr_([a-z0-9]+_[fi])_(aa|as|sa|a)$", n) or re.match(
                r"^st_arr_((sum|dot|min|max)_[fi]|dot_(add|sub|mul)_f)(_(aa|as|sa))?$", n)
            if m and b is not None and len(b) == 3:
                a0, b0 = arr.setdefault(m.group(1), {}).get(t, (0, 0))
                arr[m.group(1)][t] = (max(a0, b[1]), max(b0, b[2]))
    for fam in sorted(arr):
        cells = [f"{arr[fam][t][0]} + {arr[fam][t][1]}n" if t in arr[fam] else "—"
                 for t in targets]
        out.append(f"| `{fam}` | " + " | ".join(cells) + " |\n")
    out += ["\n## Allowed conditional branches\n\n",
            "From `stencils/branch_allowlist.py`; every other function must have none.\n\n",
            "| functions | targets | kind | reason |\n| --- | --- | --- | --- |\n"]
    groups = {}
    for pattern, tg, kind, reason in branch_allowlist.ALLOWED:
        groups.setdefault((tg, kind, reason), []).append(pattern)
    for (tg, kind, reason), patterns in groups.items():
        tgs = "all" if tg == "*" else ", ".join(tg)
        names = " ".join(f"`{p}`" for p in patterns)
        out.append(f"| {names} | {tgs} | {kind} | {reason} |\n")
    return "".join(out)
