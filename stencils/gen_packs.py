"""Packed scalar math: up to four independent scalar calls of one function in SIMD lanes.

Imported by gen_stencils.py, which appends these to generated/stencils.c. A program of
scalar values (an MLP's tanh, any vector of up to 64 elements) calls one scalar stencil
per element, while the array kernels already run four lanes at a time on x86_64 and
AArch64 (CPM_VEC_MATH). The compiler's packing pass (crates/copapy-compiler/src/pack.rs)
gathers the operands of up to four independent calls of one function into a 16-byte
aligned block of data memory and runs one of these stencils:

    st_pack4_<op>_f      cp_a0[k] = op(cp_a0[k]) for k < 4, in place
    st_pack4_sincos_f    cp_a0[k] = sin(cp_a0[k]), cp_a1[k] = cos(of the same), k < 4

Each lane runs the vector body of the array kernel (cpm_<op>f_body(x, 1), gen_arrays.py
VECTOR_MATH), the same operations as the scalar helper, so each lane has the bits of the
scalar call; a lane the program does not use computes op(0) and nobody reads it. The loop
has a fixed trip count of 4 and vectorises into straight-line SSE2 / NEON code: no loop
and no branch is left (build.py checks), so the instruction bound is one constant.

Only where the vector body is IEEE (x86_64, AArch64: arrays.h CPM_VEC_MATH); the other
targets have no st_pack4_* stencils (build.py's ISAS rows say which have them) and keep
their scalar calls.
"""

import gen_arrays

# the unary float functions with a branch-free vector body (gen_arrays.VECTOR_MATH); log
# reads its table by an index per lane, which SSE2 and NEON cannot gather, so its four
# lanes would stay a loop (a branch in a packed step): log calls stay one per value
OPS = [op for (op, ty) in gen_arrays.VECTOR_MATH
       if ty == "f" and op not in ("atan2", "pow", "log")]
SIG = "(f32 a, f32 b, i32 i, i32 j)"
LANES = 4


def _helper(name, params, body):
    return (f"CPM_NOINLINE void {name}({params}) {{\n"
            "    CPM_VECTOR_LOOP\n"
            f"    for (i32 k = 0; k < {LANES}; k++)\n        {body};\n}}\n")


def _stencil(name, helper, holes):
    args = ", ".join(f"CP_HOLE({h})" for h in holes)
    return f"void {name}{SIG} {{\n    {helper}({args});\n    NEXT(a, b, i, j);\n}}\n"


def _only_vector(src):
    return f"#if CPM_VEC_MATH\n{src}#endif\n"


def generate():
    """Yield (stencil name, C source of its helper and stencil), in a fixed order; each
    source compiles to something only where CPM_VEC_MATH."""
    for op in OPS:
        body = gen_arrays.VECTOR_MATH[op, "f"]
        helper = f"cpm_pack4_{op}_f"
        src = _helper(helper, "f32 *p", f"p[k] = {body}(p[k], 1)")
        stencil = _stencil(f"st_pack4_{op}_f", helper, ["cp_a0"])
        yield f"st_pack4_{op}_f", _only_vector(src + stencil)
    helper = "cpm_pack4_sincos_f"
    src = _helper(helper, "f32 *restrict s, f32 *restrict c",
                  "cpm_sincos_body(s[k], &s[k], &c[k], 1)")
    stencil = _stencil("st_pack4_sincos_f", helper, ["cp_a0", "cp_a1"])
    yield "st_pack4_sincos_f", _only_vector(src + stencil)


def names():
    return [n for n, _ in generate()]
