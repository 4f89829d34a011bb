/* copapy array stencils: the holes and the loop kernels' building blocks.
 *
 * An array operation is one stencil that calls one loop kernel (a cpm_arr_* helper,
 * copied once into a program however many steps use it). The stencil passes the
 * addresses of its data holes cp_a0..cp_a3 and the element count read from the data
 * slot cp_n; registers a, b, i, j pass through unchanged (the C ABI saves them around
 * the call). Element semantics are the scalar op_* functions of ops.h, so an array
 * operation gives, element by element, the bits of the scalar one. */
#ifndef COPAPY_ARRAYS_H
#define COPAPY_ARRAYS_H
#include "ops.h"

/* cp_a0 is the result (an array, or the scalar slot of a reduction), cp_a1..cp_a3 the
 * operands (arrays, or the slot of a broadcast scalar), cp_n the int32 element count. */
extern char cp_a0[], cp_a1[], cp_a2[], cp_a3[];
typedef uint8_t u8; /* the elements of byte arrays */

/* Before the loop of a kernel that reads floats: on ARMv7 NEON flushes subnormals to
 * zero, and clang vectorises float comparisons there (vceq.f32) although it keeps the
 * arithmetic on VFP, so 1e-45 != 0 would be false; the loop stays scalar on VFP. */
#if defined(__arm__)
#define CPM_FLOAT_LOOP _Pragma("clang loop vectorize(disable) interleave(disable)")
#else
#define CPM_FLOAT_LOOP
#endif
/* Array kernels of branch-free math (gen_arrays.py VECTOR_MATH): a vectorised loop over
 * groups of 4 elements where SSE2 / NEON are IEEE (x86_64, AArch64), then scalar code. */
#if defined(__x86_64__) || defined(__aarch64__)
#define CPM_VEC_MATH 1
#else
#define CPM_VEC_MATH 0
#endif
#define CPM_VECTOR_LOOP _Pragma("clang loop vectorize_width(4) interleave_count(1)")
#define CPM_SCALAR_LOOP _Pragma("clang loop vectorize(disable) interleave(disable)")
extern i32 cp_n;

/* The address of a hole. x86_64 code is not position independent (-fno-pic), so
 * clang would materialise an address as a 32-bit absolute immediate, which the linker
 * does not patch; a RIP-relative lea (R_X86_64_PC32) reaches the data pages instead.
 * Every other target forms addresses PC-relatively or from a literal already. */
#if defined(__x86_64__)
#define CP_HOLE(sym) ({ void *cp_p_; __asm__("leaq " #sym "(%%rip), %0" : "=r"(cp_p_)); cp_p_; })
#else
#define CP_HOLE(sym) ((void *)(sym))
#endif
/* The address of a scalar data hole (cp_mf, cp_mf2) used as a block (gen_packs.py). */
#if defined(__x86_64__)
#define CP_SLOT(sym) CP_HOLE(sym)
#else
#define CP_SLOT(sym) ((void *)&(sym))
#endif

/* The fixed reduction order (README.md, "Array stencils"): element k is added into
 * partial sum k % 8 in increasing k, the partials start at -0.0 (the identity, so a
 * partial without terms changes nothing); then partial l and
 * l + 4 are added (l < 4), then l and l + 2 (l < 2), then the two that remain. The
 * loops below spell that order out lane by lane; clang's SLP vectoriser turns the
 * 8-lane body into two SSE2/NEON additions on x86_64 and AArch64 (the same additions,
 * so the same bits) and leaves it scalar where floats have no IEEE vector unit. */
OP f32 cp_combine8_f(f32 *acc) {
    for (int l = 0; l < 4; l++) acc[l] += acc[l + 4];
    for (int l = 0; l < 2; l++) acc[l] += acc[l + 2];
    return acc[0] + acc[1];
}
OP i32 cp_combine8_i(u32 *acc) {
    for (int l = 0; l < 4; l++) acc[l] += acc[l + 4];
    for (int l = 0; l < 2; l++) acc[l] += acc[l + 2];
    return (i32)(acc[0] + acc[1]);
}

/* min / max of two lanes of a reduction, after the loop: the element operation, with
 * the mask hidden from the optimiser on x86_64 as well, where clang otherwise ends the
 * vectorised lane tree of a float kernel with a test and a branch around the last
 * shuffle (RISC-V hides every mask already, ops.h; other targets keep the tree
 * branch-free as it is) */
#if defined(__x86_64__)
OP f32 op_min_lane_f(f32 x, f32 y) {
    u32 m = 0u - (u32)((x < y) | (x != x));
    __asm__("" : "+r"(m));
    return op_blend_f(m, x, y);
}
OP f32 op_max_lane_f(f32 x, f32 y) {
    u32 m = 0u - (u32)((x > y) | (x != x));
    __asm__("" : "+r"(m));
    return op_blend_f(m, x, y);
}
#else
#define op_min_lane_f op_min_f
#define op_max_lane_f op_max_f
#endif
#define op_min_lane_i op_min_i
#define op_max_lane_i op_max_i

/* select without op_select_f's optimisation barrier: in a loop the blend stays a
 * blend (vector and/andn/or, or a conditional move), never a branch per element;
 * on RISC-V op_mask hides the mask (clang there loaded one operand under a branch) */
OP f32 op_select_arr_f(i32 c, f32 x, f32 y) { return op_blend_f(op_mask(c != 0), x, y); }

/* int // and % in array kernels: the divisor pick and x // 0 = 0 by masks hidden from
 * the optimiser. With a broadcast divisor (loop-invariant) clang on x86_64 turned
 * op_divisor_i's pick into a branch inside the element loop, so INT_MIN // -1 ran two
 * instructions fewer (tests/targets/test_array_bounds.py); scalar stencils keep the
 * cheaper op_floordiv_i / op_mod_i, which compile branch-free (build.py checks). */
OP u32 op_hidden_mask(i32 cond) {
    u32 m = 0u - (u32)cond;
    __asm__("" : "+r"(m));
    return m;
}
OP i32 op_divisor_arr_i(i32 x, i32 y) {
    u32 m = op_hidden_mask((y == 0) | ((x == INT32_MIN) & (y == -1)));
    return (i32)((1u & m) | ((u32)y & ~m));
}
OP i32 op_floordiv_arr_i(i32 x, i32 y) {
    return (i32)((u32)op_floordiv_by_i(x, op_divisor_arr_i(x, y)) & ~op_hidden_mask(y == 0));
}
OP i32 op_mod_arr_i(i32 x, i32 y) { return op_mod_by_i(x, op_divisor_arr_i(x, y)); }

#endif
