"""Packed scalar math: up to four independent scalar calls of one function in SIMD lanes.

Imported by gen_stencils.py, which appends these to generated/stencils.c. A program of
scalar values (an MLP's tanh, any vector of up to 64 elements) calls one scalar stencil
per element, while the array kernels already run four lanes at a time on x86_64 and
AArch64 (CPM_VEC_MATH). The compiler's packing pass (crates/copapy-compiler/src/pack.rs)
runs up to four independent calls of one function as one of these stencils:

    st_pack4_<op>_f      cp_mf[k] = op(lane k) for k < 4
    st_pack4_sincos_f    cp_mf[k] = sin(lane k), cp_mf2[k] = cos(of the same), k < 4;
                         a and b: two of the sines and cosines of lanes 0 and 1
    st_pack4_<op>_f      cp_mf[k] = op(x lane k, y lane k) for atan2 and pow, k < 4

The wrapper around the helper is what a packed call costs beyond the array kernel's loop
(issue 23.1/23.2), so it does as little as it can:

- A packed step clobbers every register: its stencil saves nothing around the helper
  call (no stack slots for a and b, no copies of i and j), and the scheduler stores a
  value that is still needed and not in memory before the step
  (crates/copapy-compiler/src/schedule_packs.rs). After the step register a holds lane
  0's result (the helper returns the results in one vector register, whose lane 0 is a),
  so the next stencil can read it from there; b, i and j hold nothing (CPM_JUNK: no
  instruction).
- The helper takes the operands as vectors and returns the results as one, in the plain
  C convention: no block pointer to pass for the results, and no integer register to
  keep.
- sincos: the helper stores the sines and the cosines to their blocks itself and
  returns lanes 0 and 1 of both in two float registers, so a step leaves the two results
  its next readers need in registers a and b (IK's cosines, read by `l1 * c1` and
  `l2 * c12` right after the step, would otherwise come back through a store-to-load
  forwarding). Each form (SINCOS_KEPT: a suffix after the operands' form, none for lane
  0's sine and cosine) picks one unordered pair of those four with at most two moves;
  the scheduler orders the lanes so the results read first are in lanes 0 and 1
  (crates/copapy-compiler/src/pack_outputs.rs). 6 kept forms x 5 operand forms = 30
  sincos stencils.
- Lanes: the operands of lane k come from hole cp_a<k> (one 4-byte load each: an input's
  or a spilled value's slot, or the slot the scheduler stored a register into), or from
  register a or b by value (forms `_r0`, `_r1`, `_r0r1` of the unary and sincos stencils:
  an operand just computed reaches the pack without a store and a store-to-load
  forwarding on the chain), or, in the `_v` forms, all four from four consecutive slots
  with one 16-byte load (cp_a0; for atan2 and pow the second operands from cp_mf2):
  operands the scheduler gave consecutive slots that no step writes (inputs, constants).
  Four 4-byte stores read back by one 16-byte load are not forwarded from the store
  buffer: the load waits until the stores retire, and consecutive packs ran one after
  another (issue 23.1), so the wide load is only for slots no step stores to.
- atan2 and pow without `_v` read their second operands from the result block, where
  the scheduler stores or copies them, one 4-byte load each (forwarded from the 4-byte
  stores; volatile keeps clang from merging them into one 16-byte load).

Each lane runs the vector body of the array kernel (cpm_<op>f_body(x, 1), gen_arrays.py
VECTOR_MATH), the same operations as the scalar helper, so each lane has the bits of the
scalar call; a lane the program does not use reads another lane's operand (or a zero of
its range) and nobody reads its result. The loop has a fixed trip count of 4 and
vectorises into straight-line SSE2 / NEON code: no loop and no branch is left (build.py
checks), so the instruction bound is one constant.

Only where the vector body is IEEE (x86_64, AArch64: arrays.h CPM_VEC_MATH); the other
targets have no st_pack4_* stencils (build.py's ISAS rows say which have them) and keep
their scalar calls.
"""

import gen_arrays

# the float functions with a branch-free vector body (gen_arrays.VECTOR_MATH)
BINARY = ("atan2", "pow")
OPS = [op for (op, ty) in gen_arrays.VECTOR_MATH if ty == "f" and op not in BINARY]
SIG = "(f32 a, f32 b, i32 i, i32 j)"
LANES = 4

# the lane operands' holes (arrays.h), lane k reads the slot behind the k-th
LANE_HOLES = ["cp_a0", "cp_a1", "cp_a2", "cp_a3"]
HOLES = ", ".join(f"CPM_LANE({h})" for h in LANE_HOLES)
# the forms of the unary and sincos stencils: suffix -> the operand vector
UNARY_FORMS = {
    "": f"{{{HOLES}}}",
    "_r0": "{a, CPM_LANE(cp_a1), CPM_LANE(cp_a2), CPM_LANE(cp_a3)}",
    "_r1": "{b, CPM_LANE(cp_a1), CPM_LANE(cp_a2), CPM_LANE(cp_a3)}",
    "_r0r1": "{a, b, CPM_LANE(cp_a2), CPM_LANE(cp_a3)}",
    "_v": "CPM_LANES(cp_a0)",
}
# the results a sin/cos step leaves in float registers a and b (the rest only in their
# slots): a suffix after the operands' form -> (a, b), each (s or c, lane). Lanes 0 and 1
# only (the scheduler orders the lanes so the results read first are there); the pairs
# are unordered for the scheduler (every reader takes either register), so each pair
# has one form, in the orientation that costs fewest moves.
SINCOS_KEPT = {
    "": (("s", 0), ("c", 0)),
    "_s0s1": (("s", 0), ("s", 1)),
    "_c0c1": (("c", 0), ("c", 1)),
    "_s0c1": (("s", 0), ("c", 1)),
    "_s1c0": (("s", 1), ("c", 0)),
    "_s1c1": (("s", 1), ("c", 1)),
}
# the forms of atan2 and pow: suffix -> (first operands, second operands); without a
# range, the second operands come from the result block
BLOCK = "CPM_BLOCK_LANES(cp_mf)"
BINARY_FORMS = {
    "": (f"{{{HOLES}}}", BLOCK),
    "_vx": ("CPM_LANES(cp_a0)", BLOCK),
    "_vy": (f"{{{HOLES}}}", "CPM_LANES(cp_mf2)"),
    "_v": ("CPM_LANES(cp_a0)", "CPM_LANES(cp_mf2)"),
}

# Reading lanes and storing results. x86_64 code is not position independent, so a hole
# is reached by a RIP-relative access written out (arrays.h CP_HOLE); elsewhere through
# its address. CPM_JUNK is a value nobody reads (what b, i and j hold after a pack): an
# asm without instructions (i's and j's differ, or clang would copy one to the other).
PRELUDE = r"""#define CPM_PACK_CC __attribute__((noinline))
#if defined(__x86_64__)
#define CPM_LANE(sym) ({ f32 cp_v_; __asm__("movss " #sym "(%%rip), %0" : "=x"(cp_v_)); cp_v_; })
#define CPM_LANES(sym) ({ cpm_v4f cp_v_; __asm__("movups " #sym "(%%rip), %0" : "=x"(cp_v_)); cp_v_; })
#define CPM_STORE_LANES(sym, v) __asm__ volatile("movaps %0, " #sym "(%%rip)" : : "x"(v) : "memory")
#define CPM_JUNK_F ({ f32 cp_j_; __asm__("" : "=x"(cp_j_)); cp_j_; })
#else
#define CPM_LANE(sym) (*(const f32 *)CP_HOLE(sym))
#define CPM_LANES(sym) ({ cpm_v4f cp_v_; __builtin_memcpy(&cp_v_, CP_SLOT(sym), 16); cp_v_; })
#define CPM_STORE_LANES(sym, v) (*(cpm_v4f *)CP_SLOT(sym) = (v))
#define CPM_JUNK_F ({ f32 cp_j_; __asm__("" : "=w"(cp_j_)); cp_j_; })
#endif
#define CPM_BLOCK_LANES(sym) ({ const volatile f32 *cp_w_ = CP_SLOT(sym); \
    (cpm_v4f){cp_w_[0], cp_w_[1], cp_w_[2], cp_w_[3]}; })
#define CPM_JUNK_I(tag) ({ i32 cp_j_; __asm__("" : "=r"(cp_j_) : "i"(tag)); cp_j_; })
#define CPM_PACK_NEXT(r) NEXT((r)[0], CPM_JUNK_F, CPM_JUNK_I(0), CPM_JUNK_I(1))
"""


def _helper(name, outs, ins, body, call, params="cpm_v4f xv"):
    """The lanes' loop over restrict pointers with the lane count as a parameter, as the
    array kernels have it, inlined with the count 4 into the helper, which takes the
    operands as vectors and returns the results as one: clang vectorises that form even
    where a lane reads a table by its own index (log, pow: four scalar loads), where a
    loop written with the constant 4 stays scalar."""
    loop = f"{name}_lanes"
    unpack = "".join(f"    f32 {v}[{LANES}] = {{{', '.join(f'{v}v[{k}]' for k in range(LANES))}}};\n"
                     for v in "xy" if f"{v}v" in params)
    result = ", ".join(f"d[{k}]" for k in range(LANES))
    return (f"OP void {loop}({outs}, {ins}, i32 n) {{\n"
            "    CPM_VECTOR_LOOP\n"
            f"    for (i32 k = 0; k < n; k++)\n        {body};\n}}\n"
            f"CPM_PACK_CC cpm_v4f {name}({params}) {{\n{unpack}"
            f"    f32 d[{LANES}];\n    {loop}({call}, {LANES});\n"
            f"    return (cpm_v4f){{{result}}};\n}}\n")


def _stencil(name, call, results="cp_mf"):
    return (f"void {name}{SIG} {{\n"
            f"    cpm_v4f r = {call};\n"
            f"    CPM_STORE_LANES({results}, r);\n    CPM_PACK_NEXT(r);\n}}\n")


def _sincos_helper(name, x):
    """The sin/cos helper stores both result vectors itself and returns lanes 0 and 1 of
    each, two 8-byte vectors: the C convention returns them in two float registers
    (x86_64 SysV: xmm0 and xmm1, two SSE eightbytes; AAPCS64: v0 and v1, a homogeneous
    short-vector aggregate), so the stencil picks the ones its form keeps without
    reading a stored result back."""
    loop = f"{name}_lanes"
    lanes = ", ".join(f"xv[{k}]" for k in range(LANES))
    return (f"OP void {loop}(f32 *restrict s, f32 *restrict c, {x}, i32 n) {{\n"
            "    CPM_VECTOR_LOOP\n"
            "    for (i32 k = 0; k < n; k++)\n"
            "        cpm_sincos_body(x[k], &s[k], &c[k], 1);\n}\n"
            "typedef float cpm_v2f __attribute__((vector_size(8)));\n"
            "typedef struct { cpm_v2f s, c; } cpm_pack_sincos01;\n"
            f"CPM_PACK_CC cpm_pack_sincos01 {name}(cpm_v4f xv, f32 *restrict sd, f32 *restrict cd) {{\n"
            f"    f32 x[{LANES}] = {{{lanes}}};\n"
            f"    f32 s[{LANES}], c[{LANES}];\n"
            f"    {loop}(s, c, x, {LANES});\n"
            "    __builtin_memcpy(sd, s, sizeof s);\n"
            "    __builtin_memcpy(cd, c, sizeof c);\n"
            "    return (cpm_pack_sincos01){{s[0], s[1]}, {c[0], c[1]}};\n}\n")


def _sincos_stencil(name, call, kept):
    a, b = SINCOS_KEPT[kept]
    pick = lambda r: f"r.{r[0]}[{r[1]}]"  # noqa: E731
    return (f"void {name}{SIG} {{\n"
            f"    cpm_pack_sincos01 r = {call};\n"
            f"    NEXT({pick(a)}, {pick(b)}, CPM_JUNK_I(0), CPM_JUNK_I(1));\n}}\n")


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
        src = _helper(helper, "f32 *restrict d", x, f"d[k] = {body}(x[k], 1)", "d, x")
        if first:
            src, first = PRELUDE + src, False
        for k, (suffix, lanes) in enumerate(UNARY_FORMS.items()):
            stencil = _stencil(f"st_pack4_{op}_f{suffix}", f"{helper}({_vector(lanes)})")
            yield f"st_pack4_{op}_f{suffix}", _only_vector((src if k == 0 else "") + stencil)
    for op in BINARY:
        body = gen_arrays.VECTOR_MATH[op, "f"]
        helper = f"cpm_pack4_{op}_f"
        src = _helper(helper, "f32 *restrict d", f"{x}, const f32 *restrict y",
                      f"d[k] = {body}(x[k], y[k], 1)", "d, x, y", "cpm_v4f xv, cpm_v4f yv")
        for k, (suffix, (xs, ys)) in enumerate(BINARY_FORMS.items()):
            call = f"{helper}({_vector(xs)}, {_vector(ys)})"
            stencil = _stencil(f"st_pack4_{op}_f{suffix}", call)
            yield f"st_pack4_{op}_f{suffix}", _only_vector((src if k == 0 else "") + stencil)
    helper = "cpm_pack4_sincos_f"
    src = _sincos_helper(helper, x)
    forms = [(i, o) for i in UNARY_FORMS for o in SINCOS_KEPT]
    for k, (suffix, kept) in enumerate(forms):
        call = f"{helper}({_vector(UNARY_FORMS[suffix])}, CP_SLOT(cp_mf), CP_SLOT(cp_mf2))"
        name = f"st_pack4_sincos_f{suffix}{kept}"
        yield name, _only_vector((src if k == 0 else "") + _sincos_stencil(name, call, kept))


def _vector(lanes):
    """A lanes expression as a vector: a brace list needs its type."""
    return f"(cpm_v4f){lanes}" if lanes.startswith("{") else lanes


def names():
    return [n for n, _ in generate()]
