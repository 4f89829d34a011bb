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

/* The three holes: the next stencil (tail call, dropped or patched by the linker) and
 * the data slot of the step, as a float or as an int. */
extern void cp_next(f32 a, f32 b, i32 i, i32 j);
extern f32 cp_mf;
extern i32 cp_mi;

#define NEXT(a, b, i, j) __attribute__((musttail)) return cp_next(a, b, i, j)
#define OP static inline __attribute__((always_inline))

/* ---- float -> float */
OP f32 op_add_f(f32 x, f32 y) { return x + y; }
OP f32 op_sub_f(f32 x, f32 y) { return x - y; }
OP f32 op_mul_f(f32 x, f32 y) { return x * y; }
OP f32 op_div_f(f32 x, f32 y) { return x / y; }
OP f32 op_floordiv_f(f32 x, f32 y) { return cpm_floordivf(x, y); }
OP f32 op_mod_f(f32 x, f32 y) { return cpm_remainderf(x, y); }
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
    return ((y == 0) | ((x == INT32_MIN) & (y == -1))) ? 1 : y;
}
OP i32 op_floordiv_i(i32 x, i32 y) {
    i32 d = op_divisor_i(x, y);
    i32 q = x / d, r = x % d;
    q -= (r != 0) & ((r ^ d) < 0);
    return y == 0 ? 0 : q;
}
OP i32 op_mod_i(i32 x, i32 y) {
    i32 d = op_divisor_i(x, y);
    i32 r = x % d;
    return ((r != 0) & ((r ^ d) < 0)) ? r + d : r;
}
OP i32 op_and_i(i32 x, i32 y) { return x & y; }
OP i32 op_or_i(i32 x, i32 y) { return x | y; }
OP i32 op_xor_i(i32 x, i32 y) { return x ^ y; }
/* NumPy shifts: counts outside 0..31 (including negative) shift everything out */
OP i32 op_shl_i(i32 x, i32 y) { return (u32)y < 32u ? (i32)((u32)x << (u32)y) : 0; }
OP i32 op_shr_i(i32 x, i32 y) { return x >> ((u32)y < 32u ? y : 31); } /* arithmetic */
OP i32 op_lt_i(i32 x, i32 y) { return x < y; }
OP i32 op_le_i(i32 x, i32 y) { return x <= y; }
OP i32 op_gt_i(i32 x, i32 y) { return x > y; }
OP i32 op_ge_i(i32 x, i32 y) { return x >= y; }
OP i32 op_eq_i(i32 x, i32 y) { return x == y; }
OP i32 op_ne_i(i32 x, i32 y) { return x != y; }

/* ---- unary */
OP f32 op_neg_f(f32 x) { return -x; }                 /* sign flip: -(0.0) = -0.0 */
OP f32 op_abs_f(f32 x) { return __builtin_fabsf(x); } /* clears the sign bit */
OP f32 op_sqrt_f(f32 x) { return __builtin_sqrtf(x); } /* the instruction (sqrtss) */
OP f32 op_sin_f(f32 x) { return cpm_sinf(x); }
OP f32 op_cos_f(f32 x) { return cpm_cosf(x); }
OP f32 op_copy_f(f32 x) { return x; }
OP i32 op_neg_i(i32 x) { return (i32)(0u - (u32)x); } /* -INT_MIN = INT_MIN */
OP i32 op_abs_i(i32 x) { return x < 0 ? (i32)(0u - (u32)x) : x; }
OP i32 op_copy_i(i32 x) { return x; }
OP f32 op_itof_i(i32 x) { return (f32)x; } /* round to nearest */

#endif
