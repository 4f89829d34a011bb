"""Control flow of the stencil objects, read from their golden disassembly.

Every instruction of a function (``build.parse_functions``) is classified as a
conditional branch, a jump inside the function, a return, the tail jump to
``cp_next``, a call of a helper, or straight-line code. From that come two things the
stencil build checks and records:

* the conditional branches (``build.py --check`` rejects those outside
  ``branch_allowlist.py``), and
* the fewest and most instructions a call of the function executes, when its control
  flow is loop-free (``bounds.py``).

The classification is by mnemonic and relocation, per instruction set. Conditionally
executed instructions that are not branches (x86 ``cmov``, AArch64 ``csel``, ARM
predicated and IT-block instructions) are straight-line code: they execute, as one
instruction each, whatever the data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# conditional branches, by instruction set; the destination is the first hex address
_COND = {
    "x86": re.compile(r"^j(?!mp\b)[a-z]+$"),
    "a64": re.compile(r"^(b\.[a-z]+|cbn?z|tbn?z)$"),
    "arm": re.compile(r"^(b(eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le)(\.w|\.n)?|cbn?z)$"),
    "rv": re.compile(r"^(c\.)?(beq|bne|blt|bge|bltu|bgeu|beqz|bnez|blez|bgez|bltz|bgtz|bgt|ble"
                     r"|bgtu|bleu)$"),
}
# ARM returns that depend on a condition: bxlt lr, poplt {.., pc}
_ARM_COND_RET = re.compile(r"^(bx|pop|ldm\w*)(eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le)"
                           r"(\.w|\.n)?$")
_JUMP = {"x86": {"jmp"}, "a64": {"b"}, "arm": {"b", "b.w", "b.n"}, "rv": {"j", "c.j"}}
_CALL = {"x86": {"call", "callq"}, "a64": {"bl"}, "arm": {"bl", "blx"}, "rv": {"jalr"}}
# a call through a function pointer: only the import calls st_call_* make one (the
# callee is the runner's function; its cost is not part of the program's bounds)
_ICALL = {
    "x86": re.compile(r"^(call|callq)\s+\*"),
    "a64": re.compile(r"^blr\s"),
    "arm": re.compile(r"^blx\s+r"),
    "rv": re.compile(r"^(c\.)?jalr\b"),
}
# control transfers with a computed destination (none is expected: build.py rejects them)
_INDIRECT = {
    "x86": re.compile(r"^(jmp|call|callq)\s+\*"),
    "a64": re.compile(r"^(br|blr|braa|blraa)\s"),
    "arm": re.compile(r"^(tbb|tbh|blx\s+r|bx\s+r(?!.*lr)|mov\S*\s+pc,|ldr\S*\s+pc,|add\S*\s+pc,)"),
    "rv": re.compile(r"^(c\.)?(jalr|jr)\b"),
}
_ADDR = re.compile(r"(?:0x)?([0-9a-f]+) <")
_LAST_HEX = re.compile(r"0x([0-9a-f]+)$")  # RISC-V branches sometimes print no <label>


def isa(target):
    if target == "x86_64":
        return "x86"
    if target == "aarch64":
        return "a64"
    if target.startswith("riscv"):
        return "rv"
    return "arm"


@dataclass(frozen=True)
class Insn:
    offset: int
    text: str
    # "op", "cond", "cond_ret", "jump", "ret", "tail", "tail_part" (RISC-V's auipc of
    # the tail jump), "call", "tailcall"
    kind: str
    dest: int | None = None  # branch destination (offset in the function)
    callee: str | None = None  # helper called (call, tailcall)


def _is_return(family, mnem, ops):
    if family in ("x86", "a64"):
        return mnem in ("ret", "retq")
    if family == "rv":
        return mnem in ("ret", "c.jr") and (mnem == "ret" or ops.strip() == "ra") or (
            mnem == "jr" and ops.strip() == "ra")
    return (mnem == "bx" and ops.strip() == "lr") or (
        mnem in ("pop", "pop.w", "ldm", "ldm.w", "ldmia", "ldmia.w") and "pc" in ops)


def classify(target, insns):
    """[Insn] for one function's code (``parse_functions`` entries, data excluded)."""
    family = isa(target)
    code = [i for i in insns if not i[3]]
    out = []
    for k, (off, text, relocs, _) in enumerate(code):
        parts = text.split(None, 1)
        mnem, ops = parts[0], (parts[1].strip() if len(parts) > 1 else "")
        syms = [sym for _, sym, _ in relocs]
        # RISC-V calls and tail jumps are auipc + jalr/jr, the relocation on the auipc
        if family == "rv" and k > 0 and mnem in ("jalr", "jr"):
            syms = [sym for _, sym, _ in code[k - 1][2]]
        if family == "rv" and mnem == "auipc" and "cp_next" in syms:
            out.append(Insn(off, text, "tail_part"))  # dropped with the jr after it
            continue
        if "cp_head" in syms and not (family == "rv" and mnem == "auipc"):
            # the loop back-edge (st_loop_*) leaves the stencil for the loop head: the
            # path ends there, as at a return (a conditional one may also fall through)
            out.append(Insn(off, text, "cond_head" if _COND[family].match(mnem) else "head"))
            continue
        dest = None
        m = _ADDR.search(ops) or _LAST_HEX.search(ops)
        if m:
            dest = int(m.group(1), 16)
        if _COND[family].match(mnem):
            out.append(Insn(off, text, "cond", dest))
        elif family == "arm" and _ARM_COND_RET.match(mnem) and (
                mnem.startswith("bx") or "pc" in ops):
            out.append(Insn(off, text, "cond_ret"))
        elif "cp_next" in syms:
            out.append(Insn(off, text, "tail"))
        elif mnem in _CALL[family] and any(s.startswith("cpm_") for s in syms) and (
                family != "rv" or ops.startswith("ra")):
            out.append(Insn(off, text, "call", callee=next(s for s in syms if s.startswith("cpm_"))))
        elif (mnem in _JUMP[family] or (family == "rv" and mnem == "jr")) and any(
                s.startswith("cpm_") for s in syms):
            out.append(Insn(off, text, "tailcall",
                            callee=next(s for s in syms if s.startswith("cpm_"))))
        elif mnem in _JUMP[family] and dest is not None:
            out.append(Insn(off, text, "jump", dest))
        elif _is_return(family, mnem, ops):
            out.append(Insn(off, text, "ret"))
        elif _ICALL[family].match(text) and not (family == "rv" and ops.startswith("zero")):
            out.append(Insn(off, text, "icall"))
        elif _INDIRECT[family].match(text):
            # a jump table or a call through a register: no fixed graph
            out.append(Insn(off, text, "indirect"))
        else:
            out.append(Insn(off, text, "op"))
    return out


def conditional_branches(target, insns):
    return [i for i in classify(target, insns) if i.kind in ("cond", "cond_ret")]


class Loop(Exception):
    """The function's control flow has a cycle: no fixed bound from the graph alone."""


def path_bounds(target, insns, callee_bounds, tail_counts, trips=None, weight=None):
    """(fewest, most) instructions one call executes, from entry to a return or the
    tail jump; the tail jump counts as `tail_counts` instructions (0 where the linker
    drops it), a call as the call instruction(s) plus the callee's bounds.

    Control flow with a cycle raises Loop, unless `trips` gives the fixed trip count of
    every loop of the function: then a loop's body runs exactly `trips` times (its
    back-edge is taken trips - 1 times per entry, paths that leave earlier or stay
    longer are infeasible).

    `weight(insn)` gives an instruction's (fewest, most) cost instead of 1 (cycles:
    ``cycles.py``); the dropped tail jump then costs `tail_counts` times a jump's."""
    cls = classify(target, insns)
    if weight is None:
        def weight(_i):
            return (1, 1)
    for i in cls:
        if i.kind == "indirect":
            raise ValueError(f"{i.text!r} jumps to a computed address: no bound")
    index = {i.offset: k for k, i in enumerate(cls)}
    memo = {}
    on_path = set()

    def step(i, k, counts):
        """Successor states of instruction k: [(k', counts')]."""
        if i.kind == "cond" and i.dest <= i.offset and trips is not None:
            c = dict(counts).get(i.dest, 0)
            if c < trips - 1:  # the back-edge is taken
                return [(index[i.dest], _set(counts, i.dest, c + 1))]
            return [(k + 1, _set(counts, i.dest, 0))]
        if i.kind == "jump" and i.dest <= i.offset and trips is not None:
            c = dict(counts).get(i.dest, 0)
            return [(index[i.dest], _set(counts, i.dest, c + 1))] if c < trips - 1 else []
        if i.kind == "cond":
            return [(index[i.dest], counts), (k + 1, counts)]
        if i.kind == "jump":
            return [(index[i.dest], counts)]
        return [(k + 1, counts)]

    def walk(k, counts=()):
        key = (k, counts)
        if key in memo:
            return memo[key]
        if k >= len(cls):
            raise ValueError(f"control runs off the end of the function at {k}")
        if key in on_path:
            raise Loop(cls[k].text)
        on_path.add(key)
        i = cls[k]
        own, extra = weight(i), (0, 0)
        if i.kind in ("ret", "head"):
            r = own
        elif i.kind == "tail":
            r = (tail_counts * own[0], tail_counts * own[1])
        elif i.kind in ("jump", "cond") and i.dest not in index:
            raise ValueError(f"branch {i.text!r} leaves the function or has no destination")
        elif i.kind == "tailcall":
            c_lo, c_hi = callee_bounds(i.callee)
            r = (own[0] + c_lo, own[1] + c_hi)
        else:
            if i.kind == "tail_part":
                own = (0, 0)
            elif i.kind == "call":
                extra = callee_bounds(i.callee)
            nexts = [walk(kk, cc) for kk, cc in step(i, k, counts)]
            nexts = [b for b in nexts if b is not None]
            if i.kind in ("cond_ret", "cond_head"):
                nexts.append((0, 0))
            r = None if not nexts else (own[0] + extra[0] + min(b[0] for b in nexts),
                                        own[1] + extra[1] + max(b[1] for b in nexts))
        on_path.discard(key)
        memo[key] = r
        return r

    r = walk(0)
    if r is None:
        raise ValueError("no feasible path through the function with the given trip counts")
    return r


def _set(counts, header, value):
    d = dict(counts)
    if value:
        d[header] = value
    else:
        d.pop(header, None)
    return tuple(sorted(d.items()))


_IMMEDIATE_MOVE = re.compile(r"^((c\.)?li|lui|movs?(\.w)?|movw|movt|mvn)\s.*[#$]|^(c\.)?li\s|^lui\s")


def _register_move(i):
    """Straight-line code that reads no memory and loads no immediate: what a select
    of one register or the other leaves in the branch's shadow. Skips that load an
    element, add a tap or set a count from an immediate are loop control."""
    return i.kind == "op" and "(" not in i.text and "[" not in i.text and not \
        _IMMEDIATE_MOVE.match(i.text)


def branch_errors(target, funcs, allowed, skip_limit):
    """Conditional branches that the allow-list does not cover, as messages.

    `funcs` is ``build.parse_functions`` output; `allowed(name, target)` gives the
    allow-list entry or None."""
    errors = []
    for name, insns in sorted(funcs.items()):
        cls = classify(target, insns)
        errors += [f"{name}: {i.text!r} at +{i.offset:#x} jumps to a computed address "
                   "(a jump table or a call through a register): write the choice with masks"
                   for i in cls if i.kind == "indirect"
                   or (i.kind == "icall" and not name.startswith("st_call_"))]
        conds = [i for i in cls if i.kind in ("cond", "cond_ret", "cond_head")]
        if not conds:
            continue
        entry = allowed(name, target)
        if entry is None:
            errors.append(f"{name}: conditional branch(es) ({len(conds)}), first {conds[0].text!r} "
                          f"at +{conds[0].offset:#x}: write the choice with masks (ops.h "
                          "op_mask / CP_PICK_I) or, if it is loop control or a bounded math "
                          "path, add the function to stencils/branch_allowlist.py with the reason")
            continue
        if entry[2] != "loop":
            continue
        index = {i.offset: k for k, i in enumerate(cls)}
        # element data is read in loops (and their lanes combined after them); code
        # before the first loop header only works on the arguments and shape words
        heads = [i.dest for i in cls if i.kind in ("cond", "jump") and i.dest is not None
                 and i.dest <= i.offset]
        first_loop = min(heads, default=None)
        for c in conds:
            if c.kind != "cond" or c.dest is None or c.dest <= c.offset or c.dest not in index:
                continue
            if first_loop is None or c.offset < first_loop:
                continue
            skipped = cls[index[c.offset] + 1:index[c.dest]]
            if len(skipped) <= skip_limit and all(_register_move(i) for i in skipped):
                errors.append(f"{name}: {c.text!r} at +{c.offset:#x} skips "
                              f"{len(skipped)} instruction(s): a select on the data compiled "
                              "to a branch; write it with masks")
    return errors


def linear_loop_bounds(target, insns, callee_bounds, weight=None):
    """(fewest, a, b) for a function whose loops are not nested and each run at most
    n times per call (the element loops of a 1-D array kernel): one call executes at
    least `fewest` and at most a + b * n instructions.

    Any execution takes each loop's back-edge some B <= n times: it runs from the entry
    to the loop's first back-edge, B - 1 times around the loop (header to back-edge),
    then from the header on without that back-edge again. So `fewest` and `a` are the
    shortest and longest paths from the entry to the exit on which each loop's back-edge
    may be taken once (continuing at its header, where it may not be taken again):
    a loop that the compiler rotated (entered in its middle) is charged its partial
    first and last trips there. b is the sum over loops of the longest path from a
    loop's header back to its back-edge, a repeated trip. None when loops nest. An upper
    bound, not tight: a vectorised loop that runs n / 4 times is charged n.
    `weight(insn)` gives an instruction's (fewest, most) cost instead of 1 (cycles:
    ``cycles.py``)."""
    if weight is None:
        def weight(_i):
            return (1, 1)
    cls = classify(target, insns)
    index = {i.offset: k for k, i in enumerate(cls)}
    back = [i for i in cls if i.kind in ("cond", "jump") and i.dest is not None
            and i.dest <= i.offset]
    if any(i.dest not in index for i in cls if i.kind in ("cond", "jump")) or any(
            i.kind == "indirect" for i in cls):
        return None
    latch = {}
    for i in back:
        latch[i.dest] = max(latch.get(i.dest, i.offset), i.offset)
    spans = sorted(latch.items())
    if any(spans[k][1] >= spans[k + 1][0] for k in range(len(spans) - 1)):
        return None  # nested or overlapping loops

    def walk(k, memo, lo_off=None, hi_off=None, header=None, done=frozenset()):
        """(fewest, most) from instruction k to the function's exit (header None; the
        loops whose back-edge was taken are `done`) or, for a loop body, to a back-edge
        to `header`, staying in [lo_off, hi_off]."""
        key = (k, done)
        if key in memo:
            return memo[key]
        if k >= len(cls):
            raise ValueError(f"control runs off the end of the function at {k}")
        i = cls[k]
        if header is not None and not lo_off <= i.offset <= hi_off:
            memo[key] = None
            return None
        memo[key] = None  # a forward-only walk never returns here; guards a bad graph
        extra = callee_bounds(i.callee) if i.kind in ("call", "tailcall") else (0, 0)
        own = (0, 0) if i.kind == "tail_part" else weight(i)
        is_back = i in back

        def go(kk, dd=done):
            return walk(kk, memo, lo_off, hi_off, header, dd)

        if i.kind == "ret":
            r = own if header is None else None
        elif i.kind == "tail":
            r = (0, 0) if header is None else None
        elif i.kind == "tailcall":
            r = (own[0] + extra[0], own[1] + extra[1]) if header is None else None
        else:
            succ = []
            if is_back and header is not None:
                if i.dest == header:
                    succ.append((0, 0))  # one iteration ends here
                if i.kind == "cond":
                    succ.append(go(k + 1))
            elif is_back:
                if i.dest not in done:  # the loop's first back-edge: on at its header
                    succ.append(go(index[i.dest], done | {i.dest}))
                if i.kind == "cond":
                    succ.append(go(k + 1))
            elif i.kind == "jump":
                succ.append(go(index[i.dest]))
            elif i.kind == "cond":
                succ.append(go(index[i.dest]))
                succ.append(go(k + 1))
            elif i.kind in ("op", "call", "tail_part", "cond_ret"):
                succ.append(go(k + 1))
                if i.kind == "cond_ret" and header is None:
                    succ.append((0, 0))
            succ = [b for b in succ if b is not None]
            r = None if not succ else (own[0] + extra[0] + min(b[0] for b in succ),
                                       own[1] + extra[1] + max(b[1] for b in succ))
        memo[key] = r
        return r

    whole = walk(0, {})
    if whole is None:
        return None
    per_n = 0
    for header, last in spans:
        body = walk(index[header], {}, header, last, header)
        if body is None:
            return None
        per_n += body[1]
    return whole[0], whole[1], per_n
