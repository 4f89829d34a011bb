/* copapy math library: float32 functions shared by every target.
 *
 * Rules (see docs/math.md): IEEE basic float32 operations and integer operations
 * only (no double, no libc, no FMA contraction), no data-dependent loops, the same
 * bits on every architecture. NaN and infinity inputs give the canonical quiet NaN
 * 0x7fc00000 (positive), never a hardware-dependent NaN pattern.
 *
 * Every function is a global, non-inlined `cpm_*` symbol so the copapy linker copies
 * each one once, next to the stencils that call it. */
#ifndef COPAPY_MATHLIB_H
#define COPAPY_MATHLIB_H

#include <stdint.h>

#define CPM_NOINLINE __attribute__((noinline))

CPM_NOINLINE float cpm_floorf(float x);
CPM_NOINLINE float cpm_fmodf(float x, float y);      /* exact, C fmodf semantics */
CPM_NOINLINE float cpm_sinf(float x);                /* <= 1 ulp, all finite inputs */
CPM_NOINLINE float cpm_cosf(float x);                /* <= 1 ulp, all finite inputs */
CPM_NOINLINE float cpm_sincosf(float x, float *c);   /* sin x; cos x to *c: the same bits */
CPM_NOINLINE float cpm_floordivf(float a, float b);  /* NumPy float32 floor_divide */
CPM_NOINLINE float cpm_remainderf(float a, float b); /* NumPy float32 remainder (%) */
CPM_NOINLINE float cpm_tanf(float x);
CPM_NOINLINE float cpm_asinf(float x);
CPM_NOINLINE float cpm_acosf(float x);
CPM_NOINLINE float cpm_atanf(float x);
CPM_NOINLINE float cpm_atan2f(float y, float x);     /* C argument order: atan2f(y, x) */
CPM_NOINLINE float cpm_expf(float x);
CPM_NOINLINE float cpm_logf(float x);
CPM_NOINLINE float cpm_powf(float x, float y);       /* C99 powf special cases */
CPM_NOINLINE float cpm_tanhf(float x);
CPM_NOINLINE float cpm_sigmoidf(float x);    /* 1 / (1 + exp(-x)), its bits */
/* Cores without an integer divide instruction (ARMv6, ARMv7-A in ARM state such as
 * Cortex-A9) divide with cpm_div_s32: x / d truncated toward 0, for d != 0 and not
 * (INT_MIN, -1); 32 fixed steps of restoring division, no data-dependent branch. The
 * compiler would otherwise call libgcc's __aeabi_idiv, which programs do not have. */
#if defined(__arm__) && !defined(__ARM_FEATURE_IDIV)
#define CPM_NO_HW_DIVIDE 1
CPM_NOINLINE int32_t cpm_div_s32(int32_t x, int32_t d);
#else
#define CPM_NO_HW_DIVIDE 0
#endif

#endif
