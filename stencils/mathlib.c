/* copapy math library (float32). See mathlib.h for the rules and docs/math.md for
 * the measured accuracy.
 *
 * Only IEEE float32 + - * / and int<->float conversions are used on floats; all other
 * work is integer. Every loop has a constant trip count. Compile with
 * -ffp-contract=off (no fused multiply-add): several algorithms below (TwoSum,
 * Dekker's product) are exact only with separately rounded operations. */
#include <stdint.h>
#include "mathlib.h"

#define CPM_INLINE static inline __attribute__((always_inline))
#define CPM_NAN_BITS 0x7fc00000u
#define CPM_INF_BITS 0x7f800000u

typedef union {
    float f;
    uint32_t u;
} cpm_fu;

CPM_INLINE uint32_t cpm_bits(float x) {
    cpm_fu v;
    v.f = x;
    return v.u;
}

CPM_INLINE float cpm_from_bits(uint32_t u) {
    cpm_fu v;
    v.u = u;
    return v.f;
}

/* Branch-free choice: all ones when c (0 or 1) is 1. clang turns a blend whose mask it
 * can trace back to a compare into a branch when that lets it skip work on one side
 * (on RISC-V, which has no conditional move, for every blend); an empty asm (no
 * instruction) hides the mask's origin. */
CPM_INLINE uint32_t cpm_mask(uint32_t c) {
    uint32_t m = 0u - c;
    __asm__("" : "+r"(m));
    return m;
}

/* The same without the asm when vec is 1 (a constant): for the vectorised loops of the
 * array kernels (x86_64 SSE2, AArch64 NEON), where the asm would stop the vectoriser
 * and the vector code picks by masks anyway (no branch: the kernels are checked). */
CPM_INLINE uint32_t cpm_mask_v(uint32_t c, int vec) {
    if (vec)
        return 0u - c;
    return cpm_mask(c);
}

/* m ? a : b by bits (m all ones or zero): the operand not chosen never leaks */
CPM_INLINE uint32_t cpm_selu(uint32_t m, uint32_t a, uint32_t b) { return (a & m) | (b & ~m); }
CPM_INLINE float cpm_self(uint32_t m, float a, float b) {
    return cpm_from_bits(cpm_selu(m, cpm_bits(a), cpm_bits(b)));
}

/* Float choices and sign flips that stay in the floating-point registers where the target
 * has bit operations there (x86_64 SSE2, AArch64 NEON): a value picked on a critical path
 * then never crosses to the integer registers and back (about 6 cycles). The mask m (all
 * ones or zero) and the flip f come from the integer side, off that path. Elsewhere, and
 * in the array kernels' vector loops (vec = 1), the integer forms. Same bits everywhere. */
#if defined(__x86_64__) || defined(__aarch64__)
typedef uint32_t cpm_v4u __attribute__((vector_size(16)));
typedef float cpm_v4f __attribute__((vector_size(16)));
CPM_INLINE cpm_v4u cpm_v4(float a) {
    cpm_v4f v = {a, a, a, a};
    return (cpm_v4u)v;
}
CPM_INLINE cpm_v4u cpm_v4_bits(uint32_t m) {
    cpm_v4u v = {m, m, m, m};
    return v;
}
CPM_INLINE float cpm_v4_first(cpm_v4u v) { return ((cpm_v4f)v)[0]; }
#endif

/* (a & ma | b & mb) ^ f on the bits for disjoint masks: a choice of a or b (or neither)
 * and a flip, as (a & ma) ^ ((b & mb) ^ f), so the later operand a is two operations from
 * the result */
CPM_INLINE float cpm_fpick(float a, uint32_t ma, float b, uint32_t mb, uint32_t f, int vec) {
#if defined(__x86_64__) || defined(__aarch64__)
    if (!vec)
        return cpm_v4_first((cpm_v4(a) & cpm_v4_bits(ma)) ^ ((cpm_v4(b) & cpm_v4_bits(mb)) ^ cpm_v4_bits(f)));
#endif
    return cpm_from_bits((cpm_bits(a) & ma) ^ ((cpm_bits(b) & mb) ^ f));
}

/* min(v, b) for v >= 0 or NaN (then b): on x86_64 and AArch64 one minss or fcsel,
 * without a trip through the integer registers; elsewhere by a mask on the bits (a
 * ternary on floats can become a branch, e.g. on RISC-V). */
CPM_INLINE float cpm_min_pos(float v, float b, int vec) { /* v >= 0 or NaN, b > 0: NaN gives b */
#if defined(__x86_64__) || defined(__aarch64__)
    (void)vec;
    return v < b ? v : b;
#else
    return cpm_from_bits(cpm_selu(cpm_mask_v(cpm_bits(v) > cpm_bits(b), vec), cpm_bits(b), cpm_bits(v)));
#endif
}

/* 1.0f if c else +0.0f: on x86_64 and AArch64 a compare and an and (fcsel) in the
 * floating-point registers, elsewhere a mask on the bits */
CPM_INLINE float cpm_one_if(int c, int vec) {
#if defined(__x86_64__) || defined(__aarch64__)
    (void)vec;
    return c ? 1.0f : 0.0f;
#else
    return cpm_from_bits(cpm_mask_v((uint32_t)c, vec) & 0x3f800000u);
#endif
}

/* x clamped into [lo, hi] (lo < 0 < hi), NaN to hi or lo: on x86_64 and AArch64 minss/maxss (fmin/fcsel)
 * in the floating-point registers, elsewhere masks (a ternary on floats can become a
 * branch, e.g. on RISC-V) */
CPM_INLINE float cpm_clampf(float x, float lo, float hi, int vec) {
#if defined(__x86_64__) || defined(__aarch64__)
    (void)vec;
    float a = x < hi ? x : hi;
    return a > lo ? a : lo;
#else
    /* on the bits, for lo < 0 < hi: above hi (NaN too) as signed ints, below lo as
     * unsigned ones (a negative NaN gives lo) */
    uint32_t u = cpm_bits(x);
    u = cpm_selu(cpm_mask_v((int32_t)u > (int32_t)cpm_bits(hi), vec), cpm_bits(hi), u);
    return cpm_from_bits(cpm_selu(cpm_mask_v(u > cpm_bits(lo), vec), cpm_bits(lo), u));
#endif
}

/* v clamped into [lo, hi] by masks (a ternary becomes a branch on RISC-V) */
CPM_INLINE uint32_t cpm_clamp_iv(int32_t v, int32_t lo, int32_t hi, int vec) {
    uint32_t r = cpm_selu(cpm_mask_v(v < lo, vec), (uint32_t)lo, (uint32_t)v);
    return cpm_selu(cpm_mask_v(v > hi, vec), (uint32_t)hi, r);
}

CPM_INLINE uint32_t cpm_clamp_i(int32_t v, int32_t lo, int32_t hi) { return cpm_clamp_iv(v, lo, hi, 0); }

/* The address of a read-only table. x86_64 code is not position independent
 * (-fno-pic), so clang would index a table with a 32-bit absolute address, which the
 * linker does not patch; a RIP-relative lea (R_X86_64_PC32) reaches it instead (the
 * table must be `used`: only the asm names it). Other targets address it PC-relatively
 * or from a literal already. */
#if defined(__x86_64__)
#define CPM_RODATA(sym) \
    ({ const float *p_; __asm__("leaq " #sym "(%%rip), %0" : "=r"(p_)); p_; })
#else
#define CPM_RODATA(sym) (&(sym)[0][0])
#endif

/* floor(log2(v)) for 0 < v < 2^24: the int->float conversion is exact, so its
 * exponent field is the position of the leading bit (no clz, which some targets
 * would turn into a library call). */
CPM_INLINE int cpm_ilog2_24(uint32_t v) {
    return (int)(cpm_bits((float)(int32_t)v) >> 23) - 127;
}

/* ------------------------------------------------------------------ floor */

CPM_NOINLINE float cpm_floorf(float x) {
    uint32_t u = cpm_bits(x);
    int32_t e = (int32_t)((u >> 23) & 0xffu) - 127;
    uint32_t neg = cpm_mask(u >> 31);
    /* 0 <= e < 23: clear the fractional bits, rounding the magnitude of a negative up
     * first (the carry may reach the exponent); integral values come back unchanged */
    uint32_t frac = 0x007fffffu >> cpm_clamp_i(e, 0, 22);
    uint32_t mid = (u + (neg & frac)) & ~frac;
    /* |x| < 1: +-0 unchanged, else -1 or +0 */
    uint32_t small = cpm_selu(cpm_mask((u << 1) == 0), u, neg & 0xbf800000u);
    /* e >= 23: already integral, or inf / NaN (returned unchanged) */
    uint32_t r = cpm_selu(cpm_mask(e < 0), small, mid);
    return cpm_from_bits(cpm_selu(cpm_mask(e >= 23), u, r));
}

/* ------------------------------------------------------------------ fmod */

/* (a * b) mod my for a, b < 2^24, my in [2^23, 2^24), inv = floor(2^49 / my).
 * Barrett reduction with a bit more than it needs: top = n / 2^22 and inv each lose
 * less than 1, which costs less than 2^22 / my + n / 2^49 < 1 of the quotient, so the
 * estimate is at most 1 too small and one conditional subtraction finishes. */
CPM_INLINE uint32_t cpm_mulmod(uint32_t a, uint32_t b, uint32_t my, uint32_t inv) {
    uint64_t n = (uint64_t)a * b;                                 /* < 2^48 */
    uint32_t top = (uint32_t)(n >> 22);                           /* < 2^26 */
    uint32_t qe = (uint32_t)(((uint64_t)top * inv) >> 27);        /* q - 1 <= qe <= q */
    uint32_t r = (uint32_t)(n - (uint64_t)qe * my);               /* < 2 my */
    r -= cpm_mask(r >= my) & my;
    return r;
}

/* Exact fmodf: |x| = mx 2^ex, |y| = my 2^ey (integer mantissas), so
 * |x| mod |y| = ((mx * 2^(ex-ey)) mod my) 2^ey. 2^d mod my is computed by
 * square-and-multiply over the bits of d (d <= 276) with Barrett reductions,
 * so the cost does not depend on the operands. */
CPM_NOINLINE float cpm_fmodf(float x, float y) {
    uint32_t ux = cpm_bits(x), uy = cpm_bits(y);
    uint32_t sx = ux & 0x80000000u;
    uint32_t ax = ux & 0x7fffffffu, ay = uy & 0x7fffffffu;
    /* x inf/NaN, y NaN or 0: NaN; |x| < |y| (y = +-inf included): x. The general case
     * runs on every input (on 1 mod 1 where those rules decide), masks pick. */
    uint32_t nan = cpm_mask((ax >= 0x7f800000u) | (ay > 0x7f800000u) | (ay == 0));
    uint32_t keep = cpm_mask(ax < ay);
    ax = cpm_selu(nan | keep, 0x3f800000u, ax);
    ay = cpm_selu(nan | keep, 0x3f800000u, ay);

    uint32_t ex = ax >> 23, ey = ay >> 23;
    uint32_t mx = (ax & 0x007fffffu) | (ex ? 0x00800000u : 0u);
    uint32_t my = (ay & 0x007fffffu) | (ey ? 0x00800000u : 0u);
    ex = ex ? ex : 1u; /* subnormals share the exponent of the smallest normal */
    ey = ey ? ey : 1u;

    /* normalise my to [2^23, 2^24); s > 0 only for a subnormal y */
    int s = 23 - cpm_ilog2_24(my);
    my <<= s;
    uint32_t d = ex - ey + (uint32_t)s; /* 0 <= d <= 276, since |x| >= |y| */

    /* inv = floor(2^49 / my), in (2^25, 2^26]: the float quotient (my is exact in a
     * float) is the exact one rounded to the grid of 4, so within 2; the residual
     * 2^49 - q my lies in [-2 my, 2 my] and fits 32 bits (2^49 is 0 modulo 2^32), and
     * two steps each way make q the floor */
    uint32_t q = (uint32_t)(int32_t)(0x1p49f / (float)(int32_t)my);
    int32_t res = (int32_t)(0u - q * my), m = (int32_t)my;
    uint32_t inv = q - (cpm_mask(res < 0) & 1u) - (cpm_mask(res < -m) & 1u) +
                   (cpm_mask(res >= m) & 1u) + (cpm_mask(res >= 2 * m) & 1u);

    /* t = 2^d mod my by square-and-multiply over the bits of d; its top five bits
     * (d >> 4 <= 17) give 2^(d >> 4) < my directly, four squarings the rest; the loop
     * is fully unrolled (straight-line steps: stencils/bounds.py bounds fmod's
     * instruction count without a loop to walk) */
    uint32_t t = 1u << (d >> 4);
    __asm__("" : "+r"(t)); /* else clang squares the power of 2 by a 64-bit shift, which
                            * branches on 32-bit RISC-V */
#pragma clang loop unroll(full)
    for (int k = 3; k >= 0; k--) {
        t = cpm_mulmod(t, t, my, inv);
        t <<= (d >> k) & 1u;
        t -= cpm_mask(t >= my) & my;
    }
    uint32_t r = cpm_mulmod(mx, t, my, inv);
    uint32_t zero = cpm_mask(r == 0); /* then +-0 with the sign of x */

    /* the result r 2^(ey - 150 - s) is a multiple of 2^-149, so r >> s is exact */
    r >>= s;
    int lr = cpm_ilog2_24(r | (zero & 1u)); /* shift counts stay defined for r = 0 */
    int be = lr + (int)ey - 23; /* biased exponent of the result */
    uint32_t normal = ((uint32_t)(be - 1) << 23) + (r << ((uint32_t)(23 - lr) & 31u));
    uint32_t subnormal = r << ((ey - 1u) & 31u); /* value / 2^-149 */
    uint32_t out = cpm_selu(cpm_mask(be >= 1), normal, subnormal) & ~zero;
    out = cpm_selu(keep, ux & 0x7fffffffu, out);
    return cpm_from_bits(cpm_selu(nan, CPM_NAN_BITS, out | sx));
}

/* ------------------------------------------------------------------ NumPy divmod */

/* NumPy's npy_divmodf, step for step (numpy/_core/src/npymath/npy_math_internal.h.src). */
CPM_INLINE float cpm_divmodf(float a, float b, float *modulus) {
    /* every branch of npy_divmodf runs; masks pick (a NaN tests true, as in C) */
    float mod = cpm_fmodf(a, b);
    float div = (a - mod) / b;
    uint32_t adj = cpm_mask((mod != 0.0f) & ((b < 0.0f) != (mod < 0.0f)));
    float mod1 = cpm_self(adj, mod + b, mod), div1 = cpm_self(adj, div - 1.0f, div);
    mod1 = cpm_self(cpm_mask(mod != 0.0f), mod1,
                    cpm_from_bits(cpm_bits(b) & 0x80000000u)); /* copysign(0, b) */
    float fd = cpm_floorf(div1);
    fd = cpm_self(cpm_mask(div1 - fd > 0.5f), fd + 1.0f, fd);
    float q = a / b;
    fd = cpm_self(cpm_mask(div1 != 0.0f), fd,
                  cpm_from_bits(cpm_bits(q) & 0x80000000u)); /* copysign(0, a/b) */
    uint32_t bz = cpm_mask(b == 0.0f);
    *modulus = cpm_self(bz, mod, mod1);
    return cpm_self(bz, q, fd);
}

CPM_NOINLINE float cpm_floordivf(float a, float b) {
    float mod;
    return cpm_divmodf(a, b, &mod);
}

CPM_NOINLINE float cpm_remainderf(float a, float b) {
    float mod;
    cpm_divmodf(a, b, &mod);
    return mod;
}

/* ------------------------------------------------------------------ sin / cos */

/* Error-free transformations (exact with round-to-nearest, no FMA contraction). */
CPM_INLINE void cpm_two_sum(float a, float b, float *s, float *e) {
    float x = a + b;
    float bv = x - a;
    float av = x - bv;
    *e = (a - av) + (b - bv);
    *s = x;
}

CPM_INLINE void cpm_fast_two_sum(float a, float b, float *s, float *e) { /* |a| >= |b| or a == 0 */
    float x = a + b;
    *e = b - (x - a);
    *s = x;
}

CPM_INLINE void cpm_split(float a, float *hi, float *lo) { /* Veltkamp, 12 + 12 bits */
    float c = 4097.0f * a;
    float h = c - (c - a);
    *hi = h;
    *lo = a - h;
}

CPM_INLINE void cpm_two_prod(float a, float b, float *p, float *e) { /* Dekker */
    float x = a * b, ah, al, bh, bl;
    cpm_split(a, &ah, &al);
    cpm_split(b, &bh, &bl);
    *e = (((ah * bh - x) + ah * bl) + al * bh) + al * bl;
    *p = x;
}

/* pi/2 = C1 + C2 + C3 + C4 (+ 1e-23): C1..C3 have at most 14 significant bits, so
 * kh * Ci (kh < 2^20 a multiple of 512) and kl * Ci (|kl| <= 256) are exact. */
#define CPM_PIO2_C1 0x1.922p+0f
#define CPM_PIO2_C2 (-0x1.2afp-18f)
#define CPM_PIO2_C3 0x1.0b48p-34f
#define CPM_PIO2_C4 (-0x1.ee59dap-50f)
/* pi/2 = HI + LO to 48 bits */
#define CPM_PIO2_HI 0x1.921fb6p+0f
#define CPM_PIO2_LO (-0x1.777a5cp-25f)
/* C2 + C3 rounded to float (24 bits): k CF is pk, one rounded product from k */
#define CPM_PIO2_C23 (-0x1.2aeef4p-18f)
#define CPM_TWO_OVER_PI 0x1.45f306p-1f
/* (t + M) - M rounds t to the nearest multiple of ulp(M) (ties to even): of 1 for
 * 1.5 2^23 (|t| < 2^22), of 512 for 1.5 2^32 (|t| < 2^31). Two additions, no
 * float -> int -> float round trip on the way to the reduction. */
#define CPM_ROUND_1 0x1.8p23f
#define CPM_ROUND_512 0x1.8p32f

/* (t + M) - M for M = 1.5 2^12 rounds t (|t| < 2^11) to a multiple of 2^-11: the head of
 * the reduced argument whose square is exact (cos kernel) */
#define CPM_ROUND_2M11 0x1.8p12f

/* Cody-Waite, the steps tan's and sin's/cos's reductions share: y = k pi/2 + r with k =
 * y 2/pi rounded = kh + kl, kh a multiple of 512 and |kl| <= 257, both found by the
 * rounding constants above (no conversion on the critical path). For y < 2^20 every
 * product kh Ci, kl Ci (i <= 3) is exact, and y - kh C1 and the next subtraction of kl C1
 * are exact (their results lie on y's grid, below 2^9, or on 2^-15's, below 4): t1.
 * k C2 + k C3 = p + pe + p2e + p3e exactly (three Fast2Sums: |kh| > |kl| unless kh = 0,
 * and |k C2| > |k C3|), formed beside that chain. Larger y (< 2^22) run the same steps
 * with rounded products: r is then off by about y 2^-24 (docs/math.md, "Large
 * arguments"). k mod 4 is kl mod 4, as kh is a multiple of 512.
 *
 * ties_up (a constant, tan's): a tie (t = n + 1/2 exactly) goes up, as (int)(t + 0.5)
 * did (t = y C lies below y 2/pi, so k is then mostly the nearest integer and |r| <=
 * pi/4 + 0.017); sin and cos take ties to even (|r| up to 0.877, one compare and add
 * less on the critical path). */
typedef struct {
    float kr, k, kh, kl, t1, p, pe, p2e, p3e; /* kr = t + 1.5 2^23: k + 2^22 in its low bits */
} cpm_cody_waite;

CPM_INLINE cpm_cody_waite cpm_cody_waite_steps(float y, int ties_up, int vec) {
    cpm_cody_waite c;
    float t = y * CPM_TWO_OVER_PI;
    c.kr = t + CPM_ROUND_1;
    float k = c.kr - CPM_ROUND_1;
    if (ties_up)
        k = k + cpm_one_if(t - k == 0.5f, vec);
    c.k = k;
    c.kh = (t + CPM_ROUND_512) - CPM_ROUND_512;
    c.kl = k - c.kh;
    c.t1 = (y - c.kh * CPM_PIO2_C1) - c.kl * CPM_PIO2_C1; /* both exact */
    float p2, p3;
    cpm_fast_two_sum(c.kh * CPM_PIO2_C2, c.kl * CPM_PIO2_C2, &p2, &c.p2e);
    cpm_fast_two_sum(c.kh * CPM_PIO2_C3, c.kl * CPM_PIO2_C3, &p3, &c.p3e);
    cpm_fast_two_sum(p2, p3, &c.p, &c.pe);
    return c;
}

/* tan's reduction (the steps it was measured with): p <= 0 rounded to the grid of 2^-24
 * (or 2^-22 for |p| > 1.25: ph), which t1 lies on (y >= 1/2 where k != 0), so sh = t1 -
 * ph is exact, |sh| < 1, and the rest sl (at most 2^-22) with k C4 as kh C4 + kl C4;
 * sh + sl normalised by a TwoSum into rh + rl, |rl| <= ulp(rh)/2. |rh + rl| <= pi/4 plus
 * the rounding of y 2/pi (|rh| < 0.802), accurate to 2^-46 absolute
 * (stencils/check_reduction.py). */
CPM_INLINE float cpm_rem_pio2_cw(float y, float *rh, float *rl, int vec) {
    cpm_cody_waite c = cpm_cody_waite_steps(y, 1, vec);
    float ph = (c.p - 0.75f) + 0.75f;
    float c4 = c.kh * CPM_PIO2_C4 + c.kl * CPM_PIO2_C4;
    float sh = c.t1 - ph;
    float sl = -(((c.p - ph) + c.pe) + ((c.p2e + c.p3e) + c4));
    cpm_two_sum(sh, sl, rh, rl);
    return c.kl;
}

/* |x| (bits ax, finite or not) as rh + rl and its quadrant (mod 4), without a branch:
 * Cody-Waite on every input, |x| clamped to 2^22 (inf and NaN too: the callers pick NaN
 * for those). For |x| < pi/4, k = 0 and the steps give rh = |x|, rl = 0 exactly (checked
 * on every float). Below 2^20 |rh| < 0.802 (pi/4 plus the rounding of |x| 2/pi); from
 * 2^20 to 2^22 the rounded products add to it, |rh| < 0.849 (every float checked), so
 * the kernel stays bounded (no overflow, no NaN) with no clamp on the critical path.
 * tan's. */
CPM_INLINE uint32_t cpm_reduce(uint32_t ax, float *rh, float *rl, int vec) {
    float kl = cpm_rem_pio2_cw(cpm_min_pos(cpm_from_bits(ax), 0x1p22f, vec), rh, rl, vec);
    return (uint32_t)(int32_t)kl; /* |kl| <= 257: in range on every target */
}

/* sin's and cos's: |x| (bits ax, finite or not) = k pi/2 + r with ties to even, r = r0 -
 * dn - ev, |x| clamped to 2^22 (inf and NaN too: the caller picks NaN for those). The
 * kernels' argument r0 = t1 - pk is one operation after t1: pk = k CF is a single rounded
 * product of k (known three operations before kl) and CF = C2 + C3 rounded, so nothing
 * after kl but kl C1 and t1 stands between t and r0. dn (|dn| < 2^-22) is r0's first-
 * order correction, known a few operations later: the Fast2Sum error of t1 - pk (exact: t1
 * lies on a grid pk's ulp divides, or they cancel exactly) plus v = ep + rest, where ep =
 * k C2 + kh C3 - pk is exact (each partial sum lies on the grid of its finest term and
 * has at most 24 bits) and rest = kl C3 + k C4 (below 2^-26) rounds at 2^-50. ev is v's
 * rounding error: where r is tiny t1 - pk cancels exactly, dn = v and r0 - dn is exact,
 * so subtracting ev last keeps the relative accuracy there (the sin kernel does; x =
 * 801176.8, r = 2^-23.2, would be 1.16 ulp without it); elsewhere ev (< 2^-47) is below
 * half an ulp of the result and changes nothing. ah is r rounded to a multiple of 2^-11
 * (|ah| < 1.2: ah^2 and 1 - ah^2/2 are exact), the rounded t1 minus the rounded pk
 * beside r0. For |x| < pi/4: r0 = |x|, dn = ev = 0 (checked on every float). Below 2^20
 * |r0| < 0.877 and r0 - dn - ev is accurate to 2^-46 absolute; up to 2^22 (rounded
 * products) |r0| < 1.151, where the kernels stay bounded, sin and cos in [-1, 1]
 * (stencils/check_reduction.py, stencils/trig_exhaustive.py). Returns k mod 4, from the
 * bits of t + 1.5 2^23 (no conversion). */
typedef struct {
    float r0, dn, ev, ah; /* r = r0 - dn - ev; ah: r0 rounded to 2^-11 */
} cpm_sincos_arg;

CPM_INLINE uint32_t cpm_reduce_sincos(uint32_t ax, cpm_sincos_arg *a, int vec) {
    cpm_cody_waite c = cpm_cody_waite_steps(cpm_min_pos(cpm_from_bits(ax), 0x1p22f, vec), 0, vec);
    float pk = c.k * CPM_PIO2_C23;
    /* kh C2 and pk are within a factor 2 (or kh = 0): every step exact */
    float ep = ((c.kh * CPM_PIO2_C2 - pk) + c.kl * CPM_PIO2_C2) + c.kh * CPM_PIO2_C3;
    float rest = c.kl * CPM_PIO2_C3 + c.k * CPM_PIO2_C4;
    float v = ep + rest;
    float r0 = c.t1 - pk;
    a->r0 = r0;
    a->dn = ((r0 - c.t1) + pk) + v;
    a->ev = rest - (v - ep);
    a->ah = (c.t1 + CPM_ROUND_2M11) - (pk + CPM_ROUND_2M11);
    return cpm_bits(c.kr) & 3u;
}

/* sin(r0)/r0 - 1 = z (S1 + S2 z + S3 z^2 + S4 z^3), z = r0^2: minimax coefficients on
 * [-pi/4, pi/4] (from FreeBSD/musl __sindf; rounded to float their relative error on
 * r0^3 P is 2^-28 there and 2^-27.7 up to 0.877, where a refit gains nothing:
 * stencils/fit_poly.py "sin S") */
#define CPM_SIN_S1 (-0.166666666416265235595f)
#define CPM_SIN_S2 0.0083333293858894631756f
#define CPM_SIN_S3 (-0.000198393348360966317347f)
#define CPM_SIN_S4 0.0000027183114939898219064f
/* cos x - 1 + x^2/2 = x^2 (C0P + C1 x^2 + C2 x^4 + C3 x^6): minimax on [0, 0.8775]
 * (stencils/fit_poly.py "cos C", 2^-31.4 absolute with the float coefficients; musl's
 * __cosdf, fitted on pi/4, reached 2^-28.3 at 0.877) */
#define CPM_COS_C0P 0x1.c932cep-28f
#define CPM_COS_C1 0x1.555528p-5f
#define CPM_COS_C2 (-0x1.6c0098p-10f)
#define CPM_COS_C3 0x1.9781f6p-16f

/* sin(r) and cos(r) for r = r0 - dn - ev (cpm_reduce_sincos), both kernels from shared
 * powers; each ends in one addition at full weight (sin's then subtracts ev, which only
 * matters where r is tiny). The polynomials in Estrin's form: the shortest chain from r0.
 *
 * sin(r0 - dn) = r0 + r0^3 P(z) - dn cos r0 to 2^-44 (dn^2 r0/2), with cos r0 as
 * 1 - z/2 + C1 z^2 (off by z^3/720, 2^-32 after the multiply by dn). r0^3 P(z) in pairs,
 * r0 z (S1 + S2 z) + r0 z^3 (S3 + S4 z), the first shared with cos's sin r0.
 *
 * cos(r0 - dn) = cos r0 + dn sin r0 to 2^-44, with sin r0 as r0 + r0 z (S1 + S2 z).
 * r0^2/2 is ah^2/2 (exact) plus (r0 - ah)(r0 + ah)/2 (below 2^-11, rounded at 2^-36),
 * so w = 1 - ah^2/2 is exact and only the final addition rounds at full weight; the
 * tail (cos r0 - 1 + r0^2/2) and the corrections round at 2^-30 at most. */
CPM_INLINE void cpm_sincos_kernels(const cpm_sincos_arg *a, float *ks, float *kc) {
    float r0 = a->r0, dn = a->dn, ah = a->ah;
    float z = r0 * r0, z2 = z * z, rz = r0 * z;
    float s3 = rz * (CPM_SIN_S1 + z * CPM_SIN_S2) + (rz * z2) * (CPM_SIN_S3 + z * CPM_SIN_S4);
    float cos0 = (1.0f - 0.5f * z) + z2 * CPM_COS_C1;
    *ks = (r0 + (s3 - dn * cos0)) - a->ev;
    float w = 1.0f - 0.5f * (ah * ah); /* exact */
    float hzl = 0.5f * ((r0 - ah) * (r0 + ah));
    float tail = z * (CPM_COS_C0P + z * CPM_COS_C1) + (z * z2) * (CPM_COS_C2 + z * CPM_COS_C3);
    float sinr = r0 + rz * (CPM_SIN_S1 + z * CPM_SIN_S2);
    *kc = w + ((tail - hzl) + dn * sinr);
}

/* sin x and cos x from one reduction, without a branch: both kernels run, the quadrant
 * picks by masks. sin, cos and the fused sincos (cp.sin and cp.cos of one value) are this
 * one body, so the fused pair gives the bits of the separate calls. No mask for tiny
 * |x|: below 2^-12 the kernels already give x and 1 (r0 = |x|, dn = 0, and the
 * corrections stay under half an ulp), nor for |results| > 1: |r0| < 1.151 keeps
 * |sin| < 0.92 and cos <= 1. (Masks for |x| > 2^22 instead of the clamp, one minss less
 * on the critical path, were 1 cycle shorter on Zen 3 in llvm-mca and 13 instructions
 * longer per 4 elements of the array kernel.) */
CPM_INLINE void cpm_sincos_body(float x, float *sp, float *cp, int vec) {
    uint32_t ux = cpm_bits(x), ax = ux & 0x7fffffffu;
    cpm_sincos_arg a;
    float ks, kc;
    uint32_t q = cpm_reduce_sincos(ax, &a, vec);
    cpm_sincos_kernels(&a, &ks, &kc);
    /* off the critical path, from x and q: which kernel each result takes (neither for
     * inf and NaN) and the flip after it: the sign (sin: quadrants 2 and 3 and a
     * negative x; cos: quadrants 1 and 2; the shift by 31 keeps bit 0 only), or the
     * NaN's bits onto the zero that inf and NaN leave */
    uint32_t nan = cpm_mask_v(ax >= CPM_INF_BITS, vec), odd = cpm_mask_v(q & 1u, vec);
    uint32_t ss = cpm_selu(nan, CPM_NAN_BITS, ((q >> 1) ^ (ux >> 31)) << 31);
    uint32_t cs = cpm_selu(nan, CPM_NAN_BITS, ((q + 1u) >> 1) << 31);
    *sp = cpm_fpick(ks, ~(odd | nan), kc, odd & ~nan, ss, vec); /* ks: the later kernel */
    *cp = cpm_fpick(ks, odd & ~nan, kc, ~(odd | nan), cs, vec);
}

/* one result of the pair, for the array kernels' vector loops (gen_arrays.py) */
CPM_INLINE float cpm_sinf_body(float x, int vec) {
    float s, c;
    cpm_sincos_body(x, &s, &c, vec);
    return s;
}

CPM_INLINE float cpm_cosf_body(float x, int vec) {
    float s, c;
    cpm_sincos_body(x, &s, &c, vec);
    return c;
}

CPM_NOINLINE float cpm_sinf(float x) {
    float s, c;
    cpm_sincos_body(x, &s, &c, 0);
    return s;
}

CPM_NOINLINE float cpm_cosf(float x) {
    float s, c;
    cpm_sincos_body(x, &s, &c, 0);
    return c;
}

/* sin x, with cos x stored to *cp: the fused pair (one reduction for both) */
CPM_NOINLINE float cpm_sincosf(float x, float *cp) {
    float s;
    cpm_sincos_body(x, &s, cp, 0);
    return s;
}

/* ------------------------------------------------------------------ double-float helpers */

/* A value hi + lo with |lo| <= ulp(hi)/2 (about 48 significant bits). */
typedef struct {
    float h, l;
} cpm_df;

CPM_INLINE cpm_df cpm_df_sum(float a, float b) { /* exact a + b */
    cpm_df r;
    cpm_two_sum(a, b, &r.h, &r.l);
    return r;
}

CPM_INLINE cpm_df cpm_df_norm(float a, float b) { /* |a| >= |b| or a == 0 */
    cpm_df r;
    cpm_fast_two_sum(a, b, &r.h, &r.l);
    return r;
}

CPM_INLINE cpm_df cpm_df_add(cpm_df a, cpm_df b) {
    cpm_df s = cpm_df_sum(a.h, b.h);
    return cpm_df_norm(s.h, s.l + (a.l + b.l));
}

CPM_INLINE cpm_df cpm_df_mul(cpm_df a, cpm_df b) {
    float p, e;
    cpm_two_prod(a.h, b.h, &p, &e);
    e = e + (a.h * b.l + a.l * b.h);
    return cpm_df_norm(p, e);
}

CPM_INLINE cpm_df cpm_df_div(cpm_df a, cpm_df b) {
    float q = a.h / b.h, p, e;
    cpm_two_prod(q, b.h, &p, &e);
    float r = (((a.h - p) - e) + a.l) - q * b.l; /* a - q b, a.h - p is exact */
    return cpm_df_norm(q, r / b.h);
}

/* ------------------------------------------------------------------ exp / log / pow */

/* ln 2 = C1 + C2 + C3 (to 2^-62): C1 and C2 have 16 significant bits, so n * C1 and
 * n * C2 are exact for |n| < 2^8. */
#define CPM_LN2_C1 0x1.62e4p-1f
#define CPM_LN2_C2 0x1.7f7ep-20f
#define CPM_LN2_C3 (-0x1.c610cap-37f)
#define CPM_LN2_C2F 0x1.7f7d1cp-20f /* ln 2 - C1 rounded to float32 (pow's log) */
#define CPM_LOG2E 0x1.715476p+0f

/* exp(x) without a branch: x clamped into [-104, 89], n = round(x / ln 2) by the
 * 1.5 2^23 shift (exact integer in the low mantissa bits, no float-to-int conversion),
 * r = x - n ln 2 as rh + rl (Cody-Waite: n C1 and n C2 exact for |n| <= 150, TwoSum),
 * exp r = s + (e1 + rl + r^2/2 + r^3 Q(r)) with s = 1 + rh and e1 its exact rounding
 * error, rounded once (error about 0.18 ulp before that rounding), then scaled by
 * 2^(n/2) 2^(n - n/2): the first product is exact, the second rounds only when the
 * result is subnormal (one more rounding, of a value already within 0.7 ulp24, to the
 * coarser subnormal grid: below 1 ulp) or overflows to inf. x is clamped into
 * [-104, 89] first: exp(89) overflows to inf (> ln FLT_MAX) and exp(-104) rounds to +0
 * (< ln 2^-150) by that scaling; a mask picks NaN. */
/* w = n ln 2 + rh + rl (|w| <= 104; the steps described above) and
 * exp(rh + rl) = *s + *lo unrounded: s = 1 + rh, lo its exact rounding error plus the
 * rest (rl and the tail). Shared by exp and tanh. */
CPM_INLINE int32_t cpm_exp_parts(float w, float *s, float *lo) {
    const float Q0 = 0x1.555556p-3f, Q1 = 0x1.5554dcp-5f, Q2 = 0x1.11108ap-7f,
                Q3 = 0x1.6d5b88p-10f, Q4 = 0x1.a1abc2p-13f;
    const float SHIFT = 0x1.8p23f;
    float t = w * CPM_LOG2E + SHIFT;
    int32_t n = (int32_t)(cpm_bits(t) - cpm_bits(SHIFT));
    float fn = t - SHIFT;
    float r1 = w - fn * CPM_LN2_C1; /* exact */
    float rh, rl;
    cpm_two_sum(r1, -(fn * CPM_LN2_C2), &rh, &rl);
    rl = rl - fn * CPM_LN2_C3;
    float one = 1.0f + rh;
    float e1 = (1.0f - one) + rh; /* exact: |rh| < 1 */
    float z = rh * rh;
    float tail = 0.5f * z + (rh * z) * (Q0 + rh * (Q1 + rh * (Q2 + rh * (Q3 + rh * Q4))));
    *s = one;
    *lo = (e1 + rl) + tail;
    return n;
}

CPM_INLINE float cpm_expf_body(float x, int vec) {
    uint32_t nan = cpm_mask_v((cpm_bits(x) & 0x7fffffffu) > CPM_INF_BITS, vec);
    /* x clamped into [-104, 89] (NaN to 89): the kernel's own scaling gives exp(89) = inf
     * and exp(-104) = +0, so only NaN needs a pick */
    float s, lo;
    int32_t n = cpm_exp_parts(cpm_clampf(x, -104.0f, 89.0f, vec), &s, &lo);
    float v = s + lo;
    int32_t n1 = n >> 1;
    v = v * cpm_from_bits((uint32_t)(n1 + 127) << 23);
    v = v * cpm_from_bits((uint32_t)(n - n1 + 127) << 23);
    return cpm_from_bits(cpm_selu(nan, CPM_NAN_BITS, cpm_bits(v)));
}

CPM_NOINLINE float cpm_expf(float x) { return cpm_expf_body(x, 0); }

/* sigmoid x = 1 / (1 + exp(-x)): the operations (and so the bits) the expression
 * cp.sigmoid was traced as before it had an op of its own, in one stencil, so that per
 * call it packs four to a SIMD step like exp (issue 23.1). exp(-x) = inf for x < -88.7
 * gives exactly 0, NaN stays the quiet NaN. */
CPM_INLINE float cpm_sigmoidf_body(float x, int vec) { return 1.0f / (1.0f + cpm_expf_body(-x, vec)); }

CPM_NOINLINE float cpm_sigmoidf(float x) { return cpm_sigmoidf_body(x, 0); }

/* log x = e ln 2 + log c + log1p(r), table-driven (stencils/log_table.py): x = 2^e m
 * with m in [0.7109, 1.4219) (exponent split at OFF; subnormals scaled by 2^25 first),
 * the top 5 bits of bits(x) - OFF pick c, and r = m invc - 1 (|r| <= 1/64) is exact as
 * rh + rl: Dekker's product with invc (12 significant bits, so unsplit) and p - 1 exact
 * (Sterbenz). e C1 + logc_h is exact (both multiples of 2^-15); the subinterval holding
 * 1 has invc = 1 and logc = 0, so near 1 the result is r - r^2/2 + r^3 P(r) with r = m - 1
 * exact and no cancellation. log1p(r) - r + r^2/2 = r^3 P(r), relative error < 2^-38.
 * Returns hi + lo unrounded; precise (a constant) adds r^2/2 with its 12-bit head's exact
 * square by Fast2Sum (|hi| > r^2/2) and e ln 2 beyond C1 as e C2F, for pow: then hi + lo
 * is log x to about 2^-35 relative (measured), not normalised but with |lo| below 2^-10
 * |hi|: e C1 + log c is a Fast2Sum of
 * e C1 and logc_h + logc_l rounded, so the table's logc_l (up to 2^-17, next to a result
 * from 2^-8 on where e = 0) moves into hi. pow needs hi early (its product with y) and lo
 * late, so no renormalisation on its critical path. */
#define CPM_LOG_OFF 0x3f360000u

/* a = hi + lo with 12 significant bits each, by cutting a's bits (one and, where
 * Veltkamp's split takes three float operations): enough for Dekker's products below
 * (24 bits = 12 + 12, so each partial product is exact and the error term is the exact
 * rounding error, the same bits as with cpm_split). For log and pow only. */
CPM_INLINE void cpm_split_cut(float a, float *hi, float *lo) {
    float h = cpm_from_bits(cpm_bits(a) & 0xfffff000u);
    *hi = h;
    *lo = a - h;
}
/* rows of 16 bytes (a zero pads them): an index is one shift and one mask, where rows of
 * 12 bytes took a multiply by 3 per lane (issue 23.1) */
__attribute__((used)) static const float cpm_log_table[32][4] = { /* invc, logc_h, logc_l, 0 */
    {0x1.642p+0f, -0x1.5208p-2f, 0x1.202e7ap-18f, 0.0f},
    {0x1.5cap+0f, -0x1.3c38p-2f, -0x1.939b5ap-17f, 0.0f},
    {0x1.556p+0f, -0x1.26b8p-2f, 0x1.df6cbp-18f, 0.0f},
    {0x1.4e6p+0f, -0x1.118p-2f, 0x1.17e202p-18f, 0.0f},
    {0x1.47ap+0f, -0x1.f94p-3f, 0x1.8ec634p-17f, 0.0f},
    {0x1.414p+0f, -0x1.d1p-3f, 0x1.20376ap-17f, 0.0f},
    {0x1.3b2p+0f, -0x1.a99p-3f, 0x1.2dc748p-19f, 0.0f},
    {0x1.352p+0f, -0x1.823p-3f, -0x1.64c1a4p-23f, 0.0f},
    {0x1.2f6p+0f, -0x1.5bcp-3f, 0x1.fd076p-18f, 0.0f},
    {0x1.29ep+0f, -0x1.364p-3f, -0x1.e5682cp-18f, 0.0f},
    {0x1.24ap+0f, -0x1.11ep-3f, 0x1.c6875cp-17f, 0.0f},
    {0x1.1f8p+0f, -0x1.db6p-4f, 0x1.b1fcfp-17f, 0.0f},
    {0x1.1a8p+0f, -0x1.938p-4f, 0x1.43554ep-17f, 0.0f},
    {0x1.15cp+0f, -0x1.4ep-4f, -0x1.108a36p-20f, 0.0f},
    {0x1.112p+0f, -0x1.094p-4f, 0x1.9eb178p-18f, 0.0f},
    {0x1.0cap+0f, -0x1.8a4p-5f, -0x1.a9cc62p-17f, 0.0f},
    {0x1.084p+0f, -0x1.03cp-5f, -0x1.5d85e8p-17f, 0.0f},
    {0x1.042p+0f, -0x1.06p-6f, 0x1.ab87dap-18f, 0.0f},
    {0x1p+0f, 0x0p+0f, 0x0p+0f, 0.0f},
    {0x1.f08p-1f, 0x1.f78p-6f, 0x1.4d8b3cp-17f, 0.0f},
    {0x1.e1ep-1f, 0x1.f0cp-5f, 0x1.86088cp-20f, 0.0f},
    {0x1.d42p-1f, 0x1.6fp-4f, -0x1.5ae7f6p-17f, 0.0f},
    {0x1.c72p-1f, 0x1.e26p-4f, -0x1.f11faap-17f, 0.0f},
    {0x1.bacp-1f, 0x1.29ap-3f, -0x1.679cfcp-18f, 0.0f},
    {0x1.af2p-1f, 0x1.602p-3f, -0x1.3e2462p-17f, 0.0f},
    {0x1.a42p-1f, 0x1.951p-3f, -0x1.957feep-17f, 0.0f},
    {0x1.99ap-1f, 0x1.c8ep-3f, -0x1.068caep-20f, 0.0f},
    {0x1.8fap-1f, 0x1.fb8p-3f, -0x1.3c888ep-18f, 0.0f},
    {0x1.862p-1f, 0x1.166p-2f, 0x1.caecbap-18f, 0.0f},
    {0x1.7dp-1f, 0x1.2eap-2f, -0x1.d431eep-18f, 0.0f},
    {0x1.746p-1f, 0x1.461p-2f, 0x1.78538cp-19f, 0.0f},
    {0x1.6c2p-1f, 0x1.5dp-2f, 0x1.dc4ap-18f, 0.0f},
};

CPM_INLINE cpm_df cpm_log_tab(float x, int precise, int vec) {
    const float P0 = 0x1.555556p-2f, P1 = -0x1p-2f, P2 = 0x1.99b39p-3f, P3 = -0x1.556fd4p-3f;
    uint32_t u = cpm_bits(x);
    /* a subnormal x: the bits of x 2^25 with 25 taken off the exponent field (modulo
     * 2^32; the exponent and m below come out right, as from an exponent field of -24..0) */
    u = cpm_selu(cpm_mask_v(u < 0x00800000u, vec), cpm_bits(x * 0x1p25f) - (25u << 23), u);
    uint32_t tmp = u - CPM_LOG_OFF;
    const float *t = CPM_RODATA(cpm_log_table) + 4u * ((tmp >> 18) & 31u);
    int32_t e = (int32_t)tmp >> 23;
    float m = cpm_from_bits(u - (tmp & 0xff800000u));
    float invc = t[0], mh, ml;
    cpm_split_cut(m, &mh, &ml);
    float p = m * invc;
    float rl = (mh * invc - p) + ml * invc; /* m invc = p + rl exactly */
    float rh = p - 1.0f;                    /* exact */
    float fe = (float)e;
    if (!precise) {
        float kh = fe * CPM_LN2_C1 + t[1]; /* exact */
        float kl = fe * CPM_LN2_C2 + t[2];
        float hi = kh + rh, hl = rh - (hi - kh); /* Fast2Sum: kh = 0 or |kh| > |rh| */
        float tail = (rh * (rh * rh)) * (P0 + rh * (P1 + rh * (P2 + rh * P3)));
        float lo = hl + ((kl + rl * (1.0f - rh)) + (tail - 0.5f * (rh * rh)));
        return (cpm_df){hi, lo};
    }
    /* pow's tail in 3 terms (relative error 2^-35.2, stencils/log_table.py), a product
     * and a sum shorter than log's 4 */
    const float Q0 = 0x1.555556p-2f, Q1 = -0x1.000976p-2f, Q2 = 0x1.99b5fcp-3f;
    /* pow's form: e ln2 as e C1 (exact) + e CPM_LN2_C2F (ln 2 - C1 rounded, so no third
     * constant: e C2F and its constant's error are below 2^-36 of log x for e != 0) */
    float ch, cl, kh, ke; /* log c = ch + cl with ch its float32 rounding */
    cpm_fast_two_sum(t[1], t[2], &ch, &cl);
    /* exact as a Fast2Sum: e = 0, or |e C1| >= 0.69 > |ch| (|log c| < 0.35) */
    cpm_fast_two_sum(fe * CPM_LN2_C1, ch, &kh, &ke);
    float hi = kh + rh, hl = rh - (hi - kh); /* Fast2Sum: kh = 0 or |kh| > |rh| */
    /* rh^2 = z1 + z2: rh1 (rh cut to 12 bits) squared is exact, z2 = rh2 (rh + rh1) is
     * below 2^-11 rh^2 (its rounding is harmless), where Dekker's square took twice the
     * operations (issue 23.1); -z1/2 moves into hi by Fast2Sum (|hi| > z1/2), so lo stays
     * below about 2^-12 of hi (the tail, up to r^2/3 of a result near rh, is the largest) */
    float rh1 = cpm_from_bits(cpm_bits(rh) & 0xfffff000u), z1 = rh1 * rh1, z2 = (rh - rh1) * (rh + rh1);
    float h2, e2;
    cpm_fast_two_sum(hi, -0.5f * z1, &h2, &e2);
    float z = rh * rh; /* z1 is 2^-11 off rh^2: too coarse for the tail */
    float tail = (rh * z) * ((Q0 + rh * Q1) + z * Q2);
    /* log1p(rh + rl) - log1p(rh) = rl (1 - rh + rh^2) to 2^-24 of it; the terms that come
     * last are added last */
    float lo = ((hl + ((fe * CPM_LN2_C2F + cl) + ke)) + rl * ((1.0f - rh) + z1)) + (e2 + (tail - 0.5f * z2));
    return (cpm_df){h2, lo};
}

/* Without a branch: masks pick the results of the special inputs: -inf for +-0, NaN for
 * negatives (-inf included) and NaN, +inf for +inf. The kernel runs on every input as it
 * is (its table index is masked, garbage results of the special inputs are picked away).
 * On x86_64, where a select is three instructions (SSE2 has no blend), the special
 * result is formed beside the kernel and one select ends the kernel's path where three
 * did (issue 23.1); elsewhere a select is one or two, and the three stay. The same bits
 * either way (all 2^32 inputs: stencils/compare_bits.py 9f3a66f --funcs logf). */
CPM_INLINE float cpm_logf_body(float x, int vec) {
    uint32_t u = cpm_bits(x);
#if defined(__x86_64__)
    /* +-0, negatives, inf and NaN: u - 1 >= INF - 1 unsigned, as one signed compare */
    uint32_t special = cpm_mask_v((int32_t)(u + 0x7fffffffu) > (int32_t)0xff7ffffeu, vec);
    uint32_t value = CPM_NAN_BITS ^ (cpm_mask_v(u == CPM_INF_BITS, vec) & (CPM_NAN_BITS ^ CPM_INF_BITS)) ^
                     (cpm_mask_v((u << 1) == 0, vec) & (CPM_NAN_BITS ^ 0xff800000u));
    cpm_df r = cpm_log_tab(x, 0, vec);
    return cpm_from_bits(cpm_selu(special, value, cpm_bits(r.h + r.l)));
#else
    uint32_t zero = cpm_mask_v((u << 1) == 0, vec), nan = cpm_mask_v(u > CPM_INF_BITS, vec),
             inf = cpm_mask_v(u == CPM_INF_BITS, vec);
    cpm_df r = cpm_log_tab(x, 0, vec);
    uint32_t v = cpm_selu(inf, CPM_INF_BITS, cpm_bits(r.h + r.l));
    v = cpm_selu(nan, CPM_NAN_BITS, v);
    return cpm_from_bits(cpm_selu(zero, 0xff800000u, v)); /* -0 too: the last pick wins */
#endif
}

CPM_NOINLINE float cpm_logf(float x) { return cpm_logf_body(x, 0); }

/* 2^(j/32) = hi (1 + rlo) for j < 32 (hi rounded to float32, rlo the relative rest
 * rounded): the table of pow's exp (cpm_exp_tab; stencils/exp2_table.py reproduces it and
 * the constants). A row is 8 bytes, read as one (one load per lane where two were). */
__attribute__((used)) static const float cpm_exp2_table[32][2] = {
    {0x1p+0f, 0x0p+0f},
    {0x1.059b0ep+0f, -0x1.947414p-25f},
    {0x1.0b5586p+0f, 0x1.8d96d4p-25f},
    {0x1.11301ep+0f, -0x1.dda2fcp-25f},
    {0x1.172b84p+0f, -0x1.9c0c22p-27f},
    {0x1.1d4874p+0f, -0x1.a2fbb2p-25f},
    {0x1.2387a6p+0f, 0x1.964904p-25f},
    {0x1.29e9ep+0f, -0x1.2b0dbcp-25f},
    {0x1.306fep+0f, 0x1.125002p-25f},
    {0x1.371a74p+0f, -0x1.cde8cep-26f},
    {0x1.3dea64p+0f, 0x1.370be4p-25f},
    {0x1.44e086p+0f, 0x1.336de2p-30f},
    {0x1.4bfdaep+0f, -0x1.0a355p-25f},
    {0x1.5342b6p+0f, -0x1.c541b4p-26f},
    {0x1.5ab07ep+0f, -0x1.00d8acp-27f},
    {0x1.6247ecp+0f, -0x1.6cb284p-25f},
    {0x1.6a09e6p+0f, 0x1.26055cp-26f},
    {0x1.71f75ep+0f, 0x1.8b2bb8p-26f},
    {0x1.7a1148p+0f, -0x1.05cb44p-25f},
    {0x1.82589ap+0f, -0x1.1c2142p-26f},
    {0x1.8ace54p+0f, 0x1.67a1cap-28f},
    {0x1.93737cp+0f, -0x1.348e56p-25f},
    {0x1.9c4918p+0f, 0x1.a3b5e4p-28f},
    {0x1.a5503cp+0f, -0x1.0b7ec8p-25f},
    {0x1.ae89fap+0f, -0x1.f9c304p-27f},
    {0x1.b7f77p+0f, -0x1.e4c886p-26f},
    {0x1.c199bep+0f, -0x1.6961b4p-28f},
    {0x1.cb720ep+0f, -0x1.b5151ep-28f},
    {0x1.d5818ep+0f, -0x1.a5217cp-28f},
    {0x1.dfc974p+0f, -0x1.ab7132p-26f},
    {0x1.ea4afap+0f, 0x1.61428ep-28f},
    {0x1.f50766p+0f, -0x1.2ad5f8p-27f},
};

/* exp(wh + wl), with the bits of sign put on the result, for -104 <= wh + wl <= 89 with
 * |wl| <= 2^-11 |wh| (pow's y log|x|, not normalised) and wk = wh + wl to 2^-12 of it
 * (pow's log high part times y, ready early), table-driven: k = round(wk 32 / ln 2) by the
 * 1.5 2^23 shift, r = wh + wl - k ln2/32 with |r| <= ln2/64 + |wh + wl - wk| (below 0.03)
 * (Cody-Waite: ln2/32 = C1 + C2, C1 with 9 significant bits so k C1 is exact for |k| <=
 * 4800, wh - k C1 exact, C2 the float32 rest, whose error and k C2's rounding stay below
 * 2^-30 absolute; the rest rounds at 2^-24 of |r| < 0.03; wl, the last to come, is added
 * last), exp r = 1 + p with p = (r + r^2/2) + r^3 (1/6 + r/24) (error r^5/120 < 2^-32;
 * three Taylor terms would do for |r| <= ln2/64 but not with wk's offset),
 * and exp(wh + wl) = 2^(k/32) (1 + p) = hi + hi (p + rlo), rounded once, then scaled by
 * 2^n, n = k >> 5, in two steps as exp does: 2^(n >> 1) goes into hi's exponent field
 * (exact: hi 2^(n >> 1) is normal for |n| <= 151), 2^(n - (n >> 1)) is one product at the
 * end, exact for a normal result (a subnormal one rounds a second time, below 0.78 ulp
 * measured). Garbage w (pow's special inputs) gives garbage with no trap: unsigned sums.
 * Issue 23.1: it replaced exp's reduction and 5-term kernel with a separate path for
 * subnormal results (about 0.2 ulp more accurate there, under a bar of 2 ulp) at under
 * half the time; its second pass took a product off the longest chain (the scaling in the
 * table's hi, the table's lo relative so that it joins p before the product with hi); its
 * fifth, a constant (C3) off the reduction. stencils/exp2_table.py reproduces the table
 * and constants. */
CPM_INLINE float cpm_exp_tab(float wk, float wh, float wl, uint32_t sign) {
    const float INV = 0x1.715476p+5f, C1 = 0x1.63p-6f, C2 = -0x1.bd0106p-18f;
    const float SHIFT = 0x1.8p23f;
    float t = wk * INV + SHIFT;
    uint32_t k = cpm_bits(t) - cpm_bits(SHIFT);
    float fk = t - SHIFT;
    float r = ((wh - fk * C1) - fk * C2) + wl; /* wl, the last to come, added last */
    const float *e = CPM_RODATA(cpm_exp2_table) + 2u * (k & 31u);
    float r2 = r * r;
    uint64_t row; /* hi, rlo: little-endian on every target */
    __builtin_memcpy(&row, e, 8);
    uint32_t n1 = (uint32_t)((int32_t)k >> 6); /* n >> 1 */
    float e0 = cpm_from_bits((uint32_t)row + (n1 << 23)), e1 = cpm_from_bits((uint32_t)(row >> 32));
    /* r^2/2 joins the early sum, the cubic and quartic terms come last (Estrin: two
     * operations shorter than the quadratic's product with r^2 at the end) */
    float q = ((r + e1) + 0.5f * r2) + (r2 * r) * (0x1.555556p-3f + r * 0x1.555556p-5f);
    float v = e0 + e0 * q;
    int32_t n = (int32_t)k >> 5;
    return v * cpm_from_bits((((uint32_t)n - n1 + 127u) << 23) | sign);
}

/* C99 / IEEE powf. |x|^y = exp(y log|x|): log in double-float (above), the product
 * y log|x| as an exact product of 12-bit heads plus the rest, the table-driven exp above
 * of the double-float result. The core runs on every input as it comes (inf, NaN, 0 give garbage there, never
 * a trap); three masks from a few compares pick the special results (docs/math.md, "pow"). */
CPM_INLINE float cpm_powf_body(float x, float y, int vec) {
    uint32_t ux = cpm_bits(x), uy = cpm_bits(y);
    uint32_t ax = ux & 0x7fffffffu, ay = uy & 0x7fffffffu;
    /* y's class from n = trunc(min(|y|, 2^24)), exact in an int32 (every float from 2^23
     * on is an integer, from 2^24 on even; inf and NaN give 2^24, their rules win
     * anyway): y is an integer when n converts back to |y|, odd when n is */
    float yc = cpm_min_pos(cpm_from_bits(ay), 0x1p24f, vec);
    int32_t n = (int32_t)yc;
    uint32_t nonint = cpm_mask_v((float)n != yc, vec);
    uint32_t sign = ux & ((uint32_t)n << 31) & ~nonint; /* x < 0, y an odd integer */
    /* x = +-0, +-inf or NaN: ax - 1 >= INF - 1 unsigned, as one signed compare */
    uint32_t xbad = cpm_mask_v((int32_t)(ax + 0x7fffffffu) > (int32_t)0xff7ffffeu, vec);
    cpm_df l = cpm_log_tab(cpm_from_bits(ax), 1, vec);
    /* w = wh + wl = y log|x|: log's high part rounded to 12 bits (lh) times y's cut to 12
     * bits (yh) is exact, the rest in wl (|ll| up to about 2^-11 of |log x|, l.l included;
     * its roundings cost up to 2^-35 of w, 0.07 ulp at |w| = 104), where Dekker's product
     * of l.h and y took five more operations (issue 23.1); wh is not w rounded: k comes
     * from l.h y, ready first */
    float lh = cpm_from_bits((cpm_bits(l.h) + 0x800u) & 0xfffff000u), ll = (l.h - lh) + l.l;
    float yh = cpm_from_bits(uy & 0xfffff000u), yl = y - yh;
    float wh = lh * yh;
    float wl = lh * yl + ll * y;
    float wk = l.h * y;
    float core = cpm_exp_tab(wk, wh, wl, sign);
    /* |x|^y -> inf (else 0) as |y| grows: w > 0, i.e. |x| > 1 and y > 0 or |x| < 1 and
     * y < 0; also for x = +-0 and +-inf, whose logs in the core are -105.4 and 88.7 (an
     * exponent of -152 or 128 and m = 1), and for y = +-inf (wk = +-inf; |x| = 1 gives NaN,
     * picked away by the last mask). One compare where the sign of (1.0 - |x|) ^ y took
     * three operations (issue 23.1) */
    uint32_t grows = cpm_mask_v(wk > 0.0f, vec);
    /* 0 or inf by the side |x| is on and y's sign: w out of exp's range (|y| >= 2^32 and
     * y = +-inf included: |log|x|| >= 2^-24 for |x| != 1, so |w| > 104), x = +-0 or +-inf */
    uint32_t limit = cpm_mask_v((wh > 89.0f) | (wh < -104.0f), vec) | xbad;
    /* NaN in, or a negative finite nonzero x with a non-integer y (x = -0 and x = -inf go
     * to limit); then pow(x, +-0) = pow(1, y) = pow(-1, +-inf) = 1, even for NaN (C99's
     * first rules, picked last; |x| = 1 gives w = 0 and the core 1 exactly for finite y) */
    uint32_t nan = cpm_mask_v(__builtin_isunordered(x, y), vec) |
                   ((uint32_t)((int32_t)ux >> 31) & nonint & ~xbad);
    uint32_t one = cpm_mask_v((ay == 0) | (ux == 0x3f800000u) | ((ax == 0x3f800000u) & (ay == CPM_INF_BITS)), vec);
    /* the special result, the later pick winning, formed beside the core; then one pick
     * of it or the core's result: the core's path ends in one or and one select */
    uint32_t special = cpm_selu(one, 0x3f800000u, cpm_selu(nan, CPM_NAN_BITS, (grows & CPM_INF_BITS) | sign));
    return cpm_from_bits(cpm_selu(limit | nan | one, special, cpm_bits(core)));
}

CPM_NOINLINE float cpm_powf(float x, float y) { return cpm_powf_body(x, y, 0); }

/* ------------------------------------------------------------------ tan */

/* tan x = x + x^3 T(x^2) on [-pi/4, pi/4], minimax, relative error < 2^-27.3. On
 * r = rh + rl from the sin/cos reduction: tan(r) = th + tl in double-float (the rl
 * term is rl (1 + tan^2 rh)); odd quadrants give -1/tan(r), one Newton step on the
 * double-float. */
CPM_INLINE float cpm_tanf_body(float x, int vec) {
    const float T0 = 0x1.555556p-2f, T1 = 0x1.111106p-3f, T2 = 0x1.ba1fbcp-5f,
                T3 = 0x1.65f7aap-6f, T4 = 0x1.268764p-7f, T5 = 0x1.9c5a50p-9f,
                T6 = 0x1.3c61e4p-9f, T7 = -0x1.37bbccp-11f, T8 = 0x1.f705c0p-11f;
    uint32_t ux = cpm_bits(x), ax = ux & 0x7fffffffu;
    uint32_t nan = cpm_mask_v(ax >= CPM_INF_BITS, vec);
    uint32_t tiny = cpm_mask_v(ax < 0x39800000u, vec); /* |x| < 2^-12: x is correctly rounded */
    float rh, rl;
    uint32_t q = cpm_reduce(ax & ~nan, &rh, &rl, vec);
    float z = rh * rh;
    /* Horner's form: an Estrin form measured 1.18 ulp */
    float p = (rh * z) *
              (T0 + z * (T1 + z * (T2 + z * (T3 + z * (T4 + z * (T5 + z * (T6 + z * (T7 + z * T8))))))));
    float t0 = rh + p;
    cpm_df t = cpm_df_norm(rh, p);
    t = cpm_df_norm(t.h, t.l + (rl + rl * (t0 * t0)));
    /* odd quadrants: -1/t: q0 = -1/th, d = 1 + q0 t, result q0 (1 + d); both run (on
     * th = 1 where tiny inputs make it zero), a mask picks */
    float th = cpm_self(tiny | nan, 1.0f, t.h);
    /* |x| >= 2^20 (approximate reduction) may give th = 0 or nearly: keep -1/th finite
     * there, so nothing becomes NaN (no change below 2^20, where |th| > 2^-30) */
    uint32_t near0 = cpm_mask_v((ax >= 0x49800000u) & ((cpm_bits(th) & 0x7fffffffu) < 0x35800000u), vec);
    th = cpm_from_bits(cpm_selu(near0, 0x35800000u | (cpm_bits(th) & 0x80000000u), cpm_bits(th)));
    float q0 = -1.0f / th, pp, pe;
    cpm_two_prod(q0, th, &pp, &pe);
    float d = ((1.0f + pp) + pe) + q0 * t.l;
    uint32_t v = cpm_selu(cpm_mask_v(q & 1u, vec), cpm_bits(q0 + q0 * d), cpm_bits(t.h + t.l));
    v = cpm_selu(tiny, ax, v) ^ (ux & 0x80000000u); /* tan is odd */
    return cpm_from_bits(cpm_selu(nan, CPM_NAN_BITS, v));
}

CPM_NOINLINE float cpm_tanf(float x) { return cpm_tanf_body(x, 0); }

/* ------------------------------------------------------------------ tanh */

/* tanh |x| = E / (E + 2) with E = expm1(2|x|) as a double-float, without a branch.
 * 2|x| = n ln 2 + rh + rl by cpm_exp_parts; exp(rh + rl) = s + lo unrounded (s =
 * 1 + rh, lo its exact rounding error plus the tail), so E = (2^n s - 1) + 2^n lo with
 * 2^n s exact and its difference with 1 a TwoSum: E keeps its relative accuracy down to
 * |x| = 2^-12 (for n = 0, s - 1 is exact and lo holds the rest). The double-float
 * quotient rounds once (about 2^-40 relative before that). Below 2^-12, tanh x = x
 * rounds correctly; from 9.5 on, tanh |x| rounds to 1 (masks pick both). Odd. */
CPM_INLINE float cpm_tanhf_body(float x, int vec) {
    uint32_t ux = cpm_bits(x), ax = ux & 0x7fffffffu;
    uint32_t nan = cpm_mask_v(ax > CPM_INF_BITS, vec), one = cpm_mask_v(ax >= 0x41180000u, vec),
             tiny = cpm_mask_v(ax < 0x39800000u, vec);
    float s, lo;
    int32_t n = cpm_exp_parts(2.0f * cpm_from_bits(cpm_selu(nan | one, 0x3f800000u, ax)), &s, &lo);
    float sc = cpm_from_bits((uint32_t)(n + 127) << 23); /* 0 <= n <= 28 */
    cpm_df e = cpm_df_sum(s * sc, -1.0f);
    e = cpm_df_norm(e.h, e.l + lo * sc);
    cpm_df d = cpm_df_sum(2.0f, e.h);
    d.l += e.l;
    cpm_df q = cpm_df_div(e, d);
    uint32_t v = cpm_bits(q.h + q.l);
    v = cpm_selu(one, 0x3f800000u, v) | (ux & 0x80000000u);
    v = cpm_selu(tiny, ux, v);
    return cpm_from_bits(cpm_selu(nan, CPM_NAN_BITS, v));
}

CPM_NOINLINE float cpm_tanhf(float x) { return cpm_tanhf_body(x, 0); }

/* ------------------------------------------------------------------ asin / acos */

#define CPM_PIO2_LOF (-0x1.777a5cp-25f) /* pi/2 - CPM_PIO2_HI */
#define CPM_PI_HI 0x1.921fb6p+1f
#define CPM_PI_LO (-0x1.777a5cp-24f)

/* asin x - x = x^3 P(x^2) on [0, 1/2], minimax, relative error < 2^-34. */
CPM_INLINE float cpm_asin_tail(float x, float z) {
    const float P0 = 0x1.555556p-3f, P1 = 0x1.3332aap-4f, P2 = 0x1.6ddac0p-5f,
                P3 = 0x1.ed5d1ep-6f, P4 = 0x1.931f70p-6f, P5 = 0x1.ec2674p-8f,
                P6 = 0x1.1bd246p-5f;
    return (x * z) * (P0 + z * (P1 + z * (P2 + z * (P3 + z * (P4 + z * (P5 + z * P6))))));
}

/* For 1/2 < a <= 1: asin(s + sl) - s as a float where s + sl = sqrt((1 - a)/2) (sl the
 * exact-product correction of the rounded square root); returns s in *sp. */
CPM_INLINE float cpm_asin_half(float a, float *sp, int vec) {
    float z = (1.0f - a) * 0.5f; /* exact */
    float s = __builtin_sqrtf(z), p, pe;
    cpm_two_prod(s, s, &p, &pe);
    float sl = cpm_self(cpm_mask_v(s > 0.0f, vec), ((z - p) - pe) / (s + s), 0.0f);
    *sp = s;
    /* asin'(s) = 1/sqrt(1 - z) ~ 1 + z/2 on the tiny sl */
    return (sl + sl * (0.5f * z)) + cpm_asin_tail(s, z);
}

/* Both ranges run on every input; masks pick (and the special results). */
CPM_INLINE float cpm_asinf_body(float x, int vec) {
    uint32_t ux = cpm_bits(x), ax = ux & 0x7fffffffu;
    float a = cpm_from_bits(ax);
    float r1 = a + cpm_asin_tail(a, a * a);
    /* 1/2 < a: pi/2 - 2 asin(sqrt((1 - a)/2)) */
    float s, lo = cpm_asin_half(a, &s, vec), h, e;
    cpm_two_sum(CPM_PIO2_HI, -2.0f * s, &h, &e);
    float r2 = h + (e + (CPM_PIO2_LOF - 2.0f * lo));
    uint32_t r = cpm_bits(cpm_self(cpm_mask_v(a <= 0.5f, vec), r1, r2)) | (ux & 0x80000000u);
    r = cpm_selu(cpm_mask_v(ax < 0x39800000u, vec), ux, r); /* |x| < 2^-12: x is correctly rounded */
    return cpm_from_bits(cpm_selu(cpm_mask_v(ax > 0x3f800000u, vec), CPM_NAN_BITS, r)); /* |x| > 1, NaN */
}

CPM_NOINLINE float cpm_asinf(float x) { return cpm_asinf_body(x, 0); }

CPM_INLINE float cpm_acosf_body(float x, int vec) {
    uint32_t ux = cpm_bits(x), ax = ux & 0x7fffffffu;
    float a = cpm_from_bits(ax), h, e;
    cpm_two_sum(CPM_PIO2_HI, -x, &h, &e); /* a <= 1/2: pi/2 - asin x */
    float r1 = h + (e + (CPM_PIO2_LOF - cpm_asin_tail(x, x * x)));
    float s, lo = cpm_asin_half(a, &s, vec);
    float r2 = 2.0f * (s + lo); /* x > 1/2: 2 asin(sqrt((1 - x)/2)) */
    cpm_two_sum(CPM_PI_HI, -2.0f * s, &h, &e); /* x < -1/2: pi - 2 asin(sqrt((1 + x)/2)) */
    float r3 = h + (e + (CPM_PI_LO - 2.0f * lo));
    float r = cpm_self(cpm_mask_v(a <= 0.5f, vec), r1, cpm_self(cpm_mask_v(ux >> 31, vec), r3, r2));
    return cpm_from_bits(cpm_selu(cpm_mask_v(ax > 0x3f800000u, vec), CPM_NAN_BITS, cpm_bits(r)));
}

CPM_NOINLINE float cpm_acosf(float x) { return cpm_acosf_body(x, 0); }

/* ------------------------------------------------------------------ atan / atan2 */

/* atan(P / Q) for 0 <= P <= Q (finite, Q > 0) as a double-float, with one
 * double-float division (one float division): t = P/Q in [0, 7/16): the polynomial on
 * t; [7/16, 11/16):
 * atan(1/2) + atan(u); [11/16, 1]: pi/4 + atan(u), u = (t - c)/(1 + c t) =
 * (P - c Q)/(Q + c P) with c = 1/2 or 1: P - c Q is exact (Sterbenz), Q + c P a TwoSum.
 * The ranges are told apart by P against 7/16 Q and 11/16 Q (rounded products: a wrong
 * side at a boundary only moves u a hair past the fit's range). For tiny quotients the
 * Dekker terms may underflow, but the residual stays exact to 2^-149 against n, which
 * is 2^-32 ulp of q or less (atan2 scales Q to [2^32, 2^33)). atan u - u = u^3 A(u^2) on |u| <= 7/16, minimax, relative error < 2^-28.9. */
CPM_INLINE cpm_df cpm_atan_ratio(float P, float Q, int vec) {
    const float A0 = -0x1.555556p-2f, A1 = 0x1.99998cp-3f, A2 = -0x1.248fc4p-3f,
                A3 = 0x1.c6ae26p-4f, A4 = -0x1.6f4006p-4f, A5 = 0x1.18ccf6p-4f,
                A6 = -0x1.239866p-5f;
    uint32_t reduce = cpm_mask_v(P >= 0.4375f * Q, vec), half = cpm_mask_v(P < 0.6875f * Q, vec);
    float c = cpm_self(reduce, cpm_self(half, 0.5f, 1.0f), 0.0f);
    float n = P - c * Q; /* exact */
    cpm_df d = cpm_df_sum(Q, c * P);
    /* q = n (1/dh): one division, q within 1.5 ulp; q + ql is the quotient to 2^-46 all
     * the same, since the residual n - q dh is exact (Dekker) whatever q is */
    float y = 1.0f / d.h;
    float q = n * y, p, pe;
    cpm_two_prod(q, d.h, &p, &pe);
    float ql = (((n - p) - pe) - q * d.l) * y;
    /* atan(1/2) or pi/4 */
    float ch = cpm_self(reduce, cpm_self(half, 0x1.dac670p-2f, 0x1.921fb6p-1f), 0.0f);
    float cl = cpm_self(reduce, cpm_self(half, 0x1.586ed4p-28f, -0x1.777a5cp-26f), 0.0f);
    float z = q * q;
    float tail = (q * z) * (A0 + z * (A1 + z * (A2 + z * (A3 + z * (A4 + z * (A5 + z * A6))))));
    cpm_df s = cpm_df_sum(ch, q);
    return cpm_df_norm(s.h, s.l + (cl + ((ql - ql * z) + tail)));
}

/* (kh + kl) + sgn * r, rounded once */
CPM_INLINE float cpm_atan_finish(float kh, float kl, cpm_df r, uint32_t neg, int vec) {
    uint32_t flip = cpm_mask_v(neg, vec) & 0x80000000u;
    float rh = cpm_from_bits(cpm_bits(r.h) ^ flip), rl = cpm_from_bits(cpm_bits(r.l) ^ flip);
    cpm_df s = cpm_df_sum(kh, rh);
    return s.h + (s.l + (kl + rl));
}

CPM_INLINE float cpm_atanf_body(float x, int vec) {
    uint32_t ux = cpm_bits(x), ax = ux & 0x7fffffffu;
    float a = cpm_from_bits(ax);
    /* a <= 1: atan a; a > 1: pi/2 - atan(1/a); one atan_ratio call on a / 1 or 1 / a
     * (picked by masks), both finishes run */
    uint32_t inv = cpm_mask_v(a > 1.0f, vec);
    cpm_df t = cpm_atan_ratio(cpm_self(inv, 1.0f, a), cpm_self(inv, a, 1.0f), vec);
    float r = cpm_self(inv, cpm_atan_finish(CPM_PIO2_HI, CPM_PIO2_LOF, t, 1, vec), t.h + t.l);
    r = cpm_self(cpm_mask_v(ax >= 0x4c800000u, vec), CPM_PIO2_HI, r); /* |x| >= 2^26: pi/2 - 1/x rounds to pi/2 */
    uint32_t v = cpm_bits(r) | (ux & 0x80000000u);
    v = cpm_selu(cpm_mask_v(ax < 0x39800000u, vec), ux, v); /* |x| < 2^-12: x is correctly rounded */
    return cpm_from_bits(cpm_selu(cpm_mask_v(ax > CPM_INF_BITS, vec), CPM_NAN_BITS, v));
}

CPM_NOINLINE float cpm_atanf(float x) { return cpm_atanf_body(x, 0); }

/* v * 2^k for k in [-254, 254], exact unless the result is subnormal */
CPM_INLINE float cpm_ldexp2(float v, int32_t k) {
    int32_t k1 = k / 2;
    return (v * cpm_from_bits((uint32_t)(k1 + 127) << 23)) *
           cpm_from_bits((uint32_t)(k - k1 + 127) << 23);
}

/* C atan2f(y, x) with all C99 special cases (signed zeros, infinities). */
CPM_INLINE float cpm_atan2f_body(float y, float x, int vec) {
    uint32_t uy = cpm_bits(y), ux = cpm_bits(x);
    uint32_t ay = uy & 0x7fffffffu, ax = ux & 0x7fffffffu;
    uint32_t sy = uy & 0x80000000u, xneg = ux >> 31;
    uint32_t xm = 0u - xneg;
    /* the general case (both finite and nonzero) runs on every input, on 1 and 1 where
     * a special rule decides; masks pick the special results (float constants by bits:
     * a ternary on float constants becomes a table indexed with an absolute address on
     * x86_64) */
    uint32_t special = cpm_mask_v((ay == 0) | (ax == 0) | (ax >= CPM_INF_BITS) | (ay >= CPM_INF_BITS), vec);
    uint32_t gx = cpm_selu(special, 0x3f800000u, ax), gy = cpm_selu(special, 0x3f800000u, ay);
    /* t = min/max of the magnitudes, scaled exactly so that the larger is in [2^32, 2^33)
     * (the smaller stays normal unless t < 2^-158, where the result underflows anyway) */
    uint32_t swap = cpm_mask_v(gy > gx, vec);
    uint32_t big = cpm_selu(swap, gy, gx), small = cpm_selu(swap, gx, gy);
    float sc = cpm_self(cpm_mask_v(big < 0x00800000u, vec), 0x1p64f, 1.0f); /* both subnormal */
    float fb = cpm_from_bits(big) * sc, fs = cpm_from_bits(small) * sc;
    int32_t k = 159 - (int32_t)(cpm_bits(fb) >> 23);
    fb = cpm_ldexp2(fb, k);
    fs = cpm_ldexp2(fs, k);
    cpm_df a = cpm_atan_ratio(fs, fb, vec);
    /* x > 0: a or pi/2 - a; x < 0: pi - a or pi/2 + a */
    float r = cpm_self(swap, cpm_atan_finish(CPM_PIO2_HI, CPM_PIO2_LOF, a, !xneg, vec),
                       cpm_self(cpm_mask_v(xneg, vec), cpm_atan_finish(CPM_PI_HI, CPM_PI_LO, a, 1, vec),
                                a.h + a.l));
    uint32_t v = cpm_bits(r);
    v = cpm_selu(cpm_mask_v(ax == CPM_INF_BITS, vec), 0x40490fdbu & xm, v); /* pi or +0 */
    v = cpm_selu(cpm_mask_v((ax == CPM_INF_BITS) & (ay == CPM_INF_BITS), vec), /* 3 pi/4 or pi/4 */
                 (0x4016cbe4u & xm) | (0x3f490fdbu & ~xm), v);
    v = cpm_selu(cpm_mask_v((ax == 0) | ((ay == CPM_INF_BITS) & (ax != CPM_INF_BITS)), vec),
                 cpm_bits(CPM_PIO2_HI), v);
    /* atan2(+-0, x) = +-0 for x >= +0, +-pi for x <= -0 */
    v = cpm_selu(cpm_mask_v(ay == 0, vec), 0x40490fdbu & xm, v);
    v |= sy;
    return cpm_from_bits(cpm_selu(cpm_mask_v((ax > CPM_INF_BITS) | (ay > CPM_INF_BITS), vec), CPM_NAN_BITS, v));
}

CPM_NOINLINE float cpm_atan2f(float y, float x) { return cpm_atan2f_body(y, x, 0); }

/* ---------------------------------------------------------------- integer division */

#if CPM_NO_HW_DIVIDE
CPM_NOINLINE int32_t cpm_div_s32(int32_t x, int32_t d) {
    uint32_t negative = (uint32_t)((x ^ d) < 0);
    uint32_t ux = x < 0 ? 0u - (uint32_t)x : (uint32_t)x;
    uint32_t ud = d < 0 ? 0u - (uint32_t)d : (uint32_t)d;
    uint32_t q = 0, r = 0;
    for (int k = 31; k >= 0; k--) {
        r = (r << 1) | ((ux >> k) & 1u);
        uint32_t take = 0u - (uint32_t)(r >= ud); /* all ones when ud fits */
        r -= ud & take;
        q |= (take & 1u) << k;
    }
    return (int32_t)(negative ? 0u - q : q);
}
#endif
