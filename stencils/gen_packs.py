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
the slot the scheduler stored a register into), one 4-byte load per lane, and the
results are written to a 16-byte aligned block as one vector store. Reading the
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
as IK's `t1 + t2` right before its sincos) is passed to the helper by value instead of
being stored into the block and read back, which would put a store-to-load forwarding
(about 7 cycles) on the dependent chain. The unary and sincos stencils come in four
forms: `st_pack4_<op>_f` (every lane from its hole), `_r0` (lane 0 is a), `_r1` (lane 0
is b) and `_r0r1` (lane 0 is a, lane 1 is b), over the helpers `cpm_pack4_<op>_f`,
`_v1` and `_v2` (one or two lanes by value, the others through pointers). The scheduler
orders a group's lanes so the register ones come first (crates/copapy-compiler/src/
schedule_packs.rs). The lanes' body is the same code in every form, so the same bits.

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


def _lane_params(by_value):
    """The helper's lane parameters: the first `by_value` lanes as floats, the others as
    pointers to where they live."""
    return ", ".join(f"f32 v{k}" if k < by_value else f"const f32 *x{k}" for k in range(LANES))


def _gather(by_value):
    lanes = ", ".join(f"v{k}" if k < by_value else f"*x{k}" for k in range(LANES))
    return f"    f32 x[{LANES}] = {{{lanes}}};\n"


# the second operands of atan2 and pow, read one by one from the result block: volatile
# keeps clang from merging the four loads into the 16-byte load that the store buffer
# cannot forward from the scheduler's four stores
SECOND = (f"    f32 w[{LANES}] = "
          f"{{{', '.join(f'((volatile f32 *)y)[{k}]' for k in range(LANES))}}};\n")


def _helper_name(base, by_value):
    return base + (f"_v{by_value}" if by_value else "")


def _helpers(name, outs, ins, body, call, more="", blocks="f32 *y", forms=(0,)):
    """The lanes' loop over restrict pointers with the lane count as a parameter, as the
    array kernels have it, inlined with the count 4 into each helper that gathers the
    operands (`forms`: how many lanes come by value): clang vectorises that form even
    where a lane reads a table by its own index (log, pow: four scalar loads), where a
    loop written with the constant 4 stays scalar."""
    loop = f"{name}_lanes"
    src = (f"OP void {loop}({outs}, {ins}, i32 n) {{\n"
           "    CPM_VECTOR_LOOP\n"
           f"    for (i32 k = 0; k < n; k++)\n        {body};\n}}\n")
    for by_value in forms:
        src += (f"CPM_NOINLINE void {_helper_name(name, by_value)}({blocks}, "
                f"{_lane_params(by_value)}) "
                f"{{\n{_gather(by_value)}{more}    {loop}({call}, {LANES});\n}}\n")
    return src


def _stencil(name, helper, blocks, registers=()):
    args = ([f"CP_SLOT({b})" for b in blocks] + list(registers)
            + [f"CP_HOLE({h})" for h in LANE_HOLES[len(registers):]])
    return (f"void {name}{SIG} {{\n    {_helper_name(helper, len(registers))}"
            f"({', '.join(args)});\n    NEXT(a, b, i, j);\n}}\n")


def _forms(stencil, helper, blocks, helpers_src):
    """(name, source) of the stencil in every register-lane form (REGISTER_FORMS), the
    helpers with the first."""
    for k, (suffix, regs) in enumerate(REGISTER_FORMS.items()):
        src = (helpers_src if k == 0 else "") + _stencil(stencil + suffix, helper, blocks, regs)
        yield stencil + suffix, _only_vector(src)


def _only_vector(src):
    return f"#if CPM_VEC_MATH\n{src}#endif\n"


def generate():
    """Yield (stencil name, C source of the stencil and of the helpers it is the first
    user of), in a fixed order; each source compiles to something only where
    CPM_VEC_MATH."""
    x = "const f32 *restrict x"
    by_value = sorted({len(r) for r in REGISTER_FORMS.values()})
    for op in OPS:
        body = gen_arrays.VECTOR_MATH[op, "f"]
        helper = f"cpm_pack4_{op}_f"
        src = _helpers(helper, "f32 *restrict d", x, f"d[k] = {body}(x[k], 1)", "y, x",
                       forms=by_value)
        yield from _forms(f"st_pack4_{op}_f", helper, ["cp_mf"], src)
    for op in BINARY:
        body = gen_arrays.VECTOR_MATH[op, "f"]
        helper = f"cpm_pack4_{op}_f"
        src = _helpers(helper, "f32 *restrict d", f"{x}, const f32 *restrict w",
                       f"d[k] = {body}(x[k], w[k], 1)", "y, x, w", SECOND)
        stencil = _stencil(f"st_pack4_{op}_f", helper, ["cp_mf"])
        yield f"st_pack4_{op}_f", _only_vector(src + stencil)
    helper = "cpm_pack4_sincos_f"
    src = _helpers(helper, "f32 *restrict s, f32 *restrict c", x,
                   "cpm_sincos_body(x[k], &s[k], &c[k], 1)", "y, c, x", blocks="f32 *y, f32 *c",
                   forms=by_value)
    yield from _forms("st_pack4_sincos_f", helper, ["cp_mf", "cp_mf2"], src)


def names():
    return [n for n, _ in generate()]
