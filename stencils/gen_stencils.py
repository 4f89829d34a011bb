#!/usr/bin/env python3
"""Generate stencils/generated/stencils.c from the op table (optable.py).

A stencil is one operation applied to operands in fixed places, with the result in a
fixed register (see README.md for the ABI). The semantics of each operation live in
ops.h as op_<op>_<type>(); this script only enumerates the combinations:

    binary:  st_<op>_<ty>_<x><y>_<dst>   x, y in {r0, r1, m}; dst in {r0, r1}; in the
                                         "mm" form x is the data slot and y the second
                                         data slot (cp_mf2 / cp_mi2)
    unary:   st_<op>_<ty>_<x>_<dst>      x in {r0, r1, m}; dst in {r0, r1}
    select:  st_select_f_<c><x><y>_<dst> c in {r0, r1} (int register), x, y float places
                                         as for binary; dst in {r0, r1}
    store:   st_store_<ty>_<x>           x in {r0, r1}
    sincos:  st_sincos_f_<x>_<dst>       sin(x) to register dst, cos(x) to cp_mf2;
             st_cossin_f_<x>_<dst>       cos(x) to dst, sin(x) to cp_mf2 (one reduction)
    fused:   st_<name>_f_<places>_<dst>   multiply-add superinstructions (optable.FUSED):
                                         operand k in a register or the slot behind cp_a<k>
    loop:    st_loop_i_mm                 back-edge: cp_mi += 1, jump to cp_head unless == cp_mi2
    return:  st_return
    arrays:  st_arr_... (gen_arrays.py: one stencil per array operation and its loop kernel)
    packed:  st_pack4_... (gen_packs.py: four scalar math calls in SIMD lanes, x86_64 and
             AArch64 only)

Usage: gen_stencils.py [--check] [--list]
  (no option)  write generated/stencils.c
  --check      exit 1 if generated/stencils.c differs from what the table gives
  --list       print the stencil names, one per line
Plain Python 3.11, no dependencies.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_arrays  # noqa: E402
import gen_calls  # noqa: E402
import gen_packs  # noqa: E402
import gen_windows  # noqa: E402
import optable  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "generated", "stencils.c")

# ---------------------------------------------------------------- the table
# (operand type, result type): operations, from the one op table (optable.py)
BINARY = optable.grouped(2)
UNARY = optable.grouped(1)
STORE_TYPES = "f i"

# Where each location code lives, per type: registers are the stencil's parameters,
# m is the data slot hole.
PLACE = {
    "f": {"r0": "a", "r1": "b", "m": "cp_mf", "m2": "cp_mf2"},
    "i": {"r0": "i", "r1": "j", "m": "cp_mi", "m2": "cp_mi2"},
}
LOCS = ("r0", "r1", "m")
DSTS = ("r0", "r1")
# select keeps one operand in a register; binary ops also read both from memory ("mm"),
# which saves the load a scheduler would otherwise need
BIN_PLACES = [(x, y) for x in LOCS for y in LOCS if not (x == "m" and y == "m")]
BIN_PLACES_MM = BIN_PLACES + [("m", "m")]

# ---------------------------------------------------------------- generation
SIG = "(f32 a, f32 b, i32 i, i32 j)"
LOOP_BACKEDGE = "st_loop_i_mm"
TAIL = "    NEXT(a, b, i, j);\n"


def stencil(name, body):
    return f"void {name}{SIG} {{\n{body}{TAIL}}}\n"


def generate():
    """Yield (name, C source) for every stencil, in a fixed order."""
    for (ty, rty), ops in BINARY.items():
        for op in ops.split():
            for x, y in BIN_PLACES_MM:
                for dst in DSTS:
                    name = f"st_{op}_{ty}_{x}{y}_{dst}"
                    second = "m2" if (x, y) == ("m", "m") else y
                    expr = f"op_{op}_{ty}({PLACE[ty][x]}, {PLACE[ty][second]})"
                    yield name, stencil(name, f"    {PLACE[rty][dst]} = {expr};\n")
    for (ty, rty), ops in UNARY.items():
        for op in ops.split():
            for x in LOCS:
                for dst in DSTS:
                    name = f"st_{op}_{ty}_{x}_{dst}"
                    expr = f"op_{op}_{ty}({PLACE[ty][x]})"
                    yield name, stencil(name, f"    {PLACE[rty][dst]} = {expr};\n")
    # select (cp.iif): the condition is an int register, the operands floats
    for c in DSTS:
        for x, y in BIN_PLACES:
            for dst in DSTS:
                name = f"st_select_f_{c}{x}{y}_{dst}"
                expr = f"op_select_f({PLACE['i'][c]}, {PLACE['f'][x]}, {PLACE['f'][y]})"
                yield name, stencil(name, f"    {PLACE['f'][dst]} = {expr};\n")
    for ty in STORE_TYPES.split():
        for x in DSTS:
            name = f"st_store_{ty}_{x}"
            yield name, stencil(name, f"    {PLACE[ty]['m']} = {PLACE[ty][x]};\n")
    # sin and cos of one value from one range reduction (cpm_sincosf): `sincos` leaves sin
    # in register dst and writes cos to the second data slot, `cossin` the other way
    # round (the scheduler fuses cp.sin(x) and cp.cos(x) into one of them)
    yield from sincos_stencils()
    # multiply-add superinstructions (optable.FUSED): products and sums rounded one by one
    yield from fused_stencils()
    # array operations: one stencil per operation calling its loop kernel
    yield from gen_arrays.generate()
    # up to four independent scalar math calls in SIMD lanes (x86_64, AArch64 only)
    yield from gen_packs.generate()
    # convolution and pooling: sliding-window loop kernels
    yield from gen_windows.generate()
    # the back-edge of a fixed-trip-count loop (cp.fori_loop / cp.scan): counter slot
    # cp_mi += 1, then back to the loop head (cp_head) unless it reached the end slot
    # cp_mi2. The exit is marked unlikely so every target lays out the jump to cp_next
    # last (the tail jump the linker drops); the conditional branch is the one allowed
    # in a stencil (branch_allowlist.BACKEDGES): its trip count is fixed at compile time.
    yield LOOP_BACKEDGE, (
        f"void {LOOP_BACKEDGE}{SIG} {{\n"
        "    i32 c = cp_mi + 1;\n"
        "    cp_mi = c;\n"
        "    if (__builtin_expect(c == cp_mi2, 0)) {\n"
        "        NEXT(a, b, i, j);\n"
        "    }\n"
        "    __attribute__((musttail)) return cp_head(a, b, i, j);\n"
        "}\n")
    # calls of imported functions (cp.extern) through the import table
    yield from gen_calls.generate()
    # the end of every chain: a plain return to the caller
    yield "st_return", f"void st_return{SIG} {{\n}}\n"


def sincos_stencils():
    for first, (reg, mem) in (("sincos", ("s", "c")), ("cossin", ("c", "s"))):
        for x in LOCS:
            for dst in DSTS:
                name = f"st_{first}_f_{x}_{dst}"
                body = (f"    f32 c, s = cpm_sincosf({PLACE['f'][x]}, &c);\n"
                        f"    cp_mf2 = {mem};\n    {PLACE['f'][dst]} = {reg};\n")
                yield name, stencil(name, body)


def split_places(form):
    """"r0mm" -> ["r0", "m", "m"]: a register is two letters, memory one."""
    out = []
    while form:
        n = 1 if form.startswith("m") else 2
        out.append(form[:n])
        form = form[n:]
    return out


def fused_expr(fused, places):
    """The C expression of a fused stencil: its ops' op_<op>_f over the operands, a
    memory operand k read from the float alias of hole cp_a<k> (FUSED_HOLES)."""
    expr = re.sub(r"([a-z]+)\(", r"op_\1_f(", fused.expr)
    where = {v: (f"cp_af{k}" if p == "m" else PLACE["f"][p])
             for k, (v, p) in enumerate(zip(fused.operands, places, strict=True))}
    return re.sub(r"\b([a-z])\b", lambda m: where[m.group(1)], expr)


# the data slots of a fused stencil's memory operands: the array holes cp_a0..cp_a3,
# declared as floats (a char array's load would be an unaligned integer load on ARM)
FUSED_HOLES = "".join(f'extern f32 cp_af{k} __asm__("cp_a{k}");\n' for k in range(4))


def fused_stencils():
    yield "", FUSED_HOLES
    for fused in optable.FUSED:
        for form in fused.forms.split():
            places = split_places(form)
            assert len(places) == len(fused.operands), (fused.name, form)
            for dst in DSTS:
                name = f"st_{fused.name}_f_{form}_{dst}"
                body = f"    {PLACE['f'][dst]} = {fused_expr(fused, places)};\n"
                yield name, stencil(name, body)


HEADER = """\
/* GENERATED by stencils/gen_stencils.py from its table: do not edit.
 * {count} stencils; semantics in ops.h, ABI in README.md. */
#include "../ops.h"
#include "../mathlib.c"
#include "../arrays.h"

"""


def source():
    items = list(generate())
    names = [n for n, _ in items if n]
    assert len(names) == len(set(names)), "duplicate stencil names"
    return HEADER.format(count=len(names)) + "\n".join(src for _, src in items)


def names():
    return [n for n, _ in generate() if n]


def main(argv):
    text = source()
    if "--list" in argv:
        print("\n".join(names()))
        return 0
    if "--check" in argv:
        try:
            old = open(OUT, encoding="utf-8").read()
        except FileNotFoundError:
            old = None
        if old != text:
            print(f"{OUT} is out of date: run python3 stencils/gen_stencils.py", file=sys.stderr)
            return 1
        print(f"{os.path.relpath(OUT)}: up to date ({len(names())} stencils)")
        return 0
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    print(f"wrote {os.path.relpath(OUT)} ({len(names())} stencils)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
