/* copapy stencil ABI and the semantics of every operation.
 *
 * generated/stencils.c (written by gen_stencils.py) defines one stencil per
 * operation x operand type x operand places x destination, each a one-line call of
 * an op_<op>_<type> function below. Semantics follow NumPy float32 / int32 bit for
 * bit (see README.md). */
#ifndef COPAPY_OPS_H
#define COPAPY_OPS_H
#include <stdint.h>
#include "mathlib.h"

typedef float f32;
typedef int32_t i32;
typedef uint32_t u32;

/* The holes: the next stencil (tail call, dropped or patched by the linker), the data
 * slot of the step as a float or as an int, and a second data slot for the binary
 * stencils whose two operands both come from memory. */
extern void cp_next(f32 a, f32 b, i32 i, i32 j);
extern f32 cp_mf;
extern i32 cp_mi;
extern f32 cp_mf2;
extern i32 cp_mi2;
/* The loop head: the back-edge stencil (st_loop_i_mm) jumps there while its counter has
 * not reached the end; the linker patches it to the first step of the loop body. */
extern void cp_head(f32 a, f32 b, i32 i, i32 j);

#define NEXT(a, b, i, j) __attribute__((musttail)) return cp_next(a, b, i, j)
#define OP static inline __attribute__((always_inline))

typedef union {
    f32 f;
    u32 u;
} op_fu;
OP u32 op_bits(f32 x) { op_fu v; v.f = x; return v.u; }
OP f32 op_from_bits(u32 u) { op_fu v; v.u = u; return v.f; }
/* bits of x where mask is all ones, of y where it is zero: no branch, and the value of
 * the operand not chosen never matters (NaN/inf do not leak) */
OP f32 op_blend_f(u32 mask, f32 x, f32 y) {
    return op_from_bits((op_bits(x) & mask) | (op_bits(y) & ~mask));
}
/* All ones when cond (0 or 1) is 1, else 0. RISC-V has no conditional move, and clang
 * there turns a blend whose mask it can trace back to a compare into a branch around a
 * move (so the instruction count would depend on the data); an empty asm (no
 * instruction) hides the mask's origin on RISC-V only. Elsewhere clang keeps blends
 * branch-free (cmov / csel / predication / vector and-or) and vectorises them, which
 * the asm would prevent. build.py --check rejects a conditional branch in a stencil. */
OP u32 op_mask(i32 cond) {
    u32 m = 0u - (u32)cond;
#if defined(__riscv)
    __asm__("" : "+r"(m));
#endif
    return m;
}
/* cond ? x : y for ints, without a branch: compare-and-mask on RISC-V, and the C
 * conditional elsewhere (cmov, csel, an IT block or a predicated mov: the same
 * instructions whatever the data; build.py checks). On RISC-V both operands are
 * evaluated, so they must be defined for every input (CP_COUNT masks shift counts). */
#if defined(__riscv)
OP i32 op_pick_i(i32 cond, i32 x, i32 y) {
    u32 m = op_mask(cond);
    return (i32)(((u32)x & m) | ((u32)y & ~m));
}
#define CP_PICK_I(c, x, y) op_pick_i((c), (x), (y))
#define CP_COUNT(y) ((u32)(y) & 31u)
#else
#define CP_PICK_I(c, x, y) ((c) ? (x) : (y))
#define CP_COUNT(y) ((u32)(y))
#endif

/* ---- float -> float */
OP f32 op_add_f(f32 x, f32 y) { return x + y; }
OP f32 op_sub_f(f32 x, f32 y) { return x - y; }
OP f32 op_mul_f(f32 x, f32 y) { return x * y; }
OP f32 op_div_f(f32 x, f32 y) { return x / y; }
OP f32 op_floordiv_f(f32 x, f32 y) { return cpm_floordivf(x, y); }
OP f32 op_mod_f(f32 x, f32 y) { return cpm_remainderf(x, y); }
/* atan2(x, y) is C's atan2f(x, y): the left operand is the first C argument */
OP f32 op_atan2_f(f32 x, f32 y) { return cpm_atan2f(x, y); }
OP f32 op_pow_f(f32 x, f32 y) { return cpm_powf(x, y); }
/* np.minimum / np.maximum: a NaN on either side propagates (that NaN's bits); else
 * the second operand on ties, so minimum(0.0, -0.0) = -0.0 and minimum(-0.0, 0.0) = 0.0 */
OP f32 op_min_f(f32 x, f32 y) { return op_blend_f(op_mask((x < y) | (x != x)), x, y); }
OP f32 op_max_f(f32 x, f32 y) { return op_blend_f(op_mask((x > y) | (x != x)), x, y); }
/* ---- float -> bool (int register); NaN compares false except in ne */
OP i32 op_lt_f(f32 x, f32 y) { return x < y; }
OP i32 op_le_f(f32 x, f32 y) { return x <= y; }
OP i32 op_gt_f(f32 x, f32 y) { return x > y; }
OP i32 op_ge_f(f32 x, f32 y) { return x >= y; }
OP i32 op_eq_f(f32 x, f32 y) { return x == y; }
OP i32 op_ne_f(f32 x, f32 y) { return x != y; }

/* ---- int32, wrapping (computed in uint32_t: no C undefined behaviour) */
OP i32 op_add_i(i32 x, i32 y) { return (i32)((u32)x + (u32)y); }
OP i32 op_sub_i(i32 x, i32 y) { return (i32)((u32)x - (u32)y); }
OP i32 op_mul_i(i32 x, i32 y) { return (i32)((u32)x * (u32)y); }
/* Python/NumPy floor division: x // 0 = 0, x % 0 = 0, INT_MIN // -1 = INT_MIN,
 * INT_MIN % -1 = 0. The divisor is replaced by 1 in the two trapping cases so the
 * hardware divide never faults (x86 idiv raises SIGFPE). */
OP i32 op_divisor_i(i32 x, i32 y) {
    return CP_PICK_I((y == 0) | ((x == INT32_MIN) & (y == -1)), 1, y);
}
/* Truncating x / d and x % d for a divisor that is never 0 and never -1 with
 * x = INT_MIN; cores without a divide instruction use our helper (mathlib.h). */
#if CPM_NO_HW_DIVIDE
OP i32 op_tdiv_i(i32 x, i32 d) { return cpm_div_s32(x, d); }
OP i32 op_trem_i(i32 x, i32 d) { return (i32)((u32)x - (u32)cpm_div_s32(x, d) * (u32)d); }
#else
OP i32 op_tdiv_i(i32 x, i32 d) { return x / d; }
OP i32 op_trem_i(i32 x, i32 d) { return x % d; }
#endif
/* floor division and modulo by a divisor d that never traps (op_divisor_i's) */
OP i32 op_floordiv_by_i(i32 x, i32 d) {
    i32 q = op_tdiv_i(x, d), r = op_trem_i(x, d);
    return q - ((r != 0) & ((r ^ d) < 0));
}
OP i32 op_mod_by_i(i32 x, i32 d) {
    i32 r = op_trem_i(x, d);
    return ((r != 0) & ((r ^ d) < 0)) ? r + d : r; /* clang makes it r + (d & mask) everywhere; build.py checks */
}
OP i32 op_floordiv_i(i32 x, i32 y) {
    /* the quotient first, then the pick: written as one expression clang on x86_64
     * skips the division by a branch when y == 0 (build.py rejects that) */
    i32 q = op_floordiv_by_i(x, op_divisor_i(x, y));
    return CP_PICK_I(y == 0, 0, q);
}
OP i32 op_mod_i(i32 x, i32 y) { return op_mod_by_i(x, op_divisor_i(x, y)); }
OP i32 op_and_i(i32 x, i32 y) { return x & y; }
OP i32 op_or_i(i32 x, i32 y) { return x | y; }
OP i32 op_xor_i(i32 x, i32 y) { return x ^ y; }
/* NumPy shifts: counts outside 0..31 (including negative) shift everything out */
OP i32 op_shl_i(i32 x, i32 y) { return CP_PICK_I((u32)y < 32u, (i32)((u32)x << CP_COUNT(y)), 0); }
OP i32 op_shr_i(i32 x, i32 y) { return x >> CP_PICK_I((u32)y < 32u, (i32)CP_COUNT(y), 31); } /* arithmetic */
OP i32 op_lt_i(i32 x, i32 y) { return x < y; }
OP i32 op_le_i(i32 x, i32 y) { return x <= y; }
OP i32 op_gt_i(i32 x, i32 y) { return x > y; }
OP i32 op_ge_i(i32 x, i32 y) { return x >= y; }
OP i32 op_eq_i(i32 x, i32 y) { return x == y; }
OP i32 op_ne_i(i32 x, i32 y) { return x != y; }
OP i32 op_min_i(i32 x, i32 y) { return CP_PICK_I(x < y, x, y); }
OP i32 op_max_i(i32 x, i32 y) { return CP_PICK_I(x > y, x, y); }

/* ---- select (cp.iif): c ? x : y on the float bit patterns, c an int register */
OP f32 op_select_f(i32 c, f32 x, f32 y) {
    u32 mask = 0u - (u32)(c != 0);
    /* empty asm (no instruction, every target): hides the mask from the optimiser,
     * which would otherwise turn the blend back into a branch with two tail calls */
    __asm__("" : "+r"(mask));
    return op_blend_f(mask, x, y);
}

/* ---- unary */
OP f32 op_neg_f(f32 x) { return -x; }                 /* sign flip: -(0.0) = -0.0 */
OP f32 op_abs_f(f32 x) { return __builtin_fabsf(x); } /* clears the sign bit */
OP f32 op_sqrt_f(f32 x) { return __builtin_sqrtf(x); } /* the instruction (sqrtss) */
OP f32 op_sin_f(f32 x) { return cpm_sinf(x); }
OP f32 op_cos_f(f32 x) { return cpm_cosf(x); }
OP f32 op_tan_f(f32 x) { return cpm_tanf(x); }
OP f32 op_asin_f(f32 x) { return cpm_asinf(x); }
OP f32 op_acos_f(f32 x) { return cpm_acosf(x); }
OP f32 op_atan_f(f32 x) { return cpm_atanf(x); }
OP f32 op_exp_f(f32 x) { return cpm_expf(x); }
OP f32 op_log_f(f32 x) { return cpm_logf(x); }
OP f32 op_tanh_f(f32 x) { return cpm_tanhf(x); }
OP f32 op_sigmoid_f(f32 x) { return cpm_sigmoidf(x); }
OP f32 op_copy_f(f32 x) { return x; }
OP i32 op_neg_i(i32 x) { return (i32)(0u - (u32)x); } /* -INT_MIN = INT_MIN */
OP i32 op_abs_i(i32 x) { return x < 0 ? (i32)(0u - (u32)x) : x; }
OP i32 op_copy_i(i32 x) { return x; }
OP f32 op_itof_i(i32 x) { return (f32)x; } /* round to nearest */

/* ---- casts (docs/math.md, "Casts"): the same result on every target. C leaves a float
 * to int conversion undefined out of range (and the instructions disagree there:
 * cvttss2si gives INT_MIN, fcvtzs saturates), so only an in-range value reaches the
 * conversion; masks pick the saturated result or 0 (NaN) otherwise, without branches.
 * The ranges are tested on the bit pattern (integer compares with immediates), which
 * needs no float constants and so no literal pool after a stencil's tail jump. */
OP i32 op_ftoi_f(f32 x) {
    u32 b = op_bits(x), mag = b & 0x7fffffffu;
    u32 in = 0u - (u32)(mag < 0x4f000000u);   /* |x| < 2^31 */
    u32 sat = 0u - (u32)((mag >= 0x4f000000u) & (mag <= 0x7f800000u)); /* not NaN */
    i32 t = (i32)op_blend_f(in, x, 0.0f);     /* truncates toward 0 */
    /* INT_MAX, or INT_MIN for a negative x (0x7fffffff + 1 wraps) */
    return (i32)(((u32)t & in) | ((0x7fffffffu + (b >> 31)) & sat));
}
/* to a byte value 0..255: floats truncate toward 0, NaN, -0.0 and negatives give 0
 * (as signed ints, positive float bit patterns order as the floats do) */
OP i32 op_tobyte_f(f32 x) {
    i32 b = (i32)op_bits(x);
    u32 in = 0u - (u32)((b > 0) & (b < 0x437f0000));           /* 0 < x < 255 */
    u32 hi = 0u - (u32)((b >= 0x437f0000) & (b <= 0x7f800000)); /* 255 <= x <= inf */
    i32 t = (i32)op_blend_f(in, x, 0.0f);
    return (i32)(((u32)t & in) | (255u & hi));
}
OP i32 op_tobyte_i(i32 x) { return op_min_i(op_max_i(x, 0), 255); }

#endif
