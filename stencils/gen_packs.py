"""Packed scalar math: up to four independent scalar calls of one function in SIMD lanes.

Imported by gen_stencils.py, which appends these to generated/stencils.c. A program of
scalar values (an MLP's tanh, any vector of up to 64 elements) calls one scalar stencil
per element, while the array kernels already run four lanes at a time on x86_64 and
AArch64 (CPM_VEC_MATH). The compiler's packing pass (crates/copapy-compiler/src/pack.rs)
runs up to four independent calls of one function as one of these stencils:

    st_pack4_<op>_f      cp_mf[k] = op(*cp_a<k>) for k < 4
    st_pack4_sincos_f    cp_mf[k] = sin(*cp_a<k>), cp_mf2[k] = cos(of the same), k < 4
    st_pack4_<op>_f      cp_mf[k] = op(*cp_a<k>, cp_mf[k]) for atan2 and pow, k < 4

Each lane's operand is read where it lives (an input's or a spilled value's slot, or
the slot the scheduler stored a register into), one 4-byte load per lane by the stencil,
which passes the four in one vector register to the helper (PRELUDE: the call
convention), and the results are written to a 16-byte aligned block as one vector store. Reading the
operands one by one matters: four 4-byte stores read back by one 16-byte load cannot be
forwarded from the store buffer, so the load waits until the stores retire, which
waits for everything before them, and consecutive packs ran one after another instead
of overlapping (issue 23.1: 256 independent sin took 3x glibc's time per call, the
same kernel over an array 1.5x). A 16-byte result store read back as 4-byte loads
forwards.

Each lane runs the vector body of the array kernel (cpm_<op>f_body(x, 1), gen_arrays.py
VECTOR_MATH), the same operations as the scalar helper, so each lane has the bits of the
scalar call; a lane the program does not use reads lane 0's operand and nobody reads
its result. The loop
has a fixed trip count of 4 and vectorises into straight-line SSE2 / NEON code: no loop
and no branch is left (build.py checks), so the instruction bound is one constant.

Register lanes: a lane's operand still in register a or b (the last thing computed, such
as IK's `t1 + t2` right before its sincos) goes into the vector by value instead of being
stored into the block and read back, which would put a store-to-load forwarding (about 7
cycles) on the dependent chain. The unary and sincos stencils come in four forms:
`st_pack4_<op>_f` (every lane from its hole), `_r0` (lane 0 is a), `_r1` (lane 0 is b) and
`_r0r1` (lane 0 is a, lane 1 is b), all over the one helper `cpm_pack4_<op>_f`. The
scheduler orders a group's lanes so the register ones come first
(crates/copapy-compiler/src/schedule_packs.rs).

Only where the vector body is IEEE (x86_64, AArch64: arrays.h CPM_VEC_MATH); the other
targets have no st_pack4_* stencils (build.py's ISAS rows say which have them) and keep
their scalar calls.
"""

import gen_arrays

# the float functions with a branch-free vector body (gen_arrays.VECTOR_MATH); atan2 and
# pow take their second operands from the result block
BINARY = ("atan2", "pow")
OPS = [op for (op, ty) in gen_arrays.VECTOR_MATH if ty == "f" and op not in BINARY]
SIG = "(f32 a, f32 b, i32 i, i32 j)"
LANES = 4


# the lane operands' holes (arrays.h), lane k reads the slot behind the k-th
LANE_HOLES = ["cp_a0", "cp_a1", "cp_a2", "cp_a3"]
# the register-lane forms: stencil suffix -> the registers lanes 0.. take by value
REGISTER_FORMS = {"": [], "_r0": ["a"], "_r1": ["b"], "_r0r1": ["a", "b"]}

# The helpers' convention: the four operands in one vector register, the results through
# the block pointers, and every integer register preserved for the caller (clang's
# preserve_most), so the stencil keeps i and j in scratch registers instead of saving
# callee-saved ones around the call (x86_64: no push/pop of rbx/rbp; the float registers
# a and b are still saved: the bodies use every vector register). A lane's operand is
# read by the stencil itself, straight from its hole (x86_64: one RIP-relative load),
# or taken from register a or b.
PRELUDE = r"""#define CPM_PACK_CC __attribute__((preserve_most, noinline))
#if defined(__x86_64__)
#define CPM_PACK_TABLE_CC __attribute__((noinline))
#define CPM_LANE(sym) ({ f32 cp_v_; __asm__("movss " #sym "(%%rip), %0" : "=x"(cp_v_)); cp_v_; })
#else
#define CPM_PACK_TABLE_CC CPM_PACK_CC
#define CPM_LANE(sym) (*(const f32 *)CP_HOLE(sym))
#endif
"""

# log and pow read their tables through integer registers: on x86_64, under
# preserve_most, their helpers would save and restore more of those than the stencil
# saves for i and j (CPM_PACK_TABLE_CC: the plain convention there)
TABLE_OPS = ("log", "pow")


def _convention(op):
    return "CPM_PACK_TABLE_CC" if op in TABLE_OPS else "CPM_PACK_CC"


# the second operands of atan2 and pow, read one by one from the result block: volatile
# keeps clang from merging the four loads into the 16-byte load that the store buffer
# cannot forward from the scheduler's four stores
SECOND = (f"    f32 w[{LANES}] = "
          f"{{{', '.join(f'((volatile f32 *)y)[{k}]' for k in range(LANES))}}};\n")


def _helper(name, outs, ins, body, call, more="", blocks="f32 *y", cc="CPM_PACK_CC"):
    """The lanes' loop over restrict pointers with the lane count as a parameter, as the
    array kernels have it, inlined with the count 4 into the helper, which takes the
    operands as one vector: clang vectorises that form even where a lane reads a table by
    its own index (log, pow: four scalar loads), where a loop written with the constant
    4 stays scalar."""
    loop = f"{name}_lanes"
    unpack = ", ".join(f"xv[{k}]" for k in range(LANES))
    return (f"OP void {loop}({outs}, {ins}, i32 n) {{\n"
            "    CPM_VECTOR_LOOP\n"
            f"    for (i32 k = 0; k < n; k++)\n        {body};\n}}\n"
            f"{cc} void {name}({blocks}, cpm_v4f xv) {{\n"
            f"    f32 x[{LANES}] = {{{unpack}}};\n{more}    {loop}({call}, {LANES});\n}}\n")


def _stencil(name, helper, blocks, registers=()):
    lanes = list(registers) + [f"CPM_LANE({h})" for h in LANE_HOLES[len(registers):]]
    args = ", ".join([f"CP_SLOT({b})" for b in blocks] + ["x"])
    return (f"void {name}{SIG} {{\n"
            f"    cpm_v4f x = {{{', '.join(lanes)}}};\n"
            f"    {helper}({args});\n    NEXT(a, b, i, j);\n}}\n")


def _forms(stencil, helper, blocks, helper_src):
    """(name, source) of the stencil in every register-lane form (REGISTER_FORMS), the
    helper with the first."""
    for k, (suffix, regs) in enumerate(REGISTER_FORMS.items()):
        src = (helper_src if k == 0 else "") + _stencil(stencil + suffix, helper, blocks, regs)
        yield stencil + suffix, _only_vector(src)


def _only_vector(src):
    return f"#if CPM_VEC_MATH\n{src}#endif\n"


def generate():
    """Yield (stencil name, C source of the stencil and of the helper it is the first user
    of), in a fixed order; each source compiles to something only where CPM_VEC_MATH."""
    x = "const f32 *restrict x"
    first = True
    for op in OPS:
        body = gen_arrays.VECTOR_MATH[op, "f"]
        helper = f"cpm_pack4_{op}_f"
        src = _helper(helper, "f32 *restrict d", x, f"d[k] = {body}(x[k], 1)", "y, x",
                      cc=_convention(op))
        if first:
            src, first = _only_vector(PRELUDE) + src, False
        yield from _forms(f"st_pack4_{op}_f", helper, ["cp_mf"], src)
    for op in BINARY:
        body = gen_arrays.VECTOR_MATH[op, "f"]
        helper = f"cpm_pack4_{op}_f"
        src = _helper(helper, "f32 *restrict d", f"{x}, const f32 *restrict w",
                      f"d[k] = {body}(x[k], w[k], 1)", "y, x, w", SECOND,
                      cc=_convention(op))
        stencil = _stencil(f"st_pack4_{op}_f", helper, ["cp_mf"])
        yield f"st_pack4_{op}_f", _only_vector(src + stencil)
    helper = "cpm_pack4_sincos_f"
    src = _helper(helper, "f32 *restrict s, f32 *restrict c", x,
                  "cpm_sincos_body(x[k], &s[k], &c[k], 1)", "y, c, x", blocks="f32 *y, f32 *c")
    yield from _forms("st_pack4_sincos_f", helper, ["cp_mf", "cp_mf2"], src)


def names():
    return [n for n, _ in generate()]
